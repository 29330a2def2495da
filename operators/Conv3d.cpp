#include "operators/Conv3d.hpp"

#include "core/Workspace.hpp"

namespace ufno {

Conv3d::Conv3d(backend::ConvSpec spec, std::vector<float> weights, std::vector<float> bias,
               const BatchNorm3d* bn)
    : spec_(spec) {
  if (bn) {
    bn->fold_into(weights, bias);
    spec_.has_bias = true;
  }
  weights_ = std::move(weights);
  bias_ = std::move(bias);
  prim_ = backend::make_conv_primitive(spec_, weights_, bias_);
}

Conv3d Conv3d::with_padding(int padding) const {
  backend::ConvSpec s = spec_;
  s.padding = padding;
  s.padding_x = -1;
  return Conv3d(s, weights_, bias_);
}

Conv3d Conv3d::with_padding_x(int padding_x) const {
  backend::ConvSpec s = spec_;
  s.padding_x = padding_x;
  return Conv3d(s, weights_, bias_);
}

Conv3d Conv3d::load_block(const WeightSource& w, const std::string& prefix, int in, int out,
                          int stride, double eps, float slope, bool bf16) {
  backend::ConvSpec s;
  s.bf16 = bf16;
  s.in_channels = in;
  s.out_channels = out;
  s.kernel = 3;
  s.stride = stride;
  s.padding = 1;
  s.activation = Activation::LeakyReLU;
  s.slope = slope;
  const std::size_t k = 3;
  auto weights = w.take(prefix + ".0.weight", {std::size_t(out), std::size_t(in), k, k, k}).data;
  BatchNorm3d bn = BatchNorm3d::load(w, prefix + ".1", out, eps);
  return Conv3d(s, std::move(weights), {}, &bn);
}

Conv3d Conv3d::load_plain(const WeightSource& w, const std::string& prefix, int in, int out,
                          int kernel, bool bf16) {
  backend::ConvSpec s;
  s.bf16 = bf16;
  s.in_channels = in;
  s.out_channels = out;
  s.kernel = kernel;
  s.padding = (kernel - 1) / 2;
  s.has_bias = true;
  const std::size_t k = kernel;
  auto weights = w.take(prefix + ".weight", {std::size_t(out), std::size_t(in), k, k, k}).data;
  auto bias = w.take(prefix + ".bias", {std::size_t(out)}).data;
  return Conv3d(s, std::move(weights), std::move(bias));
}

Tensor Conv3d::forward(const Tensor& x, backend::Layout in, backend::Layout out) const {
  const Shape5 s = backend::logical_shape(x, in);
  const int B = s[0], C = spec_.out_channels, X = backend::conv_output_extent(spec_, s[2], 0),
            Y = backend::conv_output_extent(spec_, s[3]),
            T = backend::conv_output_extent(spec_, s[4]);
  Tensor y = out == backend::Layout::ChannelsFirst ? temporary_tensor("conv3d.out", B, C, X, Y, T)
                                                   : temporary_tensor("conv3d.out", B, X, Y, T, C);
  prim_->forward(x, y, in, out);
  return y;
}

void Conv3d::forward_into(const Tensor& x, const Tensor& y, backend::Layout in,
                          backend::Layout out) const {
  prim_->forward(x, y, in, out);  // the primitive checks y's extents against the spec
}

}  // namespace ufno
