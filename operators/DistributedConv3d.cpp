#include "operators/DistributedConv3d.hpp"
#include "operators/Parallel.hpp"

namespace ufno {

std::array<int, 3> conv_output_extents(const backend::ConvSpec& s, const std::array<int, 3>& n) {
  return {backend::conv_output_extent(s, n[0]), backend::conv_output_extent(s, n[1]),
          backend::conv_output_extent(s, n[2])};
}

bool holds_whole_domain(MPI_Comm comm, const dist::PencilLayout& in,
                        const dist::PencilLayout& out) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return in.box(rank) == dist::domain_box(in.global()) &&
         out.box(rank) == dist::domain_box(out.global());
}

namespace {
dist::ConvGeometry geometry(const backend::ConvSpec& s) {
  return {s.kernel, s.stride, s.padding, s.transposed};
}
Tensor empty_block(const Tensor& x, int channels, const dist::Box3& b) {
  return empty_tensor("dconv.out", x.extent(0), channels, b.extent(0), b.extent(1), b.extent(2));
}
}  // namespace

DistributedConv3d::DistributedConv3d(const Conv3d& conv, MPI_Comm comm,
                                     const dist::PencilLayout& in, const dist::PencilLayout& out,
                                     dist::ExchangeAlgorithm alg)
    : local_(conv.with_padding(0)),
      padded_(conv),
      whole_domain_(holds_whole_domain(comm, in, out)),
      halo_(std::make_shared<dist::HaloExchange>(comm, in, out, geometry(conv.spec()), alg)) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  out_box_ = out.box(rank);
}

Tensor DistributedConv3d::forward(const Tensor& x) const {
  if (whole_domain_) return padded_.forward(x);
  Tensor g = halo_->gather(x);  // every rank takes part, even with nothing to compute
  if (out_box_.empty()) return empty_block(x, local_.spec().out_channels, out_box_);
  return local_.forward(g);
}

DistributedConvTranspose3d::DistributedConvTranspose3d(const ConvTranspose3d& conv, MPI_Comm comm,
                                                       const dist::PencilLayout& in,
                                                       const dist::PencilLayout& out,
                                                       dist::ExchangeAlgorithm alg)
    : local_(conv.with_padding(0)),
      padded_(conv),
      whole_domain_(holds_whole_domain(comm, in, out)),
      halo_(std::make_shared<dist::HaloExchange>(comm, in, out, geometry(conv.spec()), alg)) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  out_box_ = out.box(rank);
  // The uncropped local output starts at global index stride * gather.lo - padding.
  const auto& s = conv.spec();
  for (int a = 0; a < 3; ++a)
    crop_offset_[a] = out_box_.lo[a] - (s.stride * halo_->gather_box().lo[a] - s.padding);
}

Tensor DistributedConvTranspose3d::forward(const Tensor& x) const {
  if (whole_domain_) return padded_.forward(x);
  Tensor g = halo_->gather(x);
  Tensor y = empty_block(x, local_.spec().out_channels, out_box_);
  if (out_box_.empty()) return y;
  Tensor full = local_.forward(g);
  const auto o = crop_offset_;
  ufno::parallel_for(
      "ufno::dconvT_crop", range5(y), KOKKOS_LAMBDA(int b, int c, int i, int j, int k) {
        y(b, c, i, j, k) = full(b, c, o[0] + i, o[1] + j, o[2] + k);
      });
  return y;
}

}  // namespace ufno
