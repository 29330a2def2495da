#pragma once
// Conv3d: kernel k (3 here), stride 1 or 2, padding 1, optional bias, optional BatchNorm folded in
// and the activation fused, as the U-Net's conv blocks (Conv3d -> BatchNorm3d -> LeakyReLU) and
// its output layer use it. PyTorch weight layout (out, in, k, k, k).
#include <memory>
#include <string>

#include "operators/BatchNorm3d.hpp"
#include "operators/backend/ConvPrimitive.hpp"

namespace ufno {

class Conv3d {
 public:
  Conv3d() = default;
  Conv3d(backend::ConvSpec spec, std::vector<float> weights, std::vector<float> bias,
         const BatchNorm3d* bn = nullptr);

  // A conv block `prefix.0` (Conv3d, no bias) + `prefix.1` (BatchNorm3d) + LeakyReLU(slope).
  static Conv3d load_block(const WeightSource& w, const std::string& prefix, int in, int out,
                           int stride, double eps, float slope, bool bf16 = false);
  // A plain Conv3d `prefix` with bias, padding 1, no activation.
  static Conv3d load_plain(const WeightSource& w, const std::string& prefix, int in, int out,
                           int kernel, bool bf16 = false);

  // x in layout `in` -> the output in layout `out` (see backend::Layout).
  Tensor forward(const Tensor& x, backend::Layout in = backend::Layout::ChannelsFirst,
                 backend::Layout out = backend::Layout::ChannelsFirst) const;
  // The same into an existing tensor `y` of the output's shape (a view into a larger one, say).
  void forward_into(const Tensor& x, const Tensor& y,
                    backend::Layout in = backend::Layout::ChannelsFirst,
                    backend::Layout out = backend::Layout::ChannelsFirst) const;
  const backend::ConvSpec& spec() const { return spec_; }
  // PyTorch layout (out, in, k, k, k) and (out) or empty, BatchNorm folded in.
  const std::vector<float>& weights() const { return weights_; }
  const std::vector<float>& bias() const { return bias_; }
  // The same layer with another zero padding (the distributed layer gathers its halo itself
  // and convolves without padding).
  Conv3d with_padding(int padding) const;
  // The same layer with another zero padding of the X axis only (for slabs of X rows).
  Conv3d with_padding_x(int padding_x) const;

 private:
  backend::ConvSpec spec_;
  std::vector<float> weights_, bias_;  // BatchNorm already folded in
  std::shared_ptr<backend::ConvPrimitive> prim_;
};

}  // namespace ufno
