#include "reference/Net3d.hpp"
#include "operators/OutputScaling.hpp"

#include <stdexcept>

#include "operators/TensorOps.hpp"

namespace ufno::reference {

Net3d::Net3d(const ModelSpec& s, const WeightSource& w) : spec_(s) {
  padding_.pad = s.padding;
  const int c = s.width;
  fc0_ = Linear::load(w, ModelSpec::key("fc0"), s.in_channels, c);
  for (int k = 0; k < s.layers(); ++k) {
    conv_.push_back(SpectralConv3d::load(w, ModelSpec::key("conv", k), c, c, s.modes));
    w_.push_back(Linear::load(w, ModelSpec::key("w", k), c, c, /*conv1d=*/true));
    if (k >= s.n_fourier)
      unet_.emplace_back(
          UNet3d::load(w, ModelSpec::key("unet", k), c, s.bn_eps, float(s.leaky_slope)));
    else
      unet_.emplace_back(std::nullopt);
  }
  fc1_ = Linear::load(w, ModelSpec::key("fc1"), c, s.hidden);
  fc2_ = Linear::load(w, ModelSpec::key("fc2"), s.hidden, 1);
}

Tensor Net3d::forward_raw(const Tensor& input) {
  if (int(input.extent(4)) != spec_.in_channels)
    throw std::invalid_argument("Net3d: input has " + std::to_string(input.extent(4)) +
                                " channels, the model expects " +
                                std::to_string(spec_.in_channels));
  Tensor x = fc0_.forward(padding_.pad_channel_last(input));
  for (std::size_t k = 0; k < conv_.size(); ++k) {
    Tensor y = conv_[k].forward(x);
    if (unet_[k]) add_activate(y, unet_[k]->forward(x), Activation::None);
    w_[k].forward_accumulate(x, y, Activation::ReLU);
    x = y;
  }
  // fc1 and fc2 act per voxel, so they run on the cropped grid only.
  Tensor h = fc1_.forward(padding_.crop(x), Activation::ReLU);
  x = Tensor();
  Tensor out = fc2_.forward(h);
  return out;
}

Tensor Net3d::forward(const Tensor& input) {
  Tensor y = forward_raw(input);
  descale_output(y, spec_);
  return y;
}

}  // namespace ufno::reference
