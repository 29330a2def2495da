// Repartition between every pair of a set of block layouts (every factorisation of the rank count
// over the three axes, on an odd-sized grid, so blocks are uneven and some ranks own nothing),
// plus halo layouts whose boxes overlap and reach outside the domain; both exchange algorithms.
#include <mpi.h>

#include <catch2/catch.hpp>

#include "core/InputError.hpp"
#include "decomposition/ProcessGrid.hpp"
#include "decomposition/Repartition.hpp"
#include "support/MpiUtil.hpp"

using namespace ufno;
using namespace ufno::dist;

namespace {

std::vector<std::array<int, 3>> factorisations(int p) {
  std::vector<std::array<int, 3>> f;
  for (int a = 1; a <= p; ++a)
    for (int b = 1; a * b <= p; ++b)
      if (p % (a * b) == 0) f.push_back({a, b, p / (a * b)});
  return f;
}

// A value that identifies the global cell and the leading index.
float value(int b, int c, int x, int y, int t) {
  return float(1 + b * 1000000 + c * 10000 + x * 400 + y * 20 + t);
}

template <class T>
typename Repartition<T>::View fill(const Box3& box, int nb, int nc) {
  typename Repartition<T>::View v("v", nb, nc, box.extent(0), box.extent(1), box.extent(2));
  auto h = Kokkos::create_mirror_view(v);
  for (int b = 0; b < nb; ++b)
    for (int c = 0; c < nc; ++c)
      for (int i = 0; i < box.extent(0); ++i)
        for (int j = 0; j < box.extent(1); ++j)
          for (int k = 0; k < box.extent(2); ++k) {
            const float f = value(b, c, box.lo[0] + i, box.lo[1] + j, box.lo[2] + k);
            h(b, c, i, j, k) = T(f);
          }
  Kokkos::deep_copy(v, h);
  return v;
}

// Counts cells that differ from the expected global values (zero outside the domain).
template <class T>
long mismatches(const typename Repartition<T>::View& v, const Box3& box,
                const std::array<int, 3>& n) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  long bad = 0;
  for (int b = 0; b < int(h.extent(0)); ++b)
    for (int c = 0; c < int(h.extent(1)); ++c)
      for (int i = 0; i < box.extent(0); ++i)
        for (int j = 0; j < box.extent(1); ++j)
          for (int k = 0; k < box.extent(2); ++k) {
            const int x = box.lo[0] + i, y = box.lo[1] + j, t = box.lo[2] + k;
            const bool inside = x >= 0 && y >= 0 && t >= 0 && x < n[0] && y < n[1] && t < n[2];
            const T want = inside ? T(value(b, c, x, y, t)) : T(0.f);
            if (!(h(b, c, i, j, k) == want)) ++bad;
          }
  return bad;
}

// Every block box grown by `h` cells on each side (overlapping, partly outside the domain).
PencilLayout<3> grown(const PencilLayout<3>& l, int h) {
  std::vector<Box3> boxes;
  for (Box3 b : l.boxes()) {
    if (!b.empty())
      for (int a = 0; a < 3; ++a) b.lo[a] -= h, b.hi[a] += h;
    boxes.push_back(b);
  }
  return PencilLayout<3>(l.global(), boxes);
}

}  // namespace

TEMPLATE_TEST_CASE("Repartition moves data between any two layouts", "[mpi][repartition]", float,
                   complexf) {
  const std::array<int, 3> n{7, 5, 3};
  const int P = test::mpi_size(), me = test::mpi_rank();
  const int nb = 2, nc = 3;
  for (auto alg : {ExchangeAlgorithm::Alltoallv, ExchangeAlgorithm::PointToPoint}) {
    for (auto pa : factorisations(P))
      for (auto pb : factorisations(P)) {
        const auto la = PencilLayout<3>::block(n, pa), lb = PencilLayout<3>::block(n, pb);
        Repartition<TestType> fwd(MPI_COMM_WORLD, la, lb, alg), back(MPI_COMM_WORLD, lb, la, alg);
        auto a = fill<TestType>(la.box(me), nb, nc);
        auto b = fwd.apply(a);
        INFO("parts " << pa[0] << "x" << pa[1] << "x" << pa[2] << " -> " << pb[0] << "x" << pb[1]
                      << "x" << pb[2] << " rank " << me);
        CHECK(mismatches<TestType>(b, lb.box(me), n) == 0);
        auto a2 = back.apply(b);
        CHECK(mismatches<TestType>(a2, la.box(me), n) == 0);
        // Halo gather: boxes grown by one cell, overlapping and reaching outside the domain.
        const auto halo = grown(lb, 1);
        Repartition<TestType> gather(MPI_COMM_WORLD, la, halo, alg);
        CHECK(mismatches<TestType>(gather.apply(a), halo.box(me), n) == 0);
      }
  }
}

