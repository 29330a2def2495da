#pragma once
// The end of a Fourier layer, fused and in place, on tensors of D grid axes (T the last):
//   x <- act(T^-1(t_modes) + w(x) + u)
// with t_modes the spectral branch's kept T bins on x's block
// (DistributedSpectralConv::forward_t_modes), T^-1 the pruned inverse T transform, w the
// pointwise Conv1d w_k, u the U-Net branch's output (U-Fourier layers) or an empty tensor, and act
// the layer's activation (ReLU in the U-FNO; GELU, or none after the last layer, in the 4-D FNO).
//
// Why: all three terms are local to each column of T cells, so the layer is finished in
// cache-sized groups of columns and written back over x, whose columns are not needed again once
// their group is done. No layer output is allocated (100 MB at paper size, a third of the FNO's
// activation memory), and the inverse transform's result is summed while still in cache.
#include "decomposition/Box.hpp"
#include "decomposition/ColumnRunCopy.hpp"
#include "fft/TruncatedRealDft.hpp"
#include "operators/Linear.hpp"

namespace ufno {

// Where a row-group update may use that x is known outside a box of the block (all of T
// taken): a 4-D FNO's zero-padded grid. All: nowhere. InputInside: x is zero outside the box, so
// w(x) is only computed inside it (the first layer, whose input is the zero-padded lift).
// OutputInside: only the box's cells of the result are needed, so nothing outside it is
// computed or written (the last layer, whose output is cropped).
enum class Support { All, InputInside, OutputInside };

template <std::size_t D>
void fourier_layer_update(const GridView<D>& x, const GridView<D, complexf>& t_modes,
                          const fft::TruncatedRealDft& t_inverse, const Linear& w,
                          const GridView<D>& u, Activation act, long columns_per_chunk = 512);

// The same on first-axis rows [r0, r0 + R) of case b only, for a caller that has the layer's
// terms a few rows at a time (one rank holding the whole domain): t_modes_rows
// (1, C, R, ..., mt) is those rows' T modes (DistributedFft::t_modes_of_rows), u_rows the U-Net
// output rows, (1, C, R, ..., T), as UNet3d::forward_streamed delivers them, or an empty tensor.
template <std::size_t D>
void fourier_layer_update_rows(const GridView<D>& x, int b, int r0,
                               const GridView<D, complexf>& t_modes_rows,
                               const fft::TruncatedRealDft& t_inverse, const Linear& w,
                               const GridView<D>& u_rows, Activation act,
                               long columns_per_chunk = 512);

// The same, knowing `support` about the box `inside` of x's block (block coordinates; its T
// range is ignored). Without a U-Net term; InputInside needs w without a bias (the Fourier layers
// move it into the spectral branch: Linear::release_bias). InputInside and OutputInside give the
// same cells inside the box as the update above; OutputInside leaves x outside the box as it was.
template <std::size_t D>
void fourier_layer_update_rows(const GridView<D>& x, int b, int r0,
                               const GridView<D, complexf>& t_modes_rows,
                               const fft::TruncatedRealDft& t_inverse, const Linear& w,
                               Activation act, Support support, const dist::Box<D>& inside,
                               long columns_per_chunk = 512);

// The same on the whole block, all cases at once (the whole-tensor plan, or a grid that splits
// the first axis), knowing `support` about the box `inside` as above: t_modes as for the update
// above, `runs` inside's column runs in x's block (dist::device_column_runs, made once by the
// caller: a warm pass allocates nothing). InputInside runs the inverse transform straight into x
// (no temporary of the block's size) and w on the box's columns alone; OutputInside computes
// only the box's columns.
template <std::size_t D>
void fourier_layer_update(const GridView<D>& x, const GridView<D, complexf>& t_modes,
                          const fft::TruncatedRealDft& t_inverse, const Linear& w, Activation act,
                          Support support, const dist::Box<D>& inside,
                          const dist::DeviceColumnRuns& runs, long columns_per_chunk = 512);

// The last layer of a zero-padded grid on the box alone (the box of x's block that a crop
// keeps, T included): box_t_modes_rows (1, C, R, the box's extents of the middle axes, m) are the
// box's rows [r0, r0 + R), counted from box.lo[0], from a plan over the box
// (DistributedSpectralConv::add_box_plan), and box_t_inverse that plan's T transform (period x's
// T extent, the box's T cells). x <- act(T^-1(t_modes) + w(x)) on the box's cells; x outside the
// box is left as it was. Nothing outside the box is transformed.
template <std::size_t D>
void fourier_layer_update_box_rows(const GridView<D>& x, int b, int r0,
                                   const GridView<D, complexf>& box_t_modes_rows,
                                   const fft::TruncatedRealDft& box_t_inverse, const Linear& w,
                                   Activation act, const dist::Box<D>& box,
                                   long columns_per_chunk = 512);

// The same on all of the box's rows of every case at once (the whole-tensor plan): box_t_modes
// (B, C, the box's extents but T -> m) from the box plan (DistributedSpectralConv::
// forward_t_modes_to_box), `runs` the box's column runs in x's block.
template <std::size_t D>
void fourier_layer_update_box(const GridView<D>& x, const GridView<D, complexf>& box_t_modes,
                              const fft::TruncatedRealDft& box_t_inverse, const Linear& w,
                              Activation act, const dist::Box<D>& box,
                              const dist::DeviceColumnRuns& runs, long columns_per_chunk = 512);

}  // namespace ufno
