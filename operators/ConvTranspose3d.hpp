#pragma once
// ConvTranspose3d (kernel 4, stride 2, padding 1: doubles each extent) with bias and a fused
// activation, the U-Net's upsampling blocks (ConvTranspose3d -> LeakyReLU). PyTorch stores the
// weights as (in, out, k, k, k); they are swapped to (out, in, ...) for the backend at load time.
#include <memory>
#include <string>

#include "operators/WeightSource.hpp"
#include "operators/backend/ConvPrimitive.hpp"

namespace ufno {

class ConvTranspose3d {
 public:
  ConvTranspose3d() = default;
  // torch_weights: (in, out, k, k, k) as PyTorch stores them.
  ConvTranspose3d(backend::ConvSpec spec, const std::vector<float>& torch_weights,
                  std::vector<float> bias);
  // `prefix.0` (ConvTranspose3d k4 s2 p1 with bias) + LeakyReLU(slope).
  static ConvTranspose3d load_block(const WeightSource& w, const std::string& prefix, int in,
                                    int out, float slope);

  Tensor forward(const Tensor& x) const;
  const backend::ConvSpec& spec() const { return spec_; }
  // The same layer with another padding (output cropping); the distributed layer uses 0.
  ConvTranspose3d with_padding(int padding) const;

 private:
  backend::ConvSpec spec_;
  std::vector<float> torch_weights_, bias_;
  std::shared_ptr<backend::ConvPrimitive> prim_;
};

}  // namespace ufno