TEST_CASE("block layouts split unevenly and may leave ranks empty", "[repartition]") {
  auto l = PencilLayout<3>::block({7, 5, 3}, {3, 1, 4});
  CHECK(l.is_partition());
  CHECK(l.box(0).extents() == std::array<int, 3>{3, 5, 1});  // 7 = 3 + 2 + 2
  CHECK(l.box(4).extents() == std::array<int, 3>{2, 5, 1});
  CHECK(l.box(3).empty());  // 3 cells of T over 4 blocks
  CHECK(!grown(l, 1).is_partition());
}

TEST_CASE("process grids are parsed, chosen and checked against the ranks and the tensor",
          "[mpi][grid]") {
  const int P = test::mpi_size();
  const std::vector<int> n{16, 24, 8};
  auto g = ProcessGrid::from_string(MPI_COMM_WORLD, "auto", n);
  CHECK(g.parts()[0] * g.parts()[1] == P);
  CHECK(g.parts()[2] == 1);
  CHECK(ProcessGrid::from_string(MPI_COMM_WORLD, "1x" + std::to_string(P), n).parts() ==
        std::vector<int>{1, P, 1});
  CHECK_THROWS_WITH(ProcessGrid::from_string(MPI_COMM_WORLD, std::to_string(P + 1) + "x1", n),
                    Catch::StartsWith("--grid: ") && Catch::Contains("but the job has"));
  CHECK_THROWS_WITH(ProcessGrid::from_string(MPI_COMM_WORLD, "2by2", n),
                    Catch::Contains("is not a grid"));
  if (P > 1)  // Y has 1 cell here: it cannot be split
    CHECK_THROWS_WITH(
        ProcessGrid::from_string(MPI_COMM_WORLD, "1x" + std::to_string(P), {16, 1, 8}),
        Catch::Contains("Y is split into " + std::to_string(P) + " blocks but has only 1 cells"));
  CHECK(ProcessGrid::automatic(4, {104, 208, 32}) == std::vector<int>{2, 2, 1});
  CHECK(ProcessGrid::automatic(4, {208, 208, 32}) == std::vector<int>{2, 2, 1});
  CHECK(ProcessGrid::automatic(2, {104, 208, 32}) == std::vector<int>{1, 2, 1});
  CHECK_THROWS_WITH(ProcessGrid::from_string(MPI_COMM_WORLD, "1x" + std::to_string(P) + "x2", n),
                    Catch::Contains("splits time"));
}

TEST_CASE("process grids over three space axes: parsed, chosen and checked", "[mpi][grid]") {
  const int P = test::mpi_size();
  const std::vector<int> n{6, 40, 40, 24};
  auto g = ProcessGrid::from_string(MPI_COMM_WORLD, "auto", n);
  CHECK(g.axes() == 4);
  CHECK(g.parts()[0] * g.parts()[1] * g.parts()[2] == P);
  CHECK(g.parts()[3] == 1);
  CHECK(ProcessGrid::from_string(MPI_COMM_WORLD, "1x1x" + std::to_string(P), n).parts() ==
        std::vector<int>{1, 1, P, 1});
  CHECK(ProcessGrid::from_string(MPI_COMM_WORLD, "1x" + std::to_string(P) + "x1x1", n).parts() ==
        std::vector<int>{1, P, 1, 1});
  CHECK_THROWS_WITH(ProcessGrid::from_string(MPI_COMM_WORLD, "1x" + std::to_string(P), n),
                    Catch::Contains("one part per space axis A1, A2, A3"));
  if (P > 1)
    CHECK_THROWS_WITH(
        ProcessGrid::from_string(MPI_COMM_WORLD, std::to_string(P) + "x1x1", {1, 4, 4, 3}),
        Catch::Contains("A1 is split into " + std::to_string(P) + " blocks but has only 1 cells"));
  // The busiest block's surface decides: the long axes are split, the thin one is not.
  CHECK(ProcessGrid::automatic(4, {5, 100, 100, 24}) == std::vector<int>{1, 2, 2, 1});
  CHECK(ProcessGrid::automatic(8, {40, 40, 25, 24}) == std::vector<int>{2, 2, 2, 1});
  CHECK(ProcessGrid::automatic(2, {40, 40, 25, 24}) == std::vector<int>{1, 2, 1, 1});
}
