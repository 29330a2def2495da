#pragma once
// Distributed FFT over the D grid axes of (B, C, grid...) tensors (D = 3: the U-FNO's X, Y, T;
// D = 4: the 4-D FNO's A1, A2, A3, T), heFFTe style: a plan made once from the process grid and
// the global extents, then forward / backward calls batched over B x C.
//
// Pencils: the real input is T-local (the last axis; the process grid splits the others). The
// transform runs axis by axis from the last to the first; before each axis a repartition makes
// it local, moving its part count onto the axis just transformed, so the layout before axis a has
// parts (p_0 .. p_{a-1}, 1, p_a .. p_{D-2}) and the spectrum ends A1-local (first axis local).
// With kept modes given, each 1-D transform keeps only those (low bins and, except on the real
// T axis, the same number of high bins), so only kept modes travel; transforms are then pruned
// (fft/TruncatedRealDft.hpp on T, fft/TruncatedDft.hpp on the other axes): only kept bins are
// computed and each inverse starts from them, so truncation and zero-padding are part of the
// transforms. Without kept modes it is the full, unnormalised r2c / c2r (backward has no 1/N),
// on FFT plans. Built with FftKind::C2C it is complex-to-complex (T keeps low and high modes).
//
// A window (truncated plans only): the grid of n cells is the box [offset, offset + n) of a
// larger periodic grid, zero outside it, and the spectrum is that larger grid's. The real side
// holds only the box: forward() reads it, backward() writes only it (fft/TruncatedDft.hpp). A
// zero-padded FNO's first layer transforms its unpadded interior, and its last layer computes
// only the cells that the crop keeps; the kept modes, the spectral layout and the mode multiply
// are those of the padded grid's plan.
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/ExecutionPlan.hpp"
#include "decomposition/ProcessGrid.hpp"
#include "decomposition/Repartition.hpp"
#include "fft/Fft1dPlan.hpp"
#include "fft/TruncatedDft.hpp"
#include "fft/TruncatedRealDft.hpp"

namespace ufno::dist {

enum class FftKind { R2C, C2C };

template <std::size_t D>
class DistributedFft {
 public:
  static_assert(D >= 2, "DistributedFft: at least two grid axes");
  using Extents = std::array<int, D>;
  using Real = GridView<D, float>;
  using Complex = GridView<D, complexf>;
  using Layout = PencilLayout<D>;

  // The box [offset, offset + n) of a periodic grid of extents `period`, zero outside it.
  struct Window {
    Extents period{}, offset{};
  };
  // n: global extents; modes: kept per axis or nullopt for the full transform. The grid must
  // have D axes and leave the last one whole. With a window, n is the box's extents and modes
  // are kept of the period (a window needs modes).
  DistributedFft(const ProcessGrid& grid, Extents n, std::optional<Extents> modes = std::nullopt,
                 ExchangeAlgorithm alg = ExchangeAlgorithm::Alltoallv, FftKind kind = FftKind::R2C,
                 std::optional<Window> window = std::nullopt);

  // Real input layout (T-local blocks) and the spectral output layout (A1-local), over the mode
  // index extents: (2 m_0, ..., 2 m_{D-2}, m_T) truncated, (n_0, ..., n_T/2+1) full. In the
  // truncated spectrum index k < m is bin k and k >= m is bin n - 2m + k (negative frequencies).
  const Layout& real_layout() const { return stage_.back().before; }
  const Layout& spectral_layout() const { return stage_.front().after; }
  Extents spectral_extents() const { return kn_; }
  const Extents& extents() const { return n_; }
  // The periodic grid's extents: extents() without a window.
  const Extents& period() const { return period_; }

  Complex forward(const Real& x);   // R2C: local real block -> local spectral block
  Real backward(const Complex& s);  // R2C: the inverse (unnormalised)
  // R2C: the inverse up to, not including, the last step, the T transform: the kept T bins on
  // the real layout's block, (B, C, local extents but T -> m_T), that pruned_t()->backward turns
  // into backward()'s result. For a caller that fuses that step into its own work.
  Complex backward_to_t_modes(const Complex& s);
  Complex forward(const Complex& x);       // C2C: local complex block -> local spectral block
  Complex backward_c2c(const Complex& s);  // C2C: the inverse (unnormalised)

