#pragma once
// Conv3d and ConvTranspose3d on a distributed tensor: a halo exchange gathers the input cells this
// rank's output block needs (zeros outside the domain), then the single-process layer runs on the
// gathered block without padding. Input and output are block layouts of the same process grid
// over the input and output extents.
#include <memory>
#include <optional>

#include "decomposition/HaloExchange.hpp"
#include "operators/Conv3d.hpp"
#include "operators/ConvTranspose3d.hpp"
#include "operators/backend/PlaneConv3d.hpp"

namespace ufno {

class DistributedConv3d {
 public:
  DistributedConv3d(const Conv3d& conv, MPI_Comm comm, const dist::PencilLayout<3>& in,
                    const dist::PencilLayout<3>& out, dist::ExchangeAlgorithm alg);
  Tensor forward(const Tensor& x) const;
  // Whether gathered blocks run through backend::PlaneConv3d instead of the convolution backend
  // (as UNet3d's output convolution: 3x3x3, stride 1, no activation, host tensors, AVX-512,
  // bf16 off, UFNO_PLANE_CONV not 0; and then only blocks whose T extent it takes).
  bool plane_conv() const { return plane_.has_value(); }
  void set_plane_conv(bool on);
  // Whether the plane kernel runs Winograd tiles (backend/PlaneConv3d.hpp; on by default).
  void set_plane_bf16(bool on) {
    if (plane_) plane_->set_bf16(on);
  }
  void set_winograd(WinogradTiles tiles) {
    if (plane_) plane_->set_winograd(tiles);
  }

 private:
  Conv3d local_;   // padding 0
  Conv3d padded_;  // the layer as given, for a rank that holds the whole domain
  std::optional<backend::PlaneConv3d> plane_;
  bool whole_domain_ = false;
  std::shared_ptr<dist::HaloExchange<>> halo_;
  dist::Box3 out_box_;
};

class DistributedConvTranspose3d {
 public:
  DistributedConvTranspose3d(const ConvTranspose3d& conv, MPI_Comm comm,
                             const dist::PencilLayout<3>& in, const dist::PencilLayout<3>& out,
                             dist::ExchangeAlgorithm alg);
  Tensor forward(const Tensor& x) const;

 private:
  ConvTranspose3d local_;   // padding 0: the full, uncropped output of the gathered block
  ConvTranspose3d padded_;  // the layer as given, for a rank that holds the whole domain
  bool whole_domain_ = false;
  std::shared_ptr<dist::HaloExchange<>> halo_;
  dist::Box3 out_box_;
  std::array<int, 3> crop_offset_{0, 0, 0};
};

// True when this rank's blocks of both layouts are their whole domains: nothing is exchanged.
bool holds_whole_domain(MPI_Comm comm, const dist::PencilLayout<3>& in,
                        const dist::PencilLayout<3>& out);

// Output extents of a convolution layer for input extents n.
std::array<int, 3> conv_output_extents(const backend::ConvSpec& s, const std::array<int, 3>& n);

}  // namespace ufno
