// DistributedFft on one rank holding the whole domain, truncated R2C: every stage but the first
// axis's in groups of first-axis rows. The first axis's transform needs every row, but only after
// the other axes have shrunk a row from its real cells to its kept modes (208 x 32 -> 20 x 10 at
// the U-FNO's paper size), so the forward transform never holds the T-mode tensor of the whole
// grid, and the inverse can hand out the T modes of a few rows at a time to a caller that
// finishes those rows (FourierLayerUpdate).
#include <algorithm>
#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/Parallel.hpp"
#include "decomposition/DistributedFft.hpp"

namespace ufno::dist {

namespace {
constexpr int kRowsPerGroup = 8;

template <std::size_t D>
long product(const std::array<int, D>& e, std::size_t from, std::size_t to) {
  long p = 1;
  for (std::size_t a = from; a < to; ++a) p *= e[a];
  return p;
}

// Copies `rows` runs of `run` values: run i from src + src_at(i) to dst + dst_at(i), where the
// index maps are "(c, r) of (C, R) rows" into two row-major arrays of different row counts.
void copy_rows(const complexf* src, long src_rows, long src_r0, complexf* dst, long dst_rows,
               long dst_r0, long channels, long rows, long run, const char* label) {
  ufno::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(0, channels * rows), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t c = i / rows, r = i % rows;
        const complexf* s = src + (c * src_rows + src_r0 + r) * run;
        complexf* d = dst + (c * dst_rows + dst_r0 + r) * run;
        for (long v = 0; v < run; ++v) d[v] = s[v];
      });
}
}  // namespace

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::forward_in_row_groups(const Real& x) {
  const int nb = x.extent(0), nc = x.extent(1), X = n_[0], KT = kn_[D - 1];
  const long row_cells = product(n_, 1, D), mid = product(n_, 1, D - 1);
  const long row_modes = product(kn_, 1, D);  // complex values of one row after all but axis 0
  Complex first = make_grid_view<D, complexf>("dfft.rows", nb, nc,
                                              stage_[0].before.box(rank_).extents(), false);
  {
    LayerTimer::Scope t("  fft pruned axes in row groups (gemm)");
    const int G = std::min(kRowsPerGroup, X);
    // Pruned axes only shrink a row, so its T-mode form is the largest a group ever is.
    Kokkos::View<complexf*, DeviceSpace> buf_a(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "dfft.group_a"), long(nc) * G * mid * KT);
    Kokkos::View<complexf*, DeviceSpace> buf_b(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "dfft.group_b"), long(nc) * G * mid * KT);
    for (int b = 0; b < nb; ++b)
      for (int r0 = 0; r0 < X; r0 += G) {
        const int R = std::min(G, X - r0);
        // T, every channel's rows [r0, r0 + R) at once -> (nc, R, n_1 .. n_{D-2}, KT) compact.
        t_pruned_->forward_batched(x.data() + (long(b) * nc * X + r0) * row_cells,
                                   long(X) * row_cells, buf_a.data(), long(R) * mid * KT, nc,
                                   long(R) * mid);
        complexf *cur = buf_a.data(), *next = buf_b.data();
        for (std::size_t a = D - 2; a >= 1; --a) {  // the middle axes, last to second
          stage_[a].pruned->forward(cur, next, long(nc) * R * product(n_, 1, a),
                                    product(kn_, a + 1, D));
          std::swap(cur, next);
        }
        copy_rows(cur, R, 0, first.data() + long(b) * nc * X * row_modes, X, r0, nc, R,
                  row_modes, "ufno::dfft_rows_scatter");
      }
  }
  LayerTimer::Scope t("  fft pruned axes (gemm)");
  Complex out = make_grid_view<D, complexf>("dfft.spectrum", nb, nc,
                                            spectral_layout().box(rank_).extents(), false);
  stage_[0].pruned->forward(first.data(), out.data(), long(nb) * nc, row_modes);
  return out;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::backward_first_axis(const Complex& s) {
  if (!streams_rows())
    throw std::logic_error("DistributedFft: backward_first_axis needs one rank and a pruned T");
  check_block(spectral_layout(), grid_extents<D>(s), "spectral");
  LayerTimer::Scope t("  fft pruned axes (gemm)");
  const int nb = s.extent(0), nc = s.extent(1);
  Complex first = make_grid_view<D, complexf>("idfft.rows", nb, nc,
                                              stage_[0].before.box(rank_).extents(), false);
  stage_[0].pruned->backward(s.data(), first.data(), long(nb) * nc, product(kn_, 1, D));
  return first;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::t_modes_of_rows(const Complex& first, int b,
                                                                       int r0, int R) const {
  const int nc = first.extent(1), X = n_[0];
  const Extents expect = stage_[0].before.box(rank_).extents();
  if (!streams_rows() || b < 0 || b >= int(first.extent(0)) || grid_extents<D>(first) != expect ||
      r0 < 0 || R < 1 || r0 + R > X)
    throw std::invalid_argument("DistributedFft: t_modes_of_rows: rows or first-axis block " +
                                shape_string(first) + " out of range");
  LayerTimer::Scope t("  fft pruned axes in row groups (gemm)");
  const long row_modes = product(kn_, 1, D);
  Extents e = kn_;  // the group's extents as its middle axes are inverted: (R, ..., KT)
  e[0] = R;
  Complex cur = make_grid_view<D, complexf>("idfft.group", 1, nc, e, false);
  copy_rows(first.data() + long(b) * nc * X * row_modes, X, r0, cur.data(), R, 0, nc, R,
            row_modes, "ufno::idfft_rows_gather");
  for (std::size_t a = 1; a + 1 < D; ++a) {  // the middle axes, second to last
    const long outer = long(nc) * R * product(n_, 1, a), inner = product(kn_, a + 1, D);
    e[a] = n_[a];
    Complex next = make_grid_view<D, complexf>("idfft.group", 1, nc, e, false);
    stage_[a].pruned->backward(cur.data(), next.data(), outer, inner);
    cur = next;
  }
  return cur;
}

template class DistributedFft<3>;
template class DistributedFft<4>;

}  // namespace ufno::dist