  // A grid that leaves the first axis whole (one rank, or PA = 1), truncated R2C: forward()
  // then runs every stage but the first axis's in groups of first-axis rows, repartitions
  // included (no T-mode tensor of the whole block), and a caller can stop the inverse after the
  // first axis and finish it a row group at a time:
  //   backward_first_axis(s)        the inverse A1 stage: (B, C, n_0, this rank's block of the
  //                                 other axes' kept modes);
  //   t_modes_of_rows(f, b, r, R)   the inverse of the middle axes for rows [r, r + R) of case
  //                                 b: (1, C, R, local extents, m_T), backward_to_t_modes' rows.
  // Both are collective when the grid has several ranks: every rank calls them for the same
  // rows in the same order.
  // Only on the streaming execution plan (core/ExecutionPlan.hpp): the whole-tensor plan
  // transforms whole blocks.
  bool streams_rows() const {
    return first_axis_whole_ && kind_ == FftKind::R2C && truncated_ &&
           execution_plan().streams_rows;
  }
  Complex backward_first_axis(const Complex& s);
  Complex t_modes_of_rows(const Complex& first, int b, int r0, int rows) const;
  // The pruned T transform of a truncated R2C plan, or nullptr.
  const fft::TruncatedRealDft* pruned_t() const { return t_pruned_.get(); }

  // Cells of one (B, C) slice this rank sends in each repartition: the forward ones in order
  // (before axis D-2, ..., before axis 0), then the backward ones in order.
  std::vector<long> cells_sent() const;

  // Public only for nvcc: an extended __host__ __device__ lambda (KOKKOS_LAMBDA) needs a public
  // enclosing function in a GPU build.
  Complex forward_in_row_groups(const Real& x);  // streams_rows() only

 private:
  // Axis a's stage: the a-local layouts before and after transforming a, the repartitions from
  // `after` to the next stage's `before` (axis a - 1) and back, and the 1-D transforms.
  struct Stage {
    Layout before, after;
    std::unique_ptr<Repartition<complexf, D>> to_next, from_next;
    std::unique_ptr<fft::TruncatedDft> pruned;  // truncated complex axes
  };
  // The stages' repartitions on R first-axis rows (streams_rows() only): to_next[a] and
  // from_next[a] as in Stage, for a = 2 .. D-1, over layouts whose first axis has R cells.
  struct RowGroupPlan {
    std::array<std::unique_ptr<Repartition<complexf, D>>, D> to_next, from_next;
    std::array<Layout, D> before, after;
  };
  const RowGroupPlan& row_plan(int rows) const;
  struct Plans {  // full transforms, per batch size
    std::array<std::unique_ptr<fft::Fft1dPlan>, D> fwd, bwd;
  };
  Plans& plans(long nlead);
  // Full R2C: runs of consecutive axes whose stages share one layout (no data moves between
  // them) are transformed as one multi-dimensional FFT where the backend has those
  // (fft::fft_multi_axis), as FFTW-MPI transforms the axes a rank holds whole in one go. The
  // groups are (lowest, highest axis), from the one holding T down; none on other plans.
  std::vector<std::array<std::size_t, 2>> groups_;
  struct GroupPlan {
    std::unique_ptr<fft::Fft1dPlan> fwd, bwd;
  };
  std::map<long, std::vector<GroupPlan>> group_plans_;
  std::vector<GroupPlan>& group_plans(long nlead);
  Complex forward_grouped(const Real& x);
  Real backward_grouped(const Complex& s);
  static fft::Batch1d axis_batch(long nlead, const Extents& e, std::size_t a);
  void check_kind(FftKind k, const char* call) const;
  void check_block(const Layout& l, const Extents& e, const char* what) const;
  // The complex axes D-2 .. 0 of the forward transform, from stage D-1's `after` block.
  Complex forward_complex_axes(Complex a, std::size_t from, long nlead);
  // The inverse of complex axes 0 .. upto, from the spectral block, ending in stage upto's
  // `before` layout moved on to stage upto + 1's `after` layout.
  Complex backward_complex_axes(Complex s, std::size_t upto, long nlead);
  // Along one axis; a full transform runs in place when `in_place` (a is the plan's own tensor).
  Complex transform_axis(const Complex& a, std::size_t axis, bool forward, long nlead,
                         bool in_place);

  MPI_Comm comm_;
  int rank_;
  FftKind kind_;
  bool truncated_;
  Extents n_, period_, kn_, low_, high_;
  bool first_axis_whole_ = false;  // the grid does not split the first axis
  ExchangeAlgorithm alg_;
  Extents parts_{};  // the grid's parts per axis
  mutable std::map<int, RowGroupPlan> row_plans_;
  std::array<Stage, D> stage_;
  std::unique_ptr<fft::TruncatedRealDft> t_pruned_;  // truncated R2C only
  std::map<long, Plans> plans_;
};

}  // namespace ufno::dist
