#pragma once
// The U-Net branch on a distributed tensor: the same levels as UNet3d, each level's tensors in the
// block layout of that level's extents on one process grid, so skip connections and upsampled
// features meet on the same rank and concatenate locally. A rank that holds the whole domain (one
// rank) runs the single-process UNet3d, whose tensors stay channels last inside.
#include <array>
#include <optional>

#include "operators/DistributedConv3d.hpp"
#include "operators/UNet3d.hpp"

namespace ufno {

class DistributedUNet3d {
 public:
  // n: extents of the input (each divisible by 8); parts: the process grid.
  // plane_conv: whether the output convolution may take backend::PlaneConv3d where it applies;
  // winograd: which Winograd tiles that kernel runs; plane_bf16: their products in bf16.
  DistributedUNet3d(const UNet3d& unet, MPI_Comm comm, std::array<int, 3> n,
                    std::array<int, 3> parts, dist::ExchangeAlgorithm alg, bool plane_conv = true,
                    WinogradTiles winograd = WinogradTiles::xy, bool plane_bf16 = false);
  Tensor forward(const Tensor& x) const;
  // A rank holding the whole domain can stream the output rows (UNet3d::forward_streamed).
  bool streams_rows() const { return whole_.has_value(); }
  void forward_streamed(const Tensor& x, const UNet3d::RowSink& sink) const;

 private:
  std::optional<UNet3d> whole_;  // set on a rank that holds the whole domain
  std::optional<DistributedConv3d> conv1_, conv2_, conv2_1_, conv3_, conv3_1_, output_;
  std::optional<DistributedConvTranspose3d> deconv2_, deconv1_, deconv0_;
};

}  // namespace ufno
