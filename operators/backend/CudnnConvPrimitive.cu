// ConvPrimitives<Cuda>: the cuDNN convolution (CudnnConv.cu) behind ConvPrimitive, so that
// Conv3d and ConvTranspose3d run on it unchanged when the tensors live on the GPU.
// The convolution runs on the Kokkos stream (CudnnConv.cu): no fence before, no synchronisation
// after.
#include <stdexcept>
#include <string>

#include "core/CudaDevice.hpp"
#include "operators/backend/CudnnConv.hpp"

namespace ufno::backend::cuda {

namespace {

class CudnnConvPrimitive final : public ConvPrimitive {
 public:
  CudnnConvPrimitive(const ConvSpec& spec, const std::vector<float>& w, const std::vector<float>& b)
      : spec_(spec), conv_(make_cudnn_conv(spec, w, b)) {}

  void forward(const Tensor& src, const Tensor& dst, Layout src_layout,
               Layout dst_layout) override {
    const Shape5 in = logical_shape(src, src_layout), out = logical_shape(dst, dst_layout);
    const Shape5 want{in[0], spec_.out_channels, conv_output_extent(spec_, in[2], 0),
                      conv_output_extent(spec_, in[3], 1), conv_output_extent(spec_, in[4], 2)};
    if (in[1] != spec_.in_channels || out != want)
      throw std::invalid_argument("cuDNN convolution: input " + to_string(in) + " and output " +
                                  to_string(out) + " do not fit " +
                                  std::to_string(spec_.in_channels) + " -> " +
                                  std::to_string(spec_.out_channels) + " channels");
    conv_->forward(src.data(), in[0], in[2], in[3], in[4], dst.data(), src_layout, dst_layout);
  }

 private:
  ConvSpec spec_;
  std::unique_ptr<DeviceConv> conv_;
};

}  // namespace

}  // namespace ufno::backend::cuda

namespace ufno::backend {

std::unique_ptr<ConvPrimitive> ConvPrimitives<Cuda>::make(const ConvSpec& spec,
                                                          const std::vector<float>& weights,
                                                          const std::vector<float>& bias) {
  return std::make_unique<cuda::CudnnConvPrimitive>(spec, weights, bias);
}

}  // namespace ufno::backend
