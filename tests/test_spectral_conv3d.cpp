// SpectralConv3d (per-axis transforms with truncation after each) against a direct-DFT reference
// and against the PyTorch rfftn/irfftn layer saved as a fixture.
#include <catch2/catch.hpp>

#include "reference/SpectralConv3d.hpp"
#include "support/Naive.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

std::vector<HostArray> random_corners(int in, int out, std::array<int, 3> m, unsigned seed) {
  std::vector<HostArray> c(4);
  for (int q = 0; q < 4; ++q)
    c[q] = test::random_array({std::size_t(in), std::size_t(out), std::size_t(m[0]),
                               std::size_t(m[1]), std::size_t(m[2]), 2},
                              seed + q);
  return c;
}

std::array<std::vector<test::cd>, 4> as_complex(const std::vector<HostArray>& c) {
  std::array<std::vector<test::cd>, 4> r;
  for (int q = 0; q < 4; ++q)
    for (std::size_t i = 0; i < c[q].data.size(); i += 2)
      r[q].emplace_back(c[q].data[i], c[q].data[i + 1]);
  return r;
}

}  // namespace

TEST_CASE("SpectralConv3d matches a direct DFT", "[spectral]") {
  struct Case {
    test::Dims5 d;
    int out;
    std::array<int, 3> m;
  };
  // Even and odd extents; the last case keeps the T Nyquist bin and all X/Y modes.
  for (const Case& k : {Case{{2, 3, 8, 10, 6}, 4, {3, 4, 2}}, Case{{1, 2, 7, 9, 5}, 3, {2, 3, 3}},
                        Case{{1, 2, 6, 4, 6}, 2, {3, 2, 4}}}) {
    auto corners = random_corners(k.d.c, k.out, k.m, 5);
    reference::SpectralConv3d layer(k.d.c, k.out, k.m, corners);
    auto x = test::random_vector(k.d.size(), 42);
    auto ref = test::naive_spectral_conv(x, k.d, k.out, k.m, as_complex(corners));
    Tensor y = layer.forward(test::to_device(x, {k.d.n, k.d.c, k.d.x, k.d.y, k.d.t}));
    REQUIRE(y.span() == ref.size());
    const double err = test::rel_l2(test::to_host(y), ref);
    INFO("grid " << k.d.x << "x" << k.d.y << "x" << k.d.t << " rel L2 " << err);
    CHECK(err < 2e-6);
    // A second call reuses the cached plans and gives the same numbers.
    Tensor y2 = layer.forward(test::to_device(x, {k.d.n, k.d.c, k.d.x, k.d.y, k.d.t}));
    CHECK(test::to_host(y2) == test::to_host(y));
  }
}

TEST_CASE("SpectralConv3d matches the PyTorch layer", "[spectral][parity]") {
  auto f = test::read_all(test::data_path("spectral_small.h5"));
  const auto& in = f.arrays.at("input");
  const auto& w1 = f.arrays.at("weights1");
  const int ci = int(w1.shape[0]), co = int(w1.shape[1]);
  const std::array<int, 3> m{int(w1.shape[2]), int(w1.shape[3]), int(w1.shape[4])};
  reference::SpectralConv3d layer(
      ci, co, m, {w1, f.arrays.at("weights2"), f.arrays.at("weights3"), f.arrays.at("weights4")});
  Tensor y =
      layer.forward(test::to_device(in.data, {int(in.shape[0]), int(in.shape[1]), int(in.shape[2]),
                                              int(in.shape[3]), int(in.shape[4])}));
  auto e = test::compare(test::to_host(y), f.arrays.at("output").data);
  INFO("rel L2 " << e.rel_l2 << " max abs " << e.max_abs);
  CHECK(e.rel_l2 < 1e-6);
  CHECK(e.max_abs <= 1e-5 * e.max_ref);
}

TEST_CASE("SpectralConv3d rejects modes that do not fit the grid", "[spectral]") {
  reference::SpectralConv3d layer(1, 1, {5, 2, 2}, random_corners(1, 1, {5, 2, 2}, 1));
  Tensor x("x", 1, 1, 8, 8, 8);  // 2 * 5 > 8
  CHECK_THROWS_WITH(layer.forward(x), Catch::Contains("do not fit"));
}
