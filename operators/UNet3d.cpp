#include "operators/UNet3d.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/Workspace.hpp"
#include "operators/RowSlab.hpp"
#include "operators/SubpixelJoin.hpp"

namespace ufno {

UNet3d UNet3d::load(const WeightSource& w, const std::string& p, int c, double eps, float slope,
                    bool bf16) {
  UNet3d u;
  u.p_.conv1 = Conv3d::load_block(w, p + ".conv1", c, c, 2, eps, slope, bf16);
  u.p_.conv2 = Conv3d::load_block(w, p + ".conv2", c, c, 2, eps, slope, bf16);
  u.p_.conv2_1 = Conv3d::load_block(w, p + ".conv2_1", c, c, 1, eps, slope, bf16);
  u.p_.conv3 = Conv3d::load_block(w, p + ".conv3", c, c, 2, eps, slope, bf16);
  u.p_.conv3_1 = Conv3d::load_block(w, p + ".conv3_1", c, c, 1, eps, slope, bf16);
  u.p_.deconv2 = ConvTranspose3d::load_block(w, p + ".deconv2", c, c, slope, bf16);
  u.p_.deconv1 = ConvTranspose3d::load_block(w, p + ".deconv1", 2 * c, c, slope, bf16);
  u.p_.deconv0 = ConvTranspose3d::load_block(w, p + ".deconv0", 2 * c, c, slope, bf16);
  u.p_.output = Conv3d::load_plain(w, p + ".output_layer", 2 * c, c, 3, bf16);
  u.conv1_rows_ = u.p_.conv1.with_padding_x(0);
  u.output_rows_ = u.p_.output.with_padding_x(0);
  const auto& os = u.p_.output.spec();
  if (os.kernel == 3 && os.stride == 1 && os.padding == 1 && os.activation == Activation::None) {
    u.plane_output_ = backend::PlaneConv3d(2 * c, c, u.p_.output.weights(), u.p_.output.bias());
    u.set_plane_conv(backend::PlaneConv3d::chosen_by_default());
  }
  for (const ConvTranspose3d* d : {&u.p_.deconv2, &u.p_.deconv1, &u.p_.deconv0})
    if (!d->has_parity_form())
      throw std::invalid_argument("UNet3d: " + p + ": transposed convolutions must be k4 s2");
  return u;
}

Tensor UNet3d::forward(const Tensor& x) const {
  const int B = x.extent(0), X = x.extent(2), Y = x.extent(3), T = x.extent(4);
  const int Co = p_.output.spec().out_channels;
  Tensor out = temporary_tensor("unet.out", B, Co, X, Y, T);
  forward_streamed(x, [&](int b, int r0, const Tensor& o) {
    const long n = long(o.extent(2)) * Y * T;  // floats of one channel's rows
    const float* src = o.data();
    float* dst = out.data() + (long(b) * Co * X + r0) * Y * T;
    ufno::parallel_runs(
        "ufno::unet_out_rows", Co, n, KOKKOS_LAMBDA(const int64_t c, int64_t v0, int64_t v1) {
          for (int64_t v = v0; v < v1; ++v) dst[c * X * Y * T + v] = src[c * n + v];
        });
  });
  return out;
}

void UNet3d::forward_streamed(const Tensor& x, const RowSink& sink) const {
  for (int a = 2; a < 5; ++a)
    if (x.extent(a) % 8 != 0)
      throw std::invalid_argument("UNet3d: extents of " + to_string(shape_of(x)) +
                                  " must be divisible by 8");
  // Inside the U-Net every tensor is channels last, the convolution kernels' own layout: only
  // the input and the output are converted. The decoder's transposed convolutions run in
  // sub-pixel form, and each join writes the next convolution's input in one pass.
  using Scope = LayerTimer::Scope;
  constexpr auto last = backend::Layout::ChannelsLast;
  Tensor e1, e2, e3, join;
  {
    Scope t("  u-net encoder convs");
    e1 = conv1_in_slabs(x);
    e2 = p_.conv2_1.forward(p_.conv2.forward(e1, last, last), last, last);
    e3 = p_.conv3_1.forward(p_.conv3.forward(e2, last, last), last, last);
  }
  {
    Scope t("  u-net decoder deconvs + joins");
    join = join_skip_and_upsampled(e2, last, p_.deconv2.parity_outputs(e3, last),
                                   p_.deconv2.spec().padding);
    e2 = e3 = Tensor();
    join = join_skip_and_upsampled(e1, last, p_.deconv1.parity_outputs(join, last),
                                   p_.deconv1.spec().padding);
    e1 = Tensor();
  }
  Scope t("  u-net top level in slabs (deconv0, join, output conv; the sink's work included)");
  top_level_in_slabs(x, join, sink);
}

Tensor UNet3d::conv1_in_slabs(const Tensor& x) const {
  constexpr auto last = backend::Layout::ChannelsLast;
  const auto& s = p_.conv1.spec();
  const int B = x.extent(0), X = x.extent(2), st = s.stride, p = s.padding, k = s.kernel;
  const int n0 = backend::conv_output_extent(s, X, 0),
            n1 = backend::conv_output_extent(s, x.extent(3)),
            n2 = backend::conv_output_extent(s, x.extent(4)), C = s.out_channels;
  Tensor e1 = temporary_tensor("unet.conv1", B, n0, n1, n2, C);
  const long row = long(n1) * n2 * C;  // floats in one X row of e1
  const int slab = slab_rows(n0);
  for (int b = 0; b < B; ++b)
    for (int k0 = 0; k0 < n0; k0 += slab) {
      const int k1 = std::min(k0 + slab, n0);
      // Output rows [k0, k1) read input rows [k0 st - p, (k1 - 1) st - p + k).
      const int j0 = k0 * st - p, J = (k1 - 1 - k0) * st + k;
      const Tensor dst(e1.data() + (long(b) * n0 + k0) * row, 1, k1 - k0, n1, n2, C);
      conv1_rows_.forward_into(channels_last_rows(x, b, j0, J), dst, last, last);
    }
  return e1;
}

namespace {
// n floats from src to dst, threaded (parity-output rows are a few MB).
void copy_rows(const float* src, float* dst, long n) {
  ufno::parallel_for(
      "ufno::unet_copy_rows", Kokkos::RangePolicy<ExecSpace>(0, n),
      KOKKOS_LAMBDA(const int64_t i) { dst[i] = src[i]; });
}
}  // namespace

Tensor UNet3d::parity_rows(const Tensor& cat1, int b, int q0, int q1, ParityCarry& carry) const {
  using Scope = LayerTimer::Scope;
  const int n0 = cat1.extent(1), n1 = cat1.extent(2), n2 = cat1.extent(3), Cc = cat1.extent(4);
  const int Cp = 8 * p_.deconv0.spec().out_channels;
  const long row = long(n1) * n2 * Cc;                 // floats in one X row of cat1
  const long part_row = long(n1 + 1) * (n2 + 1) * Cp;  // floats in one parity-output row
  const float* cb = cat1.data() + long(b) * n0 * row;
  Tensor parts = temporary_tensor("unet.parity_rows", 1, q1 - q0, n1 + 1, n2 + 1, Cp);
  int first = q0;  // the first parity row still to compute
  if (carry.index == q0 && q1 > q0) {
    copy_rows(carry.row.data(), parts.data(), part_row);
    first = q0 + 1;
  }
  if (first < q1) {
    Scope t("    top level: deconv0 parity rows");
    // Parity rows [first, q1) read cat1 rows [first - 1, q1): zero outside the grid.
    Tensor rows = temporary_tensor("unet.cat1_rows", 1, q1 - first + 1, n1, n2, Cc);
    float* r = rows.data();
    ufno::parallel_runs(
        "ufno::unet_rows", q1 - first + 1, row,
        KOKKOS_LAMBDA(const int64_t k, int64_t i0, int64_t i1) {
          const long q = first - 1 + k;
          for (int64_t i = i0; i < i1; ++i)
            r[k * row + i] = q >= 0 && q < n0 ? cb[q * row + i] : 0.f;
        });
    const Tensor fresh(parts.data() + (first - q0) * part_row, 1, q1 - first, n1 + 1, n2 + 1, Cp);
    p_.deconv0.parity_outputs_of_rows_into(rows, fresh);
  }
  if (q1 > q0 && carry.row.data()) {  // a carry only where another slab follows
    copy_rows(parts.data() + (q1 - 1 - q0) * part_row, carry.row.data(), part_row);
    carry.index = q1 - 1;
  }
  return parts;
}

void UNet3d::top_level_in_slabs(const Tensor& x, const Tensor& cat1, const RowSink& sink) const {
  using Scope = LayerTimer::Scope;
  constexpr auto last = backend::Layout::ChannelsLast;
  const int B = x.extent(0), Cs = x.extent(1), X = x.extent(2), Y = x.extent(3), T = x.extent(4);
  const int n1 = cat1.extent(2), n2 = cat1.extent(3);
  const int p = p_.deconv0.spec().padding;
  const int Co = p_.output.spec().out_channels;
  const int rows = slab_rows(X);
  // The plane convolution (a host kernel of the streaming plan) and its input, reused by every
  // slab: its zero borders are written once.
  const bool plane = use_plane_conv_ && execution_plan().streams_rows;
  const PaddedSlab slab =
      plane ? PaddedSlab(Cs + p_.deconv0.spec().out_channels, rows + 2, Y, T) : PaddedSlab();
  ParityCarry carry;
  if (rows < X)  // slabs share a parity row; one slab has nothing to carry
    carry.row = temporary_tensor("unet.parity_carry", 1, 1, n1 + 1, n2 + 1,
                                 8 * p_.deconv0.spec().out_channels);
  for (int b = 0; b < B; ++b) {
    const Tensor xb(x.data() + long(b) * Cs * X * Y * T, 1, Cs, X, Y, T);
    carry.index = -1;  // nothing carried into a new case
    // A slab's output waits until the next slab has read its input rows: slab [i0, i1) reads
    // input rows i0 - 1 .. i1, so rows before i0 are free once its join exists.
    Tensor pending;
    int pending_r0 = 0;
    for (int i0 = 0; i0 < X; i0 += rows) {
      const int i1 = std::min(i0 + rows, X);
      // Output rows [i0, i1) read join rows [i0 - 1, i1 + 1), which read parity-output rows
      // [q0, q1), which read cat1 rows [q0 - 1, q1): zero where outside the grid.
      const int j0 = i0 - 1, J = i1 - i0 + 2;
      const int g_lo = std::max(j0, 0), g_hi = std::min(j0 + J, X);
      const int q0 = (g_lo + p) >> 1, q1 = ((g_hi - 1 + p) >> 1) + 1;
      Tensor parts = parity_rows(cat1, b, q0, q1, carry);
      Tensor joined;
      {
        Scope t("    top level: joins");
        if (plane)
          join_rows_into(xb, parts, q0, j0, J, p, slab);
        else
          joined = join_rows(xb, parts, q0, j0, J, p);
      }
      parts = Tensor();
      if (pending.data()) {
        Scope t("    top level: the sink (the layers' ends)");
        sink(b, pending_r0, pending);
      }
      Scope t("    top level: output convs");
      if (plane) {
        pending = temporary_tensor("unet.out_rows", 1, Co, i1 - i0, Y, T);
        plane_output_.forward(slab, pending);
      } else {
        // The sink takes channels-first rows: oneDNN writes them so (reordering internally).
        pending = output_rows_.forward(joined, last, backend::Layout::ChannelsFirst);
      }
      pending_r0 = i0;
    }
    if (pending.data()) {
      Scope t("    top level: the sink (the layers' ends)");
      sink(b, pending_r0, pending);
    }
  }
}

}  // namespace ufno
