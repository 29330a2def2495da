#pragma once
// ConvTranspose3d (kernel 4, stride 2, padding 1: doubles each extent) with bias and a fused
// activation, the U-Net's upsampling blocks (ConvTranspose3d -> LeakyReLU). PyTorch stores the
// weights as (in, out, k, k, k). The stride-2, kernel-4 case runs as one stride-1 kernel-2
// convolution with eight times the output channels, one group per output parity (sub-pixel form:
// output 2m + r along an axis reads inputs m and m - 1 through taps r and r + 2), whose results
// are interleaved: oneDNN's forward convolutions are several times faster than its
// transposed-convolution path, and one wide convolution reads its input once where eight narrow
// ones read it eight times. Other shapes use the backend's transposed convolution directly.
#include <memory>
#include <string>

#include "core/WeightSource.hpp"
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
                                    int out, float slope, bool bf16 = false);

  Tensor forward(const Tensor& x) const;
  // The sub-pixel form's eight parity outputs before interleaving, channels last:
  // (B, n0 + 1, n1 + 1, n2 + 1, 8 out), channel r * out + o holding output channel o at the
  // uncropped positions 2 m + r (r = 4 rx + 2 ry + rt); crop by the padding when interleaving.
  // x is in layout `in`. Only for kernel 4, stride 2 (has_parity_form()).
  Tensor parity_outputs(const Tensor& x, backend::Layout in) const;
  bool has_parity_form() const { return subpixel(); }
  // parity_outputs for a slab of X rows that carries its own halo: x_rows (B, r + 1, n1, n2, C)
  // channels last holds input rows q0 - 1 .. q0 + r - 1 (zero rows where they fall outside the
  // input); `parts` (B, r, n1+1, n2+1, 8 out), allocated by the caller (a view of some rows of a
  // larger tensor, say), receives the parity outputs of rows q0 .. q0 + r - 1.
  void parity_outputs_of_rows_into(const Tensor& x_rows, const Tensor& parts) const;
  const backend::ConvSpec& spec() const { return spec_; }
  // The same layer with another padding (output cropping); the distributed layer uses 0.
  ConvTranspose3d with_padding(int padding) const;

 private:
  bool subpixel() const { return parity_ != nullptr; }

 public:
  // Public only for nvcc: an extended __host__ __device__ lambda (KOKKOS_LAMBDA) needs a public
  // enclosing function in a GPU build.
  Tensor forward_subpixel(const Tensor& x) const;

 private:
  backend::ConvSpec spec_;
  std::vector<float> torch_weights_, bias_;
  std::shared_ptr<backend::ConvPrimitive> prim_;         // direct form
  std::shared_ptr<backend::ConvPrimitive> parity_;       // sub-pixel form, channel r * out + o
  std::shared_ptr<backend::ConvPrimitive> parity_rows_;  // the same without X padding
};

}  // namespace ufno
