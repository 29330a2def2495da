#pragma once
// Convolution backend used by Conv3d and ConvTranspose3d: oneDNN on the host, cuDNN with a device
// build. A primitive is made once per layer with its weights, and caches whatever it plans per
// input shape. Activations are fused as post-ops.
#include <memory>
#include <vector>

#include "core/Activation.hpp"
#include "core/Backend.hpp"
#include "core/Tensor.hpp"

namespace ufno::backend {

struct ConvSpec {
  bool transposed = false;  // ConvTranspose3d
  int in_channels = 0, out_channels = 0;
  int kernel = 3, stride = 1, padding = 1;
  bool has_bias = false;
  Activation activation = Activation::None;
  float slope = 0.f;  // LeakyReLU
  // Padding of the X axis alone when >= 0: 0 for slabs of X rows that bring their own halo rows
  // (UNet3d's top level), while Y and T keep `padding`.
  int padding_x = -1;
  // Inputs and weights rounded to bfloat16 (8-bit mantissa), float32 accumulation and output:
  // about 1.2-1.3x faster on CPUs with AVX512_BF16 or AMX (RunOptions::bf16, core/Bf16.hpp).
  bool bf16 = false;
};

// Zero padding of spatial axis `axis` (0 = X, 1 = Y, 2 = T).
inline int conv_padding(const ConvSpec& s, int axis) {
  return axis == 0 && s.padding_x >= 0 ? s.padding_x : s.padding;
}

// Output extent along spatial axis `axis` (0 = X, 1 = Y, 2 = T).
inline int conv_output_extent(const ConvSpec& s, int n, int axis) {
  const int p = conv_padding(s, axis);
  return s.transposed ? (n - 1) * s.stride - 2 * p + s.kernel
                      : (n + 2 * p - s.kernel) / s.stride + 1;
}

// Output extent along an axis with the common padding (Y, T, and X unless padding_x is set).
inline int conv_output_extent(const ConvSpec& s, int n) { return conv_output_extent(s, n, 1); }

// How a tensor's five extents are ordered: channels first (B, C, X, Y, T), the layers' layout, or
// channels last (B, X, Y, T, C), which the U-Net keeps inside itself because the CPU convolution
// kernels work channels-last: tensors in that layout go to and from them without reorders.
enum class Layout { ChannelsFirst, ChannelsLast };

class ConvPrimitive {
 public:
  virtual ~ConvPrimitive() = default;
  // src (B, Cin, X, Y, T) -> dst (B, Cout, X', Y', T') in the given layouts, dst allocated.
  virtual void forward(const Tensor& src, const Tensor& dst,
                       Layout src_layout = Layout::ChannelsFirst,
                       Layout dst_layout = Layout::ChannelsFirst) = 0;
};

// The (B, C, X, Y, T) extents of a tensor stored in `layout`.
inline Shape5 logical_shape(const Tensor& t, Layout layout) {
  const Shape5 s = shape_of(t);
  return layout == Layout::ChannelsFirst ? s : Shape5{s[0], s[4], s[1], s[2], s[3]};
}

// weights: (out, in, k, k, k) row-major for both kinds (a transposed convolution's PyTorch
// (in, out, ...) weights are swapped by the caller); bias: out values or empty.
// The convolutions of a backend (core/Backend.hpp).
template <class Tag>
struct ConvPrimitives;

template <>
struct ConvPrimitives<Host> {  // oneDNN (operators/backend/OnednnConv.cpp)
  // bf16 convolutions (ConvSpec::bf16) on CPUs that have them (core/Bf16.hpp).
  static constexpr bool kBf16 = true;
  // Bias and activation run inside the convolution (oneDNN post-ops).
  static constexpr bool kFusedBiasActivation = true;
  static std::unique_ptr<ConvPrimitive> make(const ConvSpec& spec,
                                             const std::vector<float>& weights,
                                             const std::vector<float>& bias);
};

template <>
struct ConvPrimitives<Cuda> {  // cuDNN (operators/backend/CudnnConvPrimitive.cu, in ufno_cuda)
  // No bf16 here: TF32 (core/Tf32.hpp) is the GPU's faster mode.
  static constexpr bool kBf16 = false;
  // Bias and activation are one kernel after the convolution: cuDNN's fused form has no
  // LeakyReLU and no transposed convolution (operators/backend/CudnnConv.cu).
  static constexpr bool kFusedBiasActivation = false;
  // Checks the extents, waits for the Kokkos kernels that wrote the input and for the
  // convolution before returning.
  static std::unique_ptr<ConvPrimitive> make(const ConvSpec& spec,
                                             const std::vector<float>& weights,
                                             const std::vector<float>& bias);
};

// The layers' convolutions: the backend of the tensors' memory space.
inline std::unique_ptr<ConvPrimitive> make_conv_primitive(const ConvSpec& spec,
                                                          const std::vector<float>& weights,
                                                          const std::vector<float>& bias) {
  return ConvPrimitives<Default>::make(spec, weights, bias);
}

void set_conv_threads(int n);

}  // namespace ufno::backend
