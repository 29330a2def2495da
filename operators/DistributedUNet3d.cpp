#include "operators/DistributedUNet3d.hpp"

#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "operators/TensorOps.hpp"

namespace ufno {

using dist::PencilLayout;

DistributedUNet3d::DistributedUNet3d(const UNet3d& unet, MPI_Comm comm, std::array<int, 3> n,
                                     std::array<int, 3> parts, dist::ExchangeAlgorithm alg,
                                     bool plane_conv, WinogradTiles winograd, bool plane_bf16) {
  for (int a = 0; a < 3; ++a)
    if (n[a] % 8 != 0)
      throw std::invalid_argument("DistributedUNet3d: extents must be divisible by 8");
  const auto& p = unet.parts();
  const auto n1 = conv_output_extents(p.conv1.spec(), n);
  const auto n2 = conv_output_extents(p.conv2.spec(), n1);
  const auto n3 = conv_output_extents(p.conv3.spec(), n2);
  const PencilLayout<3> l0 = PencilLayout<3>::block(n, parts),
                        l1 = PencilLayout<3>::block(n1, parts),
                        l2 = PencilLayout<3>::block(n2, parts),
                        l3 = PencilLayout<3>::block(n3, parts);
  // Every level is a block layout of the same grid: holding the finest whole means holding all.
  // A rank holding the whole domain runs the single-process U-Net; the distributed layers and
  // their weight copies are not built.
  if (holds_whole_domain(comm, l0, l0)) {
    whole_ = unet;
    return;
  }
  conv1_.emplace(p.conv1, comm, l0, l1, alg);
  conv2_.emplace(p.conv2, comm, l1, l2, alg);
  conv2_1_.emplace(p.conv2_1, comm, l2, l2, alg);
  conv3_.emplace(p.conv3, comm, l2, l3, alg);
  conv3_1_.emplace(p.conv3_1, comm, l3, l3, alg);
  deconv2_.emplace(p.deconv2, comm, l3, l2, alg);
  deconv1_.emplace(p.deconv1, comm, l2, l1, alg);
  deconv0_.emplace(p.deconv0, comm, l1, l0, alg);
  output_.emplace(p.output, comm, l0, l0, alg);
  if (!plane_conv) output_->set_plane_conv(false);
  output_->set_winograd(winograd);
  output_->set_plane_bf16(plane_bf16);
}

void DistributedUNet3d::forward_streamed(const Tensor& x, const UNet3d::RowSink& sink) const {
  if (!whole_)
    throw std::logic_error("DistributedUNet3d: streaming output rows needs the whole domain");
  whole_->forward_streamed(x, sink);
}

Tensor DistributedUNet3d::forward(const Tensor& x) const {
  if (whole_) return whole_->forward(x);
  using Scope = LayerTimer::Scope;
  Tensor e1, e2, e3, d2, d1, d0, cat;
  {
    Scope t("  u-net encoder convs");
    e1 = conv1_->forward(x);
    e2 = conv2_1_->forward(conv2_->forward(e1));
    e3 = conv3_1_->forward(conv3_->forward(e2));
  }
  {
    Scope t("  u-net decoder deconvs");
    d2 = deconv2_->forward(e3);
    e3 = Tensor();
    d1 = deconv1_->forward(concat_channels(e2, d2));
    e2 = d2 = Tensor();
    d0 = deconv0_->forward(concat_channels(e1, d1));
    e1 = d1 = Tensor();
  }
  {
    Scope t("  u-net concat");
    cat = concat_channels(x, d0);
  }
  Scope t("  u-net output conv");
  return output_->forward(cat);
}

}  // namespace ufno
