#pragma once
// A 3x3x3, stride-1 convolution (bias, no activation) from a PaddedSlab to channels-first rows,
// vectorised along T with AVX-512: the U-Net's 72 -> 36 output layer.
//
// Why not oneDNN here: its direct kernels vectorise over output channels in blocks of 16, so 36
// output channels cost what 48 do (measured: 36 and 48 take the same time, 32 two thirds).
// Vectorising along T instead (along the flattened plane when T is not a multiple of 32) wastes
// at most the two T border cells of every Y line, and the slab's zero borders make every
// neighbour a fixed offset, so there are no masks (masked AVX-512 loads were 3-4x slower than
// plain ones on our CPUs). Register block: 2 vectors of 16 cells x 12 output channels, 24
// accumulators; input channels in chunks of 8 so a chunk's input and weights stay in L1.
#include <cstdint>
#include <vector>

#include "core/RunOptions.hpp"
#include "operators/PaddedSlab.hpp"

namespace ufno::backend {

class PlaneConv3d {
 public:
  // True when this CPU has AVX-512F (and the library was built for x86-64).
  static bool available();
  // Whether the layers that can use it should (UNet3d, DistributedConv3d): available and tensors
  // in host memory (RunOptions::plane_conv, UFNO_PLANE_CONV=0, turns it off). With bf16 layers
  // too: in Winograd tiles it is faster than oneDNN's bf16 kernel, in its direct form slower
  // (DistributedNet3d then leaves that layer to oneDNN).
  static bool chosen_by_default();

  PlaneConv3d() = default;
  // PyTorch layout: weights (out, in, 3, 3, 3), bias (out) or empty.
  PlaneConv3d(int in_channels, int out_channels, const std::vector<float>& weights,
              const std::vector<float>& bias);

  // out (1, out_channels, R, Y, T) channels first = slab rows 1 .. R of `in` convolved, which
  // reads slab rows 0 .. R + 1 (R + 2 <= in.rows()); in.channels() == in_channels.
  void forward(const PaddedSlab& in, const Tensor& out) const;

  // Any block laid out like a PaddedSlab without its spare channel: in_channels channels of
  // `rows` X rows, each an (ny + 2) x (nt + 2) plane whose border cells hold zeros or halo values
  // (a halo-gathered block of a distributed tensor, say), channel c at data + c * channel_stride.
  struct Input {
    const float* data = nullptr;
    long channel_stride = 0;
    int rows = 0, ny = 0, nt = 0;
  };
  // Whether forward(Input) takes blocks with this nt: the kernel then runs along whole T lines
  // and reads nothing outside the block (nt a multiple of 32). Other nt need a PaddedSlab.
  static bool takes_blocks_with(int nt);
  void forward(const Input& in, const Tensor& out) const;

  // WinogradTiles::x: tiles of 4 output rows by Winograd F(4, 3) along X (half the direct
  // kernel's multiply-adds, results within float32 rounding of its); ::xy (the default): along
  // whole lines (T a multiple of 32) tiles of 4 rows by 4 Y lines by F(4x4, 3x3) over X and Y
  // (half the X tiles' multiply-adds again, relative error about twice theirs), the lines left
  // over in X tiles; ::off: every row by the direct kernel. Rows left over from the tiles (fewer
  // than 4) always run directly.
  void set_winograd(WinogradTiles tiles) { tiles_ = tiles; }
  WinogradTiles winograd() const { return tiles_; }

  // The Winograd tiles' products in bfloat16 with float32 sums (RunOptions::bf16): the
  // transformed inputs and weights rounded to bf16, two input channels a VDPBF16PS, which makes
  // twice the multiply-adds of a float32 FMA; transforms, sums and output stay float32. Throws
  // std::invalid_argument on a CPU without AVX512_BF16 (bf16_available). Both kinds of tiles;
  // rows outside them (fewer than 4 left) stay float32.
  static bool bf16_available();
  void set_bf16(bool on);
  bool bf16() const { return bf16_; }

  int in_channels() const { return ic_; }
  int out_channels() const { return oc_; }

 private:
  void run(const Input& in, const Tensor& out) const;

  int ic_ = 0, oc_ = 0;
  std::vector<float> packed_;      // (in, 27 taps, out): a tap's output channels side by side
  std::vector<float> bias_;        // zeros when the layer has none
  std::vector<float> winograd_;    // (6 points, in, 9 (Y, T) taps, out): the X taps transformed
  std::vector<float> winograd2d_;  // (36 (X, Y) points, in, 3 T taps, out)
  // The same in bf16, (6 points, in / 2 pairs, 9 taps, out) of two bf16 (the even channel low).
  std::vector<std::uint32_t> winograd_bf16_;
  std::vector<std::uint32_t> winograd2d_bf16_;  // (36 points, in / 2 pairs, 3 T taps, out)
  WinogradTiles tiles_ = WinogradTiles::xy;
  bool bf16_ = false;
};

}  // namespace ufno::backend
