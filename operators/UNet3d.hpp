#pragma once
// The U-Net branch of the U-Fourier layers (reference class U_net): three stride-2 encoder levels
// (conv1; conv2 + conv2_1; conv3 + conv3_1), three transposed-convolution decoder levels joined to
// the encoder by channel concatenation (skip first), and a 3x3x3 output convolution. Every extent
// of the input must be divisible by 8. Input and output are channels first like every layer;
// inside, the tensors are channels last (the convolution kernels' layout, so no reorders).
#include <string>

#include "operators/Conv3d.hpp"
#include "operators/ConvTranspose3d.hpp"

namespace ufno {

class UNet3d {
 public:
  UNet3d() = default;
  static UNet3d load(const WeightSource& w, const std::string& prefix, int channels, double eps,
                     float slope);
  Tensor forward(const Tensor& x) const;

  struct Parts {
    Conv3d conv1, conv2, conv2_1, conv3, conv3_1, output;
    ConvTranspose3d deconv2, deconv1, deconv0;
  };
  const Parts& parts() const { return p_; }

 private:
  Parts p_;
};

}  // namespace ufno
