// cuDNN implementation of DeviceConv with the descriptor-based ("legacy") convolution API, which
// cuDNN 9 still declares (cudnn_cnn.h) and exports from libcudnn.so, though marked deprecated in
// favour of the graph API; it is the smallest code for a fixed 3-D convolution.
//
// A convolution is cudnnConvolutionForward in cross-correlation mode (PyTorch's definition). A
// transposed convolution is the data gradient of the convolution it transposes,
// cudnnConvolutionBackwardData, which is also how PyTorch runs ConvTranspose3d on cuDNN: the
// "forward" convolution maps dst (out channels) to src (in channels), so its filter is
// (in, out, k, k, k), the PyTorch layout, and the caller's (out, in, ...) weights are swapped
// back here. Bias and activation follow in one small kernel (cuDNN's fused
// ConvolutionBiasActivationForward has no LeakyReLU and no transposed form).
//
// Per input shape and pair of layouts (a Plan): the algorithm is the fastest cuDNN measures on
// the call's own buffers (cudnnFind*Ex, once, in the first pass) among those that fit the
// workspace budget (ConvWorkspaceBudget.hpp) and, unless TF32 is allowed, use FP32 FMA; each
// plan has its own convolution descriptor, so the math type chosen for one shape is not the
// one another shape runs with. The workspace is one buffer shared by every convolution. Where
// cuDNN has no such algorithm for a channels-last pair of layouts (it offered none in FP32 for a
// channels-last transposed convolution on an H100), the plan runs channels first between two
// reorders (cudnnTransformTensor) into buffers of its own.
#include <cudnn.h>

#include <array>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/CudaCheck.cuh"
#include "core/CudaDevice.hpp"
#include "core/Tf32.hpp"
#include "operators/backend/ConvWorkspaceBudget.hpp"
#include "operators/backend/CudnnConv.hpp"

