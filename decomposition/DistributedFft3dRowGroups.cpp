// DistributedFft3d on one rank holding the whole domain, truncated R2C: the T and Y stages in
// groups of X rows. The X transform needs every row, but only after T and Y have shrunk a row
// from Y x T reals to KY x KT kept modes (208 x 32 -> 20 x 10 at paper size), so the forward
// transform never holds the T-mode tensor of the whole grid, and the inverse can hand out the
// T modes of a few rows at a time to a caller that finishes those rows (FourierLayerUpdate).
#include <algorithm>
#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/Parallel.hpp"
#include "decomposition/DistributedFft3d.hpp"

namespace ufno::dist {

namespace {
constexpr int kRowsPerGroup = 8;
}

CTensor DistributedFft3d::forward_in_row_groups(const Tensor& x) {
  const int nb = x.extent(0), nc = x.extent(1), X = n_[0], Y = n_[1], T = n_[2];
  const int KY = kn_[1], KT = kn_[2];
  const long row_modes = long(KY) * KT;  // complex values of one row after T and Y
  CTensor ky = empty_ctensor("dfft.ky", nb, nc, X, KY, KT);
  {
    LayerTimer::Scope t("  fft pruned T, Y in row groups (gemm)");
    const int G = std::min(kRowsPerGroup, X);
    CTensor kt_rows = empty_ctensor("dfft.kt_rows", 1, nc, G, Y, KT);
    CTensor ky_rows = empty_ctensor("dfft.ky_rows", 1, nc, G, KY, KT);
    for (int b = 0; b < nb; ++b)
      for (int r0 = 0; r0 < X; r0 += G) {
        const int R = std::min(G, X - r0);
        // T, every channel's rows [r0, r0 + R) at once: (nc, R Y, T) -> (nc, R Y, KT) compact.
        t_pruned_->forward_batched(x.data() + (long(b) * nc * X + r0) * Y * T, long(X) * Y * T,
                                   kt_rows.data(), long(R) * Y * KT, nc, long(R) * Y);
        // Y: (nc R, Y, KT) -> (nc R, KY, KT), then into rows [r0, r0 + R) of case b.
        y_pruned_->forward(kt_rows.data(), ky_rows.data(), long(nc) * R, KT);
        const complexf* src = ky_rows.data();
        complexf* dst = ky.data() + long(b) * nc * X * row_modes;
        ufno::parallel_for(
            "ufno::dfft_rows_scatter", Kokkos::RangePolicy<ExecSpace>(0, long(nc) * R),
            KOKKOS_LAMBDA(const int64_t i) {
              const int64_t c = i / R, r = i % R;
              const complexf* s = src + i * row_modes;
              complexf* d = dst + (c * X + r0 + r) * row_modes;
              for (long v = 0; v < row_modes; ++v) d[v] = s[v];
            });
      }
  }
  LayerTimer::Scope t("  fft pruned X, Y (gemm)");
  CTensor ct = local_spectral(nb, nc);
  x_pruned_->forward(ky.data(), ct.data(), long(nb) * nc, row_modes);
  return ct;
}

CTensor DistributedFft3d::backward_to_y_modes(const CTensor& s) {
  if (!streams_rows())
    throw std::logic_error("DistributedFft3d: backward_to_y_modes needs one rank and a pruned T");
  check_spectral_block(s);
  LayerTimer::Scope t("  fft pruned X, Y (gemm)");
  const int nb = s.extent(0), nc = s.extent(1);
  CTensor ym = empty_ctensor("idfft.ky", nb, nc, n_[0], kn_[1], kn_[2]);
  x_pruned_->backward(s.data(), ym.data(), long(nb) * nc, long(kn_[1]) * kn_[2]);
  return ym;
}

CTensor DistributedFft3d::t_modes_of_rows(const CTensor& ym, int b, int r0, int R) const {
  const int nc = ym.extent(1), X = n_[0], Y = n_[1], KY = kn_[1], KT = kn_[2];
  if (!streams_rows() || b < 0 || b >= int(ym.extent(0)) || int(ym.extent(2)) != X ||
      int(ym.extent(3)) != KY || int(ym.extent(4)) != KT || r0 < 0 || R < 1 || r0 + R > X)
    throw std::invalid_argument("DistributedFft3d: t_modes_of_rows: rows or Y-mode block " +
                                to_string(shape_of(ym)) + " out of range");
  LayerTimer::Scope t("  fft pruned Y in row groups (gemm)");
  const long row_modes = long(KY) * KT;
  CTensor rows = empty_ctensor("idfft.ky_rows", 1, nc, R, KY, KT);
  const complexf* src = ym.data() + long(b) * nc * X * row_modes;
  complexf* dst = rows.data();
  ufno::parallel_for(
      "ufno::idfft_rows_gather", Kokkos::RangePolicy<ExecSpace>(0, long(nc) * R),
      KOKKOS_LAMBDA(const int64_t i) {
        const int64_t c = i / R, r = i % R;
        const complexf* s = src + (c * X + r0 + r) * row_modes;
        complexf* d = dst + i * row_modes;
        for (long v = 0; v < row_modes; ++v) d[v] = s[v];
      });
  CTensor out = empty_ctensor("idfft.kt_rows", 1, nc, R, Y, KT);
  y_pruned_->backward(rows.data(), out.data(), long(nc) * R, KT);
  return out;
}

}  // namespace ufno::dist
