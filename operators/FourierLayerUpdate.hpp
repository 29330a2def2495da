#pragma once
// The end of a Fourier layer, fused and in place:
//   x <- relu(T^-1(t_modes) + w(x) + u)
// with t_modes the spectral branch's kept T bins on x's block
// (DistributedSpectralConv3d::forward_t_modes), T^-1 the pruned inverse T transform, w the
// pointwise Conv1d w_k and u the U-Net branch's output (U-Fourier layers) or an empty tensor.
//
// Why: all three terms are local to each (x, y) column of T cells, so the layer is finished in
// cache-sized groups of columns and written back over x, whose columns are not needed again once
// their group is done. No layer output is allocated (100 MB at paper size, a third of the FNO's
// activation memory), and the inverse transform's result is summed while still in cache.
#include "fft/TruncatedRealDft.hpp"
#include "operators/Linear.hpp"

namespace ufno {

void fourier_layer_update(const Tensor& x, const CTensor& t_modes,
                          const fft::TruncatedRealDft& t_inverse, const Linear& w, const Tensor& u,
                          long columns_per_chunk = 512);

// The same on X rows [r0, r0 + R) of case b only, for a caller that has the layer's terms a few
// rows at a time (one rank holding the whole domain): t_modes_rows (1, C, R, Y, mt) is those
// rows' T modes (DistributedFft3d::t_modes_of_rows), u_rows the U-Net output rows,
// (1, C, R, Y, T), as UNet3d::forward_streamed delivers them, or an empty tensor.
void fourier_layer_update_rows(const Tensor& x, int b, int r0, const CTensor& t_modes_rows,
                               const fft::TruncatedRealDft& t_inverse, const Linear& w,
                               const Tensor& u_rows, long columns_per_chunk = 512);

}  // namespace ufno
