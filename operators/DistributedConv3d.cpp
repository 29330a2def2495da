#include "operators/DistributedConv3d.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

namespace ufno {

std::array<int, 3> conv_output_extents(const backend::ConvSpec& s, const std::array<int, 3>& n) {
  return {backend::conv_output_extent(s, n[0]), backend::conv_output_extent(s, n[1]),
          backend::conv_output_extent(s, n[2])};
}

bool holds_whole_domain(MPI_Comm comm, const dist::PencilLayout<3>& in,
                        const dist::PencilLayout<3>& out) {
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
  return temporary_tensor("dconv.out", x.extent(0), channels, b.extent(0), b.extent(1),
                          b.extent(2));
}
}  // namespace

DistributedConv3d::DistributedConv3d(const Conv3d& conv, MPI_Comm comm,
                                     const dist::PencilLayout<3>& in,
                                     const dist::PencilLayout<3>& out, dist::ExchangeAlgorithm alg)
    : local_(conv.with_padding(0)),
      padded_(conv),
      whole_domain_(holds_whole_domain(comm, in, out)),
      halo_(std::make_shared<dist::HaloExchange<>>(comm, in, out, geometry(conv.spec()), alg)) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  out_box_ = out.box(rank);
  set_plane_conv(backend::PlaneConv3d::chosen_by_default());
}

void DistributedConv3d::set_plane_conv(bool on) {
  const auto& s = padded_.spec();
  if (on && kHostTensors && backend::PlaneConv3d::available() && !s.transposed && s.kernel == 3 &&
      s.stride == 1 && s.padding == 1 && s.activation == Activation::None)
    plane_.emplace(s.in_channels, s.out_channels, padded_.weights(), padded_.bias());
  else
    plane_.reset();
}

Tensor DistributedConv3d::forward(const Tensor& x) const {
  if (whole_domain_) return padded_.forward(x);
  Tensor g = halo_->gather(x);  // every rank takes part, even with nothing to compute
  const int C = local_.spec().out_channels;
  if (out_box_.empty()) return empty_block(x, C, out_box_);
  // The gathered block is (B, C, X + 2, Y + 2, T + 2) with zeros outside the domain: the
  // layout PlaneConv3d reads, halo cells standing in for its zero borders.
  const int T = int(g.extent(4)) - 2;
  if (!plane_ || !backend::PlaneConv3d::takes_blocks_with(T)) return local_.forward(g);
  Tensor y = empty_block(x, C, out_box_);
  const int Ci = g.extent(1), J = g.extent(2), Yp = g.extent(3), X = y.extent(2), Y = y.extent(3);
  const long in_case = long(Ci) * J * Yp * (T + 2), out_case = long(C) * X * Y * T;
  for (int b = 0; b < int(g.extent(0)); ++b)
    plane_->forward(
        backend::PlaneConv3d::Input{g.data() + b * in_case, long(J) * Yp * (T + 2), J, Yp - 2, T},
        Tensor(y.data() + b * out_case, 1, C, X, Y, T));
  return y;
}

DistributedConvTranspose3d::DistributedConvTranspose3d(const ConvTranspose3d& conv, MPI_Comm comm,
                                                       const dist::PencilLayout<3>& in,
                                                       const dist::PencilLayout<3>& out,
                                                       dist::ExchangeAlgorithm alg)
    : local_(conv.with_padding(0)),
      padded_(conv),
      whole_domain_(holds_whole_domain(comm, in, out)),
      halo_(std::make_shared<dist::HaloExchange<>>(comm, in, out, geometry(conv.spec()), alg)) {
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