namespace ufno::backend::cuda {

namespace {

void check_cudnn(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuDNN: ") + what + " failed: " + cudnnGetErrorString(s));
}

// One handle for the process, made on first use and never destroyed (see core/GemmCublas.cu).
cudnnHandle_t handle() {
  static cudnnHandle_t h = [] {
    cudnnHandle_t made = nullptr;
    check_cudnn(cudnnCreate(&made), "cudnnCreate");
    return made;
  }();
  return h;
}

// The workspace every convolution shares: they run one after another on the Kokkos stream. It
// only grows, while a shape is planned (never inside a warm pass), up to the budget.
DeviceBuffer& shared_workspace(std::size_t bytes) {
  static DeviceBuffer w;
  if (bytes > w.bytes()) w = DeviceBuffer(bytes);
  return w;
}

// Owning descriptors. A constructor that throws runs no destructor, so a failed set call
// destroys the descriptor it was given before reporting.
template <class D>
void destroy_on_error(D d, cudnnStatus_t s, cudnnStatus_t (*destroy)(D), const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) destroy(d);
  check_cudnn(s, what);
}

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  // dims (B, C, X, Y, T); stored packed channels first (NCDHW) or channels last (NDHWC).
  TensorDesc(const std::array<int, 5>& dims, Layout layout) {
    check_cudnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    int strides[5];
    if (layout == Layout::ChannelsFirst) {
      strides[4] = 1;
      for (int a = 3; a >= 0; --a) strides[a] = strides[a + 1] * dims[a + 1];
    } else {
      strides[1] = 1;                     // C
      strides[4] = dims[1];               // T
      strides[3] = strides[4] * dims[4];  // Y
      strides[2] = strides[3] * dims[3];  // X
      strides[0] = strides[2] * dims[2];  // B
    }
    destroy_on_error(d, cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, 5, dims.data(), strides),
                     cudnnDestroyTensorDescriptor, "cudnnSetTensorNdDescriptor");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  explicit FilterDesc(const std::array<int, 5>& dims) {
    check_cudnn(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor");
    destroy_on_error(
        d, cudnnSetFilterNdDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, dims.data()),
        cudnnDestroyFilterDescriptor, "cudnnSetFilterNdDescriptor");
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};

struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  explicit ConvDesc(const ConvSpec& spec) {
    check_cudnn(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor");
    const int stride = spec.stride;
    const int p[3] = {conv_padding(spec, 0), conv_padding(spec, 1), conv_padding(spec, 2)},
              s[3] = {stride, stride, stride}, dil[3] = {1, 1, 1};
    destroy_on_error(
        d,
        cudnnSetConvolutionNdDescriptor(d, 3, p, s, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        cudnnDestroyConvolutionDescriptor, "cudnnSetConvolutionNdDescriptor");
    // FMA kernels only unless TF32 is allowed (core/Tf32.hpp): the default math type lets Ampere
    // and later use TF32 tensor cores, whose 10-bit mantissa puts the results ~1e-3 away from
    // the host backend. The algorithm search then sets the chosen algorithm's own math type.
    destroy_on_error(
        d, cudnnSetConvolutionMathType(d, tf32_allowed() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
        cudnnDestroyConvolutionDescriptor, "cudnnSetConvolutionMathType");
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

bool tensor_op(cudnnMathType_t m) {
  return m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// Whether an algorithm of math type m may run: any with TF32 allowed, FP32 FMA ones otherwise.
bool allowed_math(cudnnMathType_t m) { return tf32_allowed() || !tensor_op(m); }

enum ActCode { kNone = 0, kReLU = 1, kLeaky = 2 };

// y = act(y + bias[c]) over (B, C, voxels) or, channels last, (B, voxels, C); bias may be null.
__global__ void bias_activation(float* y, const float* bias, long long total, long long voxels,
                                int channels, bool channels_last, int act, float slope) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    float v = y[e];
    if (bias) v += bias[channels_last ? e % channels : (e / voxels) % channels];
    if (act == kReLU) v = v > 0.f ? v : 0.f;
    if (act == kLeaky) v = v > 0.f ? v : slope * v;
    y[e] = v;
  }
}

class CudnnConv final : public DeviceConv {
 public:
  CudnnConv(const ConvSpec& s, const std::vector<float>& w, const std::vector<float>& b)
      : s_(s),
        filter_(
            s.transposed
                ? std::array<int, 5>{s.in_channels, s.out_channels, s.kernel, s.kernel, s.kernel}
                : std::array<int, 5>{s.out_channels, s.in_channels, s.kernel, s.kernel, s.kernel}) {
    const std::size_t I = s.in_channels, O = s.out_channels;
    const std::size_t k3 = std::size_t(s.kernel) * s.kernel * s.kernel;
    if (w.size() != O * I * k3)
      throw std::invalid_argument("conv: weight size does not match the spec");
    if (s.has_bias && b.size() != O)
      throw std::invalid_argument("conv: bias size does not match the spec");
    std::vector<float> dw = w;
    if (s.transposed)  // (out, in, k3) -> cuDNN's (in, out, k3), see the top of the file
      for (std::size_t o = 0; o < O; ++o)
        for (std::size_t i = 0; i < I; ++i)
          for (std::size_t k = 0; k < k3; ++k) dw[(i * O + o) * k3 + k] = w[(o * I + i) * k3 + k];
    weights_ = DeviceBuffer(dw.size() * sizeof(float));
    weights_.upload(dw.data(), dw.size() * sizeof(float));
    if (s.has_bias) {
      bias_ = DeviceBuffer(O * sizeof(float));
      bias_.upload(b.data(), O * sizeof(float));
    }
  }

  void forward(const float* src, int B, int X, int Y, int T, float* dst, Layout src_layout,
               Layout dst_layout) override {
    const std::array<int, 6> key{B, X, Y, T, int(src_layout), int(dst_layout)};
    // On the Kokkos stream (core/CudaDevice.hpp): ordered with the kernels around the call.
    const auto stream = static_cast<cudaStream_t>(kokkos_stream());
    check_cudnn(cudnnSetStream(handle(), stream), "cudnnSetStream");
    Plan& p = plan_for(key, src, dst);
    if (p.reordered()) {
      transform(p.src, src, *p.src_first, p.src_tmp.as<float>());
      run(p, *p.src_first, p.src_tmp.as<float>(), *p.dst_first, p.dst_tmp.as<float>());
      transform(*p.dst_first, p.dst_tmp.as<float>(), p.dst, dst);
    } else {
      run(p, p.src, src, p.dst, dst);
    }
    const int act = s_.activation == Activation::ReLU        ? kReLU
                    : s_.activation == Activation::LeakyReLU ? kLeaky
                                                             : kNone;
    if (!s_.has_bias && act == kNone) return;
    const long long voxels = (long long)p.out[2] * p.out[3] * p.out[4];
    const long long total = voxels * p.out[0] * p.out[1];
    bias_activation<<<grid_for(total), kThreads, 0, stream>>>(
        dst, s_.has_bias ? bias_.as<float>() : nullptr, total, voxels, s_.out_channels,
        dst_layout == Layout::ChannelsLast, act, s_.slope);
    check_launch("bias_activation", total);
  }

 private:
  struct Plan {
    std::array<int, 5> in, out;
    TensorDesc src, dst;  // the caller's layouts
    ConvDesc conv;        // this shape's own: its math type is its algorithm's
    cudnnConvolutionFwdAlgo_t fwd_algo{};
    cudnnConvolutionBwdDataAlgo_t bwd_algo{};
    std::size_t workspace = 0;
    // Set where the algorithm runs channels first, away from the caller's layouts.
    std::unique_ptr<TensorDesc> src_first, dst_first;
    DeviceBuffer src_tmp, dst_tmp;
    Plan(const std::array<int, 5>& i, Layout in_layout, const std::array<int, 5>& o,
         Layout out_layout, const ConvSpec& s)
        : in(i), out(o), src(i, in_layout), dst(o, out_layout), conv(s) {}
    bool reordered() const { return src_first != nullptr; }
  };

  static std::size_t count(const std::array<int, 5>& d) {
    return std::size_t(d[0]) * d[1] * d[2] * d[3] * d[4];
  }

  // y (layout of `to`) = x (layout of `from`), the same extents.
  static void transform(const TensorDesc& from, const float* x, const TensorDesc& to, float* y) {
    const float one = 1.f, zero = 0.f;
    check_cudnn(cudnnTransformTensor(handle(), &one, from.d, x, &zero, to.d, y),
                "cudnnTransformTensor");
    LaunchLog::record_library("cudnnTransformTensor");
  }

  // The plan's convolution from sd/src to dd/dst with its algorithm.
  void run(const Plan& p, const TensorDesc& sd, const float* src, const TensorDesc& dd,
           float* dst) {
    DeviceBuffer& ws = shared_workspace(p.workspace);
    const float one = 1.f, zero = 0.f;
    if (!s_.transposed) {
      check_cudnn(
          cudnnConvolutionForward(handle(), &one, sd.d, src, filter_.d, weights_.get(), p.conv.d,
                                  p.fwd_algo, ws.get(), p.workspace, &zero, dd.d, dst),
          "cudnnConvolutionForward");
      LaunchLog::record_library("cudnnConvolutionForward");
    } else {
      check_cudnn(cudnnConvolutionBackwardData(handle(), &one, filter_.d, weights_.get(), sd.d, src,
                                               p.conv.d, p.bwd_algo, ws.get(), p.workspace, &zero,
                                               dd.d, dst),
                  "cudnnConvolutionBackwardData");
      LaunchLog::record_library("cudnnConvolutionBackwardData");
    }
  }

  // key: B, X, Y, T, source layout, destination layout. A new shape's algorithm is measured on
  // the call's own buffers (dst is overwritten, as the call then does anyway).
  Plan& plan_for(const std::array<int, 6>& key, const float* src, float* dst) {
    auto it = plans_.find(key);
    if (it != plans_.end()) return *it->second;
    const int B = key[0], X = key[1], Y = key[2], T = key[3];
    if (B < 1 || X < 1 || Y < 1 || T < 1) throw std::invalid_argument("conv: empty input shape");
    const std::array<int, 5> in{B, s_.in_channels, X, Y, T};
    const std::array<int, 5> out{B, s_.out_channels, conv_output_extent(s_, X, 0),
                                 conv_output_extent(s_, Y, 1), conv_output_extent(s_, T, 2)};
    if (out[2] < 1 || out[3] < 1 || out[4] < 1)
      throw std::invalid_argument("conv: the input is too small for the kernel");
    auto p = std::make_unique<Plan>(in, Layout(key[4]), out, Layout(key[5]), s_);
    DeviceBuffer& trial = shared_workspace(kConvWorkspaceBudgetBytes);
    std::string why;
    if (!choose(*p, p->src, src, p->dst, dst, trial, why)) {
      const bool first =
          key[4] == int(Layout::ChannelsFirst) && key[5] == int(Layout::ChannelsFirst);
      std::string why_first;
      if (!first) {  // channels first between two reorders
        p->src_first = std::make_unique<TensorDesc>(in, Layout::ChannelsFirst);
        p->dst_first = std::make_unique<TensorDesc>(out, Layout::ChannelsFirst);
        p->src_tmp = DeviceBuffer(count(in) * sizeof(float));
        p->dst_tmp = DeviceBuffer(count(out) * sizeof(float));
        transform(p->src, src, *p->src_first, p->src_tmp.as<float>());
      }
      if (first || !choose(*p, *p->src_first, p->src_tmp.as<float>(), *p->dst_first,
                           p->dst_tmp.as<float>(), trial, why_first))
        throw std::runtime_error(
            std::string("cuDNN: no FP32 ") + (s_.transposed ? "transposed " : "") +
            "convolution algorithm within the workspace budget for input " + dims(in) +
            (first ? "" : " (neither in the given layouts nor channels first)") +
            "; measured:" + why + why_first);
    }
    return *plans_.emplace(key, std::move(p)).first->second;
  }

  static std::string dims(const std::array<int, 5>& d) {
    return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) +
           ", " + std::to_string(d[3]) + ", " + std::to_string(d[4]) + ")";
  }

  bool choose(Plan& p, const TensorDesc& sd, const float* src, const TensorDesc& dd, float* dst,
              DeviceBuffer& trial, std::string& why) {
    return s_.transposed ? choose_backward_data(p, sd, src, dd, dst, trial, why)
                         : choose_forward(p, sd, src, dd, dst, trial, why);
  }

  // The first (fastest) measured result that ran, fits the budget and has an allowed math type,
  // or null; `why` then lists what was measured.
  template <class Perf>
  static const Perf* fastest_allowed(const std::vector<Perf>& perf, int got, std::string& why) {
    for (int i = 0; i < got; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kConvWorkspaceBudgetBytes &&
          allowed_math(perf[i].mathType))
        return &perf[i];
    for (int i = 0; i < got; ++i)
      why += " algorithm " + std::to_string(int(perf[i].algo)) + " " +
             cudnnGetErrorString(perf[i].status) + " " + std::to_string(perf[i].memory) + " B" +
             (tensor_op(perf[i].mathType) ? " tensor ops" : "") + ";";
    if (got == 0) why += " nothing;";
    return nullptr;
  }

  void take(Plan& p, cudnnMathType_t math, std::size_t memory) {
    p.workspace = memory;
    if (tf32_allowed())  // the algorithm's own math type (FMA stays FMA otherwise)
      check_cudnn(cudnnSetConvolutionMathType(p.conv.d, math), "cudnnSetConvolutionMathType");
  }

  bool choose_forward(Plan& p, const TensorDesc& sd, const float* src, const TensorDesc& dd,
                      float* dst, DeviceBuffer& trial, std::string& why) {
    int max = 0, got = 0;
    check_cudnn(cudnnGetConvolutionForwardAlgorithmMaxCount(handle(), &max),
                "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(max);
    check_cudnn(cudnnFindConvolutionForwardAlgorithmEx(
                    handle(), sd.d, src, filter_.d, weights_.get(), p.conv.d, dd.d, dst, max, &got,
                    perf.data(), trial.get(), trial.bytes()),
                "cudnnFindConvolutionForwardAlgorithmEx");
    const auto* best = fastest_allowed(perf, got, why);
    if (!best) return false;
    p.fwd_algo = best->algo;
    take(p, best->mathType, best->memory);
    return true;
  }

  // Transposed: src is the "dy" and dst the "dx" of the convolution being transposed.
  bool choose_backward_data(Plan& p, const TensorDesc& sd, const float* src, const TensorDesc& dd,
                            float* dst, DeviceBuffer& trial, std::string& why) {
    int max = 0, got = 0;
    check_cudnn(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle(), &max),
                "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(max);
    check_cudnn(cudnnFindConvolutionBackwardDataAlgorithmEx(
                    handle(), filter_.d, weights_.get(), sd.d, src, p.conv.d, dd.d, dst, max, &got,
                    perf.data(), trial.get(), trial.bytes()),
                "cudnnFindConvolutionBackwardDataAlgorithmEx");
    const auto* best = fastest_allowed(perf, got, why);
    if (!best) return false;
    p.bwd_algo = best->algo;
    take(p, best->mathType, best->memory);
    return true;
  }

  ConvSpec s_;
  FilterDesc filter_;
  DeviceBuffer weights_, bias_;
  std::map<std::array<int, 6>, std::unique_ptr<Plan>> plans_;
};

}  // namespace

std::unique_ptr<DeviceConv> make_cudnn_conv(const ConvSpec& spec, const std::vector<float>& weights,
                                            const std::vector<float>& bias) {
  return std::make_unique<CudnnConv>(spec, weights, bias);
}

}  // namespace ufno::backend::cuda
