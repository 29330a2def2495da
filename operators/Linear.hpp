#pragma once
// Linear: a per-voxel channel mix y[c'] = sum_c W[c', c] x[c] + b[c'] on (B, C, X, Y, T) tensors.
// It is PyTorch's nn.Linear on a channel-last tensor (fc0, fc1, fc2) and also the 1x1 Conv1d w_k
// of the Fourier layers; both are one GEMM per batch entry, (Cout x Cin) * (Cin x voxels).
#include <string>
#include <vector>

#include "core/Activation.hpp"
#include "core/Tensor.hpp"
#include "core/WeightSource.hpp"

namespace ufno {

class Linear {
 public:
  Linear() = default;
  // weight (out, in) or (out, in, 1) for a Conv1d, bias (out)
  Linear(int in, int out, const HostArray& weight, const HostArray& bias);
  // Reads `prefix.weight` and `prefix.bias`; conv1d = true expects the (out, in, 1) Conv1d shape.
  static Linear load(const WeightSource& w, const std::string& prefix, int in, int out,
                     bool conv1d = false);

  Tensor forward(const Tensor& x, Activation act = Activation::None) const;
  // y = act(y + W x + b): accumulate into an existing output (fuses the Fourier-layer sum).
  void forward_accumulate(const Tensor& x, const Tensor& y,
                          Activation act = Activation::None) const;

  // Hands the bias to the caller and drops it from this layer, for a model that adds it more
  // cheaply elsewhere (the Fourier layers add w_k's bias through their spectral layer).
  std::vector<float> release_bias();

  // The layer on `cols` voxels of raw channel rows: channel c of x starts at x + c * ldx, of y at
  // y + c * ldy; y = act(W x + b), or act(y + W x + b) when accumulating. Device pointers.
  void apply_columns(const float* x, long ldx, float* y, long ldy, long cols, bool accumulate,
                     Activation act) const;

  bool has_bias() const { return has_bias_; }
  // The weights (out, in) and the bias (out), in the tensors' memory space.
  const Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace>& weight() const { return w_; }
  const Kokkos::View<float*, DeviceSpace>& bias() const { return b_; }
  int in_channels() const { return in_; }
  int out_channels() const { return out_; }

 private:
  // y = act(W x + b), or y = act(y + W x + b) when accumulating
  void apply(const Tensor& x, const Tensor& y, bool accumulate, Activation act) const;

  int in_ = 0, out_ = 0;
  bool has_bias_ = false;
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> w_;
  Kokkos::View<float*, DeviceSpace> b_;
};

// second(act(first(x))) per voxel, over `chunk` voxels at a time: the hidden activations (128
// channels in the U-FNO head, 2.4x the input) only ever exist for one cache-sized chunk.
Tensor pointwise_mlp(const Tensor& x, const Linear& first, Activation act, const Linear& second,
                     long chunk = 8192);
GridView<4> pointwise_mlp(const GridView<4>& x, const Linear& first, Activation act,
                          const Linear& second, long chunk = 8192);

}  // namespace ufno
