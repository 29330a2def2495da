#pragma once
// The composed models, in the order the paper draws them: pad -> fc0 -> n_fourier Fourier layers
// relu(conv_k(x) + w_k(x)) -> n_ufourier U-Fourier layers relu(conv_k(x) + w_k(x) + unet_k(x))
// -> crop -> fc1 -> relu -> fc2 -> output de-scaling. FNO is the same network with no U-Fourier
// layers. Weight names are the reference state_dict keys.
#include <optional>
#include <string>
#include <vector>

#include "core/ModelSpec.hpp"
#include "operators/Linear.hpp"
#include "operators/UNet3d.hpp"
#include "reference/DomainPadding.hpp"
#include "reference/SpectralConv3d.hpp"

namespace ufno::reference {

class Net3d {
 public:
  Net3d(const ModelSpec& spec, const WeightSource& weights);

  // Encoded input (B, X, Y, T, in_channels) channel-last -> raw output (B, 1, X, Y, T).
  Tensor forward_raw(const Tensor& input);
  // The same, de-scaled to physical units (dP in bar; SG unchanged).
  Tensor forward(const Tensor& input);

  const ModelSpec& spec() const { return spec_; }

 private:
  ModelSpec spec_;
  DomainPadding padding_;
  Linear fc0_, fc1_, fc2_;
  std::vector<SpectralConv3d> conv_;
  std::vector<Linear> w_;
  std::vector<std::optional<UNet3d>> unet_;
};

// The reference names its models by their kind; both are Net3d here.
using UFNO = Net3d;
using FNO = Net3d;

}  // namespace ufno::reference
