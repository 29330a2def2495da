#pragma once
// cuDNN implementation of the convolution backend (ConvPrimitive.hpp) for a device build:
// Conv3d and ConvTranspose3d with the same ConvSpec (padding_x included), weight layout
// (out, in, k, k, k) and fused bias + activation, on contiguous (B, C, X, Y, T) arrays stored
// channels first or channels last (NDHWC), given as CUDA device pointers. make_conv_primitive
// returns it, through ConvPrimitives<Cuda> (ConvPrimitive.hpp), when the tensors live on the GPU.
#include <memory>
#include <vector>

#include "operators/backend/ConvPrimitive.hpp"

namespace ufno::backend::cuda {

class DeviceConv {
 public:
  virtual ~DeviceConv() = default;
  // src (B, in, X, Y, T) -> dst (B, out, X', Y', T'), extents from conv_output_extent, each in
  // its layout; dst is allocated by the caller. Runs on the default stream; the algorithm is
  // chosen on the first call for each input shape and pair of layouts, and cached.
  virtual void forward(const float* src_device, int B, int X, int Y, int T, float* dst_device,
                       Layout src_layout = Layout::ChannelsFirst,
                       Layout dst_layout = Layout::ChannelsFirst) = 0;
};

// Uploads the weights (needs a device); throws std::invalid_argument on sizes that do not match
// the spec and std::runtime_error on CUDA / cuDNN failures.
std::unique_ptr<DeviceConv> make_cudnn_conv(const ConvSpec& spec, const std::vector<float>& weights,
                                            const std::vector<float>& bias);

}  // namespace ufno::backend::cuda
