#include "operators/ConvTranspose3d.hpp"

namespace ufno {

ConvTranspose3d::ConvTranspose3d(backend::ConvSpec spec, const std::vector<float>& tw,
                                 std::vector<float> bias)
    : spec_(spec) {
  spec_.transposed = true;
  const std::size_t I = spec.in_channels, O = spec.out_channels;
  const std::size_t k3 = std::size_t(spec.kernel) * spec.kernel * spec.kernel;
  std::vector<float> w(tw.size());
  for (std::size_t i = 0; i < I; ++i)
    for (std::size_t o = 0; o < O; ++o)
      for (std::size_t k = 0; k < k3; ++k) w[(o * I + i) * k3 + k] = tw[(i * O + o) * k3 + k];
  prim_ = backend::make_conv_primitive(spec_, w, bias);
  torch_weights_ = tw;
  bias_ = std::move(bias);
}

ConvTranspose3d ConvTranspose3d::with_padding(int padding) const {
  backend::ConvSpec s = spec_;
  s.padding = padding;
  return ConvTranspose3d(s, torch_weights_, bias_);
}

ConvTranspose3d ConvTranspose3d::load_block(const WeightSource& w, const std::string& prefix,
                                            int in, int out, float slope) {
  backend::ConvSpec s;
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

Tensor ConvTranspose3d::forward(const Tensor& x) const {
  Tensor y("convT3d.out", x.extent(0), spec_.out_channels,
           backend::conv_output_extent(spec_, x.extent(2)),
           backend::conv_output_extent(spec_, x.extent(3)),
           backend::conv_output_extent(spec_, x.extent(4)));
  prim_->forward(x, y);
  return y;
}

}  // namespace ufno
