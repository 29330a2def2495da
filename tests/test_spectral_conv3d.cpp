// SpectralConv3d (per-axis transforms with truncation after each) against a direct-DFT reference
// and against the PyTorch rfftn/irfftn layer saved as a fixture.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>

#include "operators/SpectralWeights.hpp"
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

namespace {

using CGrid = GridView<3, complexf>;

CGrid random_spectrum(int B, int C, const std::array<int, 3>& e, unsigned seed) {
  CGrid a = make_grid_view<3, complexf>("a", B, C, e);
  auto h = Kokkos::create_mirror_view(a);
  const auto v = test::random_vector(2 * h.size(), seed);
  for (std::size_t i = 0; i < h.size(); ++i) h.data()[i] = complexf(v[2 * i], v[2 * i + 1]);
  Kokkos::deep_copy(a, h);
  return a;
}

std::vector<complexf> host_values(const CGrid& a) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  return std::vector<complexf>(h.data(), h.data() + h.size());
}

// Case b of a as a batch of one.
CGrid one_case(const CGrid& a, int b) {
  const auto all = host_values(a);
  const long per_case = long(all.size()) / long(a.extent(0));
  CGrid c = make_grid_view<3, complexf>("case", 1, a.extent(1), grid_extents<3>(a));
  auto h = Kokkos::create_mirror_view(c);
  std::copy(all.begin() + b * per_case, all.begin() + (b + 1) * per_case, h.data());
  Kokkos::deep_copy(c, h);
  return c;
}

}  // namespace

TEST_CASE("the mode mix of a batch equals a direct sum and each case mixed alone", "[spectral]") {
  // 11 cases: a full group of 8 that share each weight read, and 3 more; 260 modes: two full
  // blocks of modes and a partial one.
  const int B = 11, I = 3, O = 4;
  const std::array<int, 3> e{5, 4, 13};
  const long M = 5 * 4 * 13;
  const float scale = 0.5f;
  const CGrid a = random_spectrum(B, I, e, 31);
  SpectralWeightView w("w", I, O, M);
  auto hw = Kokkos::create_mirror_view(w);
  const auto wv = test::random_vector(2 * hw.size(), 32);
  for (std::size_t i = 0; i < hw.size(); ++i) hw.data()[i] = complexf(wv[2 * i], wv[2 * i + 1]);
  Kokkos::deep_copy(w, hw);
  Kokkos::View<float*, DeviceSpace> dc("dc", O);
  auto hdc = Kokkos::create_mirror_view(dc);
  for (int o = 0; o < O; ++o) hdc(o) = 0.25f * float(o + 1);
  Kokkos::deep_copy(dc, hdc);

  const auto in = host_values(a);
  const auto got = host_values(spectral_mix<3>(a, w, scale, dc));
  double num = 0, den = 0;
  for (int b = 0; b < B; ++b)
    for (int o = 0; o < O; ++o)
      for (long m = 0; m < M; ++m) {
        std::complex<double> s = 0;
        for (int i = 0; i < I; ++i)
          s +=
              std::complex<double>(in[(b * I + i) * M + m].real(), in[(b * I + i) * M + m].imag()) *
              std::complex<double>(hw(i, o, m).real(), hw(i, o, m).imag());
        s *= scale;
        if (m == 0) s += hdc(o);
        const complexf g = got[(b * O + o) * M + m];
        num += std::norm(std::complex<double>(g.real(), g.imag()) - s);
        den += std::norm(s);
      }
  CHECK(std::sqrt(num / den) < 1e-6);
  for (int b : {0, 7, 8, 10}) {
    INFO("case " << b);
    const auto alone = host_values(spectral_mix<3>(one_case(a, b), w, scale, dc));
    CHECK(std::equal(alone.begin(), alone.end(), got.begin() + b * O * M));
  }
}

TEST_CASE("the streamed mode mix of a batch equals each case alone and counts each weight once",
          "[spectral]") {
  const int B = 11, I = 3, O = 4;
  const std::array<int, 3> m{3, 2, 13};  // kept-mode index space 6 x 4 x 13
  dist::Box<3> owned;
  owned.lo = {1, 0, 0};
  owned.hi = {6, 4, 13};
  const std::array<int, 3> oe = owned.extents();
  const CGrid a = random_spectrum(B, I, oe, 41);
  const auto parts = owned_corner_parts<3>(I, O, m, owned);
  REQUIRE(parts.size() == 4);
  const float scale = 2.f;
  CGrid out = make_grid_view<3, complexf>("out", B, O, oe);
  std::vector<CGrid> alone;
  for (int b = 0; b < B; ++b) alone.push_back(make_grid_view<3, complexf>("alone", 1, O, oe));
  for (const CornerPart<3>& p : parts) {
    HostArray w = test::random_array(
        {std::size_t(I), std::size_t(O), std::size_t(p.part.count()), 2}, 50 + unsigned(p.corner));
    CHECK(spectral_mix_part<3>(a, w, p, out, scale, 1e30f) == 0);
    for (int b = 0; b < B; ++b) spectral_mix_part<3>(one_case(a, b), w, p, alone[b], scale, 1e30f);
    // One weight not finite: counted once for the batch, not once per case.
    w.data[5] = std::nanf("");
    CGrid scratch = make_grid_view<3, complexf>("scratch", B, O, oe);
    CHECK(spectral_mix_part<3>(a, w, p, scratch, scale, 1e30f) == 1);
  }
  const auto got = host_values(out);
  const long M = owned.count();
  for (int b = 0; b < B; ++b) {
    INFO("case " << b);
    const auto one = host_values(alone[b]);
    CHECK(std::equal(one.begin(), one.end(), got.begin() + b * O * M));
  }
  // And case 3 against a direct sum over the parts.
  const auto in = host_values(a);
  double num = 0, den = 0;
  for (const CornerPart<3>& p : parts) {
    const HostArray w = test::random_array(
        {std::size_t(I), std::size_t(O), std::size_t(p.part.count()), 2}, 50 + unsigned(p.corner));
    const long P = p.part.count(), run = p.run();
    for (int o = 0; o < O; ++o)
      for (long q = 0; q < P; ++q) {
        const long at = p.run_at[q / run] + q % run;
        std::complex<double> s = 0;
        for (int i = 0; i < I; ++i) {
          const complexf x = in[(3 * I + i) * M + at];
          const std::size_t wi = 2 * ((std::size_t(i) * O + o) * P + q);
          s += std::complex<double>(x.real(), x.imag()) *
               std::complex<double>(w.data[wi], w.data[wi + 1]);
        }
        s *= scale;
        const complexf g = got[(3 * O + o) * M + at];
        num += std::norm(std::complex<double>(g.real(), g.imag()) - s);
        den += std::norm(s);
      }
  }
  CHECK(std::sqrt(num / den) < 1e-6);
}
