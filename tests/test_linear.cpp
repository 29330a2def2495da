// Linear (pointwise channel mix, also the 1x1 Conv1d w_k) against direct sums.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "operators/Linear.hpp"
#include "support/Naive.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

TEST_CASE("Linear matches a direct per-voxel sum", "[linear]") {
  const test::Dims5 d{2, 5, 3, 4, 6};
  const int out = 7;
  auto x = test::random_vector(d.size(), 1);
  auto w = test::random_array({std::size_t(out), std::size_t(d.c)}, 2);
  auto b = test::random_array({std::size_t(out)}, 3);
  Linear lin(d.c, out, w, b);
  auto ref = test::naive_linear(x, d, w.data, b.data, out);
  Tensor xt = test::to_device(x, {d.n, d.c, d.x, d.y, d.t});

  SECTION("plain") { CHECK(test::rel_l2(test::to_host(lin.forward(xt)), ref) < 1e-6); }
  SECTION("with ReLU") {
    for (auto& v : ref) v = v > 0 ? v : 0;
    CHECK(test::rel_l2(test::to_host(lin.forward(xt, Activation::ReLU)), ref) < 1e-6);
  }
  SECTION("accumulating into an existing output") {
    auto y0 = test::random_vector(std::size_t(d.n) * out * d.x * d.y * d.t, 4);
    Tensor yt = test::to_device(y0, {d.n, out, d.x, d.y, d.t});
    lin.forward_accumulate(xt, yt, Activation::None);
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] += y0[i];
    CHECK(test::rel_l2(test::to_host(yt), ref) < 1e-6);
  }
  SECTION("loads the Conv1d (out, in, 1) shape and rejects a wrong one") {
    test::MapWeights ws;
    auto w3 = w;
    w3.shape.push_back(1);
    ws.arrays["w0.weight"] = w3;
    ws.arrays["w0.bias"] = b;
    Linear l2 = Linear::load(ws, "w0", d.c, out, true);
    CHECK(test::rel_l2(test::to_host(l2.forward(xt)), ref) < 1e-6);
    CHECK_THROWS_WITH(Linear::load(ws, "w0", d.c + 1, out, true),
                      Catch::Contains("w0.weight") && Catch::Contains("does not match"));
  }
}

TEST_CASE("pointwise_mlp equals two Linear layers, in any chunk width", "[linear]") {
  const test::Dims5 d{2, 5, 3, 4, 6};  // 72 voxels per batch entry
  const int hidden = 9, out = 2;
  auto x = test::random_vector(d.size(), 11);
  Linear fc1(d.c, hidden, test::random_array({std::size_t(hidden), std::size_t(d.c)}, 12),
             test::random_array({std::size_t(hidden)}, 13));
  Linear fc2(hidden, out, test::random_array({std::size_t(out), std::size_t(hidden)}, 14),
             test::random_array({std::size_t(out)}, 15));
  Tensor xt = test::to_device(x, {d.n, d.c, d.x, d.y, d.t});
  const auto r = test::to_host(fc2.forward(fc1.forward(xt, Activation::ReLU)));
  const std::vector<double> ref(r.begin(), r.end());
  for (long chunk : {1L, 7L, 72L, 1000L})  // 7 leaves a partial last chunk
    CHECK(test::rel_l2(test::to_host(pointwise_mlp(xt, fc1, Activation::ReLU, fc2, chunk)), ref) <
          1e-6);
  CHECK_THROWS_AS(pointwise_mlp(xt, fc2, Activation::ReLU, fc1), std::invalid_argument);
}

TEST_CASE("erf_of is erf to float precision, and GELU keeps NaN and the limits",
          "[linear][activation]") {
  double worst = 0;
  for (int i = -600000; i <= 600000; ++i) {  // [-6, 6] in steps of 1e-5
    const float x = float(i) * 1e-5f;
    worst = std::max(worst, std::abs(double(erf_of(x)) - std::erf(double(x))));
  }
  CHECK(worst < 5e-7);
  CHECK(erf_of(0.f) == 0.f);
  CHECK(std::abs(erf_of(1e30f) - 1.f) < 1e-6f);
  CHECK(std::abs(erf_of(-1e30f) + 1.f) < 1e-6f);
  CHECK(std::isnan(gelu_of(std::nanf(""))));
  CHECK(gelu_of(1e30f) == Approx(1e30f));
  CHECK(gelu_of(-50.f) == 0.f);
  // The vector loop and the scalar form agree, in place too.
  std::vector<float> x(1001), y(1001);
  for (int i = 0; i < 1001; ++i) x[i] = -8.f + 0.016f * float(i);
  activate_run(Activation::GELU, 0.f, x.data(), y.data(), long(x.size()));
  std::vector<float> z = x;
  activate_run(Activation::GELU, 0.f, z.data(), z.data(), long(z.size()));
  double err = 0;
  for (int i = 0; i < 1001; ++i) {
    const double v = x[i], ref = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    err = std::max(err, std::abs(y[i] - ref) / std::max(1.0, std::abs(ref)));
    CHECK(z[i] == y[i]);
    CHECK(y[i] == Approx(gelu_of(x[i])).epsilon(1e-6).margin(1e-7));
  }
  CHECK(err < 2e-6);
}
