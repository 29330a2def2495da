#pragma once
// Helpers of the MPI tests: every rank builds the same global tensor from a seed, takes its block,
// and compares its block of a distributed result with its block of the single-process result;
// errors are summed over ranks.
#include <mpi.h>

#include <cmath>
#include <vector>

#include "core/Tensor.hpp"
#include "decomposition/PencilLayout.hpp"

namespace ufno::test {

inline int mpi_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

inline int mpi_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Process grids (px, py, 1) for p ranks.
inline std::vector<std::array<int, 3>> grids_2d(int p) {
  std::vector<std::array<int, 3>> g;
  for (int a = 1; a <= p; ++a)
    if (p % a == 0) g.push_back({a, p / a, 1});
  return g;
}

// Process grids (pa, pb, pc, 1) over three space axes for p ranks: every factorisation.
inline std::vector<std::array<int, 4>> grids_3d(int p) {
  std::vector<std::array<int, 4>> g;
  for (int a = 1; a <= p; ++a)
    for (int b = 1; a * b <= p; ++b)
      if (p % (a * b) == 0) g.push_back({a, b, p / (a * b), 1});
  return g;
}

// The block `b` of the spatial dims (2, 3, 4) of a channel-first tensor, or of dims (1, 2, 3) of
// a channel-last one.
inline Tensor block_of(const Tensor& g, const dist::Box3& b, bool channel_last = false) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
  Shape5 s = shape_of(g);
  if (channel_last)
    s = {s[0], b.extent(0), b.extent(1), b.extent(2), s[4]};
  else
    s = {s[0], s[1], b.extent(0), b.extent(1), b.extent(2)};
  TensorT<Kokkos::HostSpace> out("block", s[0], s[1], s[2], s[3], s[4]);
  for (int n = 0; n < s[0]; ++n)
    for (int c = 0; c < s[1]; ++c)
      for (int i = 0; i < s[2]; ++i)
        for (int j = 0; j < s[3]; ++j)
          for (int k = 0; k < s[4]; ++k)
            out(n, c, i, j, k) = channel_last ? h(n, b.lo[0] + c, b.lo[1] + i, b.lo[2] + j, k)
                                              : h(n, c, b.lo[0] + i, b.lo[1] + j, b.lo[2] + k);
  Tensor d = make_tensor("block", s);
  Kokkos::deep_copy(d, out);
  return d;
}

// Relative L2 difference between the distributed blocks and the reference, over all ranks.
inline double global_rel_l2(const Tensor& local, const Tensor& reference_global,
                            const dist::Box3& b) {
  Tensor ref = block_of(reference_global, b);
  auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), local);
  auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ref);
  double sums[2] = {0, 0};
  if (hl.span() != hr.span())
    sums[0] = 1e30;
  else
    for (std::size_t i = 0; i < hl.span(); ++i) {
      const double d = double(hl.data()[i]) - hr.data()[i];
      sums[0] += d * d;
      sums[1] += double(hr.data()[i]) * hr.data()[i];
    }
  double tot[2];
  MPI_Allreduce(sums, tot, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(tot[0] / (tot[1] > 0 ? tot[1] : 1));
}

}  // namespace ufno::test
