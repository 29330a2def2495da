#include "operators/DistributedPadding.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

namespace ufno {

using dist::Box3;
using dist::PencilLayout;

DistributedPadding::DistributedPadding(MPI_Comm comm, std::array<int, 3> n, std::array<int, 3> pad,
                                       std::array<int, 3> parts, dist::ExchangeAlgorithm alg)
    : n_(n) {
  MPI_Comm_rank(comm, &rank_);
  const std::array<int, 3> np{n[0] + pad[0], n[1] + pad[1], n[2] + pad[2]};
  unpadded_ = PencilLayout<3>::block(n, parts);
  padded_ = PencilLayout<3>::block(np, parts);
  // The unpadded cells each padded block reads: X zero-padded, Y and T replicate the last cell.
  std::vector<Box3> src;
  for (const Box3& p : padded_.boxes()) {
    Box3 s;
    const bool all_zero = p.empty() || p.lo[0] >= n[0];
    if (!all_zero) {
      s.lo[0] = p.lo[0];
      s.hi[0] = std::min(p.hi[0], n[0]);
      for (int a = 1; a < 3; ++a) {
        s.lo[a] = std::min(p.lo[a], n[a] - 1);
        s.hi[a] = std::max(std::min(p.hi[a], n[a]), s.lo[a] + 1);
      }
    }
    src.push_back(s);
  }
  sources_ = PencilLayout<3>(n, src);
  gather_ = std::make_unique<dist::Repartition<float>>(comm, unpadded_, sources_, alg);
  crop_ = std::make_unique<dist::Repartition<float>>(comm, padded_,
                                                     PencilLayout<3>(np, unpadded_.boxes()), alg);
  // The kept cells: each padded block within the unpadded grid (they tile it, as the blocks do).
  Box3 domain;
  domain.hi = n;
  std::vector<Box3> kept;
  for (const Box3& p : padded_.boxes()) kept.push_back(p.intersect(domain));
  kept_in_place_ = kept == unpadded_.boxes();
  crop_kept_ =
      std::make_unique<dist::Repartition<float>>(comm, PencilLayout<3>(n, kept), unpadded_, alg);
  const Box3 mine = padded_.box(rank_);
  for (int a = 0; a < 3; ++a) {
    kept_box_.lo[a] = kept[rank_].lo[a] - mine.lo[a];
    kept_box_.hi[a] = kept_box_.lo[a] + kept[rank_].extent(a);
  }
}

Tensor DistributedPadding::pad(const Tensor& in) const {
  const int B = in.extent(0), C = in.extent(4);
  const Box3 pb = padded_.box(rank_), sb = sources_.box(rank_);
  // Channel-last block -> channel-first block.
  Tensor cf = temporary_tensor("dpad.cf", B, C, in.extent(1), in.extent(2), in.extent(3));
  ufno::parallel_for(
      "ufno::dpad_permute", range5(cf),
      KOKKOS_LAMBDA(int b, int c, int x, int y, int t) { cf(b, c, x, y, t) = in(b, x, y, t, c); });
  Tensor s = gather_->apply(cf);
  Tensor out = temporary_tensor("dpad.out", B, C, pb.extent(0), pb.extent(1), pb.extent(2));
  const int X = n_[0], Y = n_[1], T = n_[2];
  const auto plo = pb.lo, slo = sb.lo;
  ufno::parallel_for(
      "ufno::dpad_fill", range5(out), KOKKOS_LAMBDA(int b, int c, int i, int j, int k) {
        const int x = plo[0] + i, y = plo[1] + j, t = plo[2] + k;
        out(b, c, i, j, k) =
            x < X ? s(b, c, x - slo[0], (y < Y ? y : Y - 1) - slo[1], (t < T ? t : T - 1) - slo[2])
                  : 0.f;
      });
  return out;
}

}  // namespace ufno
