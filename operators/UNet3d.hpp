#pragma once
// The U-Net branch of the U-Fourier layers (reference class U_net): three stride-2 encoder levels
// (conv1; conv2 + conv2_1; conv3 + conv3_1), three transposed-convolution decoder levels joined to
// the encoder by channel concatenation (skip first), and a 3x3x3 output convolution. Every extent
// of the input must be divisible by 8. Input and output are channels first like every layer;
// inside, the tensors are channels last (the convolution kernels' layout, so no reorders), and
// the top level (the last transposed convolution, its join with the input and the output
// convolution) runs in slabs of X rows: its 72-channel join and parity outputs, 309 MB at paper
// size, never exist for the whole grid.
#include <functional>
#include <string>

#include "core/ExecutionPlan.hpp"
#include "operators/Conv3d.hpp"
#include "operators/ConvTranspose3d.hpp"
#include "operators/backend/PlaneConv3d.hpp"

namespace ufno {

class UNet3d {
 public:
  UNet3d() = default;
  // bf16: the convolutions in bfloat16 (RunOptions::bf16); the output convolution stays in
  // float32 where PlaneConv3d runs it, whose Winograd tiles are faster than oneDNN's bf16 kernel
  // (a paper U-FNO case 2.45-2.53 s against 2.76 s as a process on 2 threads).
  static UNet3d load(const WeightSource& w, const std::string& prefix, int channels, double eps,
                     float slope, bool bf16 = false);
  Tensor forward(const Tensor& x) const;
  // Receives the output rows [r0, r0 + R) of case b channels first, (1, C, R, Y, T).
  using RowSink = std::function<void(int b, int r0, const Tensor& rows)>;
  // forward() without an output tensor: each slab of output rows goes to `sink` once, in order,
  // and only after the U-Net has read the input rows it covers for the last time, so the sink
  // may overwrite those rows of x (a Fourier layer finishing in place, FourierLayerUpdate).
  void forward_streamed(const Tensor& x, const RowSink& sink) const;

  struct Parts {
    Conv3d conv1, conv2, conv2_1, conv3, conv3_1, output;
    ConvTranspose3d deconv2, deconv1, deconv0;
  };
  const Parts& parts() const { return p_; }
  // Output rows (along X) per slab of the top level; any positive number gives the same result.
  void set_rows_per_slab(int rows) { rows_per_slab_ = rows > 0 ? rows : 1; }
  // Whether the output convolution runs as backend::PlaneConv3d (on by default where the tensors
  // live in host memory, the CPU has AVX-512 and the convolutions are float32; RunOptions::
  // plane_conv turns it off) or through the convolution backend; both give the same result.
  bool plane_conv() const { return use_plane_conv_; }
  void set_plane_conv(bool on) {
    use_plane_conv_ = on && kHostTensors && backend::PlaneConv3d::available();
  }
  // Whether PlaneConv3d runs tiles of 4 rows by Winograd (backend/PlaneConv3d.hpp; on by default).
  void set_winograd(WinogradTiles tiles) { plane_output_.set_winograd(tiles); }
  // Whether those tiles' products run in bf16 (backend::PlaneConv3d::set_bf16: throws on a CPU
  // without AVX512_BF16).
  void set_plane_bf16(bool on) { plane_output_.set_bf16(on); }

 private:
  // conv1 (stride 2) in slabs of output rows, written straight into its channels-last output:
  // the library's channels-last copy of the whole input never exists.
  Tensor conv1_in_slabs(const Tensor& x) const;
  // The top level, deconv0 -> join with the input -> output convolution, in slabs of X rows.
  void top_level_in_slabs(const Tensor& x, const Tensor& cat1, const RowSink& sink) const;

 public:
  // Public only for nvcc: an extended __host__ __device__ lambda (KOKKOS_LAMBDA) needs a public
  // enclosing function in a GPU build.
  // Consecutive slabs share a parity-output row of deconv0 (the halo); the last row a slab
  // made is kept for the next one instead of being computed twice (a fifth of deconv0's work
  // with 8 rows per slab).
  struct ParityCarry {
    Tensor row;      // (1, 1, n1 + 1, n2 + 1, 8 C); empty: nothing is carried (one slab)
    int index = -1;  // which parity-output row it holds; -1: none
  };
  // deconv0's parity-output rows [q0, q1) of case b, channels last, from cat1 (B, n0, n1, n2, C).
  Tensor parity_rows(const Tensor& cat1, int b, int q0, int q1, ParityCarry& carry) const;

 private:
  Parts p_;
  Conv3d conv1_rows_;   // conv1 without X padding, for slabs with halo rows
  Conv3d output_rows_;  // the output convolution without X padding, for slabs with halo rows
  backend::PlaneConv3d plane_output_;  // the same on padded slabs, vectorised along the plane
  bool use_plane_conv_ = false;

  int rows_per_slab_ = 8;
  // Rows per slab of a level of n rows: rows_per_slab_ on the streaming plan, all of them on the
  // whole-tensor plan (one slab, whole-tensor kernels; core/ExecutionPlan.hpp).
  int slab_rows(int n) const { return execution_plan().streams_rows ? rows_per_slab_ : n; }
};

}  // namespace ufno
