#include "operators/ConvTranspose3d.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

#include <stdexcept>

namespace ufno {

ConvTranspose3d::ConvTranspose3d(backend::ConvSpec spec, const std::vector<float>& tw,
                                 std::vector<float> bias)
    : spec_(spec) {
  spec_.transposed = true;
  const std::size_t I = spec.in_channels, O = spec.out_channels;
  const std::size_t K = spec.kernel, k3 = K * K * K;
  torch_weights_ = tw;
  bias_ = std::move(bias);
  if (K == 4 && spec.stride == 2 && spec.padding <= 1) {
    // One stride-1 kernel-2 convolution with 8 x O output channels, channel r * O + o holding
    // parity r of output channel o. Parity r along an axis: tap k of the kernel-2 convolution
    // (input m - 1 + k) is the transposed kernel's index a = r + 2 (k = 0) or r (k = 1).
    backend::ConvSpec c = spec_;
    c.transposed = false;
    c.kernel = 2;
    c.stride = 1;
    c.padding = 1;
    c.out_channels = 8 * int(O);
    std::vector<float> w(8 * O * I * 8), b;
    for (int r = 0; r < 8; ++r) {
      const int rr[3] = {r >> 2, (r >> 1) & 1, r & 1};
      for (std::size_t o = 0; o < O; ++o)
        for (std::size_t i = 0; i < I; ++i)
          for (int kx = 0; kx < 2; ++kx)
            for (int ky = 0; ky < 2; ++ky)
              for (int kt = 0; kt < 2; ++kt) {
                const int ax = kx ? rr[0] : rr[0] + 2, ay = ky ? rr[1] : rr[1] + 2,
                          at = kt ? rr[2] : rr[2] + 2;
                w[((((r * O + o) * I + i) * 2 + kx) * 2 + ky) * 2 + kt] =
                    tw[(((i * O + o) * K + ax) * K + ay) * K + at];
              }
      b.insert(b.end(), bias_.begin(), bias_.end());
    }
    parity_ = backend::make_conv_primitive(c, w, b);
    c.padding_x = 0;  // slabs of X rows bring their halo rows along
    parity_rows_ = backend::make_conv_primitive(c, w, b);
    return;
  }
  std::vector<float> w(tw.size());
  for (std::size_t i = 0; i < I; ++i)
    for (std::size_t o = 0; o < O; ++o)
      for (std::size_t k = 0; k < k3; ++k) w[(o * I + i) * k3 + k] = tw[(i * O + o) * k3 + k];
  prim_ = backend::make_conv_primitive(spec_, w, bias_);
}

ConvTranspose3d ConvTranspose3d::with_padding(int padding) const {
  backend::ConvSpec s = spec_;
  s.padding = padding;
  return ConvTranspose3d(s, torch_weights_, bias_);
}

ConvTranspose3d ConvTranspose3d::load_block(const WeightSource& w, const std::string& prefix,
                                            int in, int out, float slope, bool bf16) {
  backend::ConvSpec s;
  s.bf16 = bf16;
  s.transposed = true;
  s.in_channels = in;
  s.out_channels = out;
  s.kernel = 4;
  s.stride = 2;
  s.padding = 1;
  s.has_bias = true;
  s.activation = Activation::LeakyReLU;
  s.slope = slope;
  const std::size_t k = 4;
  auto weights = w.take(prefix + ".0.weight", {std::size_t(in), std::size_t(out), k, k, k}).data;
  auto bias = w.take(prefix + ".0.bias", {std::size_t(out)}).data;
  return ConvTranspose3d(s, weights, std::move(bias));
}

Tensor ConvTranspose3d::forward_subpixel(const Tensor& x) const {
  const int B = x.extent(0), C = spec_.out_channels;
  const int n[3] = {int(x.extent(2)), int(x.extent(3)), int(x.extent(4))};
  // Parity r of channel c covers the uncropped (padding 0) result's indices 2m + r, m = 0..n.
  Tensor parts = temporary_tensor("convT.parity", B, 8 * C, n[0] + 1, n[1] + 1, n[2] + 1);
  parity_->forward(x, parts);
  const int p = spec_.padding;
  Tensor y = temporary_tensor("convT3d.out", B, C, 2 * n[0] + 2 - 2 * p, 2 * n[1] + 2 - 2 * p,
                              2 * n[2] + 2 - 2 * p);
  ufno::parallel_for(
      "ufno::convT_interleave", range5(y), KOKKOS_LAMBDA(int b, int c, int i, int j, int k) {
        const int u = i + p, v = j + p, w = k + p;  // index in the uncropped result
        const int r = ((u & 1) << 2) | ((v & 1) << 1) | (w & 1);
        y(b, c, i, j, k) = parts(b, r * C + c, u >> 1, v >> 1, w >> 1);
      });
  return y;
}

Tensor ConvTranspose3d::parity_outputs(const Tensor& x, backend::Layout in) const {
  if (!subpixel())
    throw std::logic_error("ConvTranspose3d: parity outputs need kernel 4, stride 2");
  const Shape5 s = backend::logical_shape(x, in);
  Tensor parts =
      temporary_tensor("convT.parity", s[0], s[2] + 1, s[3] + 1, s[4] + 1, 8 * spec_.out_channels);
  parity_->forward(x, parts, in, backend::Layout::ChannelsLast);
  return parts;
}

void ConvTranspose3d::parity_outputs_of_rows_into(const Tensor& x_rows, const Tensor& parts) const {
  if (!subpixel())
    throw std::logic_error("ConvTranspose3d: parity outputs need kernel 4, stride 2");
  // The primitive checks the extents of `parts` against the spec.
  parity_rows_->forward(x_rows, parts, backend::Layout::ChannelsLast,
                        backend::Layout::ChannelsLast);
}

Tensor ConvTranspose3d::forward(const Tensor& x) const {
  if (subpixel()) return forward_subpixel(x);
  Tensor y = temporary_tensor("convT3d.out", x.extent(0), spec_.out_channels,
                              backend::conv_output_extent(spec_, x.extent(2)),
                              backend::conv_output_extent(spec_, x.extent(3)),
                              backend::conv_output_extent(spec_, x.extent(4)));
  prim_->forward(x, y);
  return y;
}

}  // namespace ufno
