#pragma once
// The networks' head, second(act(first(x))) per cell (fc1 -> ReLU -> fc2), computed on the cells
// a crop keeps and nowhere else, fused: one pass reads each kept cell's channels once, its hidden
// channels (128 in the paper models) never leave the registers (a GPU thread's, or a host
// vector's), and its few output channels are written once. It replaces a bias fill, a product
// accumulating onto it, an activation pass and a crop over the whole padded grid (a 128-channel
// hidden tensor of the padded grid on the whole-tensor plan: 354 MB at paper size).
//
// Kernels: on a GPU, or the whole-tensor plan, a thread per kept cell, which reads the cell's
// input channels into registers once (up to kMaxRegisterIn of them; beyond, it reads them from
// memory again for every hidden channel, which made the head 10 % of a U-FNO pass on an H100);
// on the host's streaming
// plan an iteration takes 16 kept cells at a time, with AVX-512 where the CPU has it (the hidden
// channels in blocks of 8, 8 x 16 sums in registers) and plain vectorisable loops elsewhere.
#include <vector>

#include "core/Activation.hpp"
#include "core/Tensor.hpp"
#include "decomposition/Box.hpp"
#include "operators/Linear.hpp"

namespace ufno {

class MlpHead {
 public:
  static constexpr int kMaxOut = 4;  // output channels the fused kernels take
  // Input channels the register kernel takes (rounded up to kInStep, zero-padded).
  static constexpr int kInStep = 16, kMaxRegisterIn = 128;

  MlpHead() = default;
  // second's input channels are first's outputs; second has at most kMaxOut outputs;
  // act is ReLU, LeakyReLU (slope), GELU or None.
  MlpHead(const Linear& first, Activation act, const Linear& second, float slope = 0.f);

  // out (B, out_channels(), box extents) = second(act(first(x))) at the cells of `box`, a box of
  // x's grid indices (inside x's extents); x is (B, in_channels(), grid).
  void forward(const Tensor& x, const dist::Box<3>& box, const Tensor& out) const;
  // The same into a temporary of the box's extents.
  Tensor forward(const Tensor& x, const dist::Box<3>& box) const;

  int in_channels() const { return in_; }
  int hidden_channels() const { return hidden_; }
  int out_channels() const { return out_; }

 private:
  int in_ = 0, hidden_ = 0, padded_ = 0, out_ = 0;  // padded_: hidden_ rounded up to 8
  int in_padded_ = 0;                               // in_ rounded up to kInStep
  Activation act_ = Activation::None;
  float slope_ = 0.f;
  // Rows beyond hidden_ are zero (their hidden value is act(0) = 0 times a zero weight), and so
  // are the columns beyond in_.
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> w1_;  // (padded, in_padded)
  Kokkos::View<float*, DeviceSpace> b1_;                        // (padded)
  Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace> w2_;  // (out, padded)
  Kokkos::View<float*, DeviceSpace> b2_;                        // (out)
  // The host AVX-512 kernel's copy of w1: (padded / 8, in, 8), a block's 8 weights of one input
  // channel side by side; empty where that kernel cannot run.
  std::vector<float> w1_blocks_;
};

}  // namespace ufno
