#pragma once
// Distributed 3-D FFT over the spatial axes of (B, C, X, Y, T) tensors, heFFTe style: a plan made
// once from the process grid and the global extents, then forward / backward calls batched over
// B x C. Pencils: the real input is T-local (blocks of X and Y over p1 x p2 ranks); r2c along T,
// repartition to Y-local, c2c along Y, repartition to X-local, c2c along X. With kept modes
// given, each 1-D transform is followed at once by the truncation to those modes (low bins and,
// for X and Y, the same number of high bins), so only kept modes travel; the inverse zero-pads
// before each inverse transform and runs in the reverse order. Truncated transforms are pruned
// (fft/TruncatedRealDft.hpp for the real T axis, fft/TruncatedDft.hpp for X, Y and a complex T):
// only the kept bins are ever computed, and each inverse starts from them directly, so the
// truncation and zero-padding are part of the transforms. Without kept modes it is the full,
// unnormalised r2c / c2r transform (backward includes no 1/N). Built with FftKind::C2C it is the
// complex-to-complex transform instead (T keeps low and high modes, like X and Y).
#include <array>
#include <map>
#include <memory>
#include <optional>

#include "decomposition/ProcessGrid.hpp"
#include "decomposition/Repartition.hpp"
#include "fft/Fft1dPlan.hpp"
#include "fft/TruncatedDft.hpp"
#include "fft/TruncatedRealDft.hpp"

namespace ufno::dist {

enum class FftKind { R2C, C2C };

class DistributedFft3d {
 public:
  // n: global (X, Y, T); modes: kept (mx, my, mt) or nullopt for the full transform.
  DistributedFft3d(const ProcessGrid& grid, std::array<int, 3> n,
                   std::optional<std::array<int, 3>> modes = std::nullopt,
                   ExchangeAlgorithm alg = ExchangeAlgorithm::Alltoallv,
                   FftKind kind = FftKind::R2C);

  // Real input layout (T-local blocks) and the spectral output layout (X-local), over the mode
  // index extents (KX, KY, KT): (2mx, 2my, mt) truncated, (X, Y, T/2+1) full. In the truncated
  // spectrum index k < m is bin k and k >= m is bin n - 2m + k (the negative frequencies).
  const PencilLayout& real_layout() const { return s0_; }
  const PencilLayout& spectral_layout() const { return s3t_; }
  std::array<int, 3> spectral_extents() const { return kn_; }

  CTensor forward(const Tensor& x);   // R2C: local real block -> local spectral block
  Tensor backward(const CTensor& s);  // R2C: the inverse (unnormalised)
  // R2C: the inverse up to, not including, the last step, the T transform: the T-local block
  // (B, C, lx, ly, kept T bins) of the real layout's boxes that backward() would finish. For a
  // caller that fuses that step (pruned_t()->backward...) into its own work.
  CTensor backward_to_t_modes(const CTensor& s);

  // One rank holding the whole domain, truncated R2C: forward() then runs the T and Y stages in
  // groups of X rows (no T-mode tensor of the whole grid, 62 MB at paper size), and a caller can
  // stop the inverse after X and finish it row group by row group:
  //   backward_to_y_modes(s)       the inverse X stage: (B, C, X, KY, KT);
  //   t_modes_of_rows(ym, b, r, R) the inverse Y stage of rows [r, r + R) of case b:
  //                                (1, C, R, Y, KT), what backward_to_t_modes holds for them.
  bool streams_rows() const { return whole_domain_ && t_pruned_ != nullptr; }
  CTensor backward_to_y_modes(const CTensor& s);
  CTensor t_modes_of_rows(const CTensor& y_modes, int b, int r0, int rows) const;
  // The pruned T transform of a truncated R2C plan, or nullptr.
  const fft::TruncatedRealDft* pruned_t() const { return t_pruned_.get(); }
  CTensor forward(const CTensor& x);       // C2C: local complex block -> local spectral block
  CTensor backward_c2c(const CTensor& s);  // C2C: the inverse (unnormalised)

  // Cells of one (B, C) slice this rank sends in each repartition: forward T->Y and Y->X
  // pencils, backward X->Y and Y->T.
  std::array<long, 4> cells_sent() const {
    return {r1_->cells_sent(), r2_->cells_sent(), r2b_->cells_sent(), r1b_->cells_sent()};
  }

 private:
  struct LocalPlans {
    std::unique_ptr<fft::Fft1dPlan> t_fwd, y_fwd, x_fwd, x_bwd, y_bwd, t_bwd;
  };
  LocalPlans& plans(long nlead);
  void run(std::unique_ptr<fft::Fft1dPlan>& p, void* in, void* out);
  void check_kind(FftKind k, const char* call) const;
  // The stages after T: from the T-transformed block (layout s1) to the spectral block, and back.
  CTensor forward_yx(CTensor a, LocalPlans& p);
  CTensor backward_xy(const CTensor& s, LocalPlans& p);

 public:
  // Public only for nvcc: an extended __host__ __device__ lambda (KOKKOS_LAMBDA) needs a public
  // enclosing function in a GPU build.
  CTensor forward_in_row_groups(const Tensor& x);  // streams_rows() only

 private:
  void check_spectral_block(const CTensor& s) const;
  CTensor local_spectral(int nb, int nc) const;  // this rank's spectral block, not zero-filled

  MPI_Comm comm_;
  int rank_;
  FftKind kind_;
  std::array<int, 3> n_, kn_;  // global extents; kept mode counts (KX, KY, KT)
  std::array<int, 3> low_, high_;
  bool whole_domain_ = false;  // one rank holds every cell: repartitions are identities
  PencilLayout s0_, s1_, s2_, s2t_, s3_, s3t_;
  std::unique_ptr<Repartition<complexf>> r1_, r2_, r2b_, r1b_;
  std::unique_ptr<fft::TruncatedRealDft> t_pruned_;         // truncated R2C only
  std::unique_ptr<fft::TruncatedDft> y_pruned_, x_pruned_;  // truncated transforms
  std::map<long, LocalPlans> plans_;
};

}  // namespace ufno::dist
