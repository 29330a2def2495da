// Linear (pointwise channel mix, also the 1x1 Conv1d w_k) against direct sums.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/ExecutionPlan.hpp"
#include "operators/Linear.hpp"
#include "operators/MlpHead.hpp"
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

namespace {

// second(act(first(x))) at the cells of `box` of x (d), in double: the head a crop keeps.
std::vector<double> naive_head(const std::vector<float>& x, const test::Dims5& d,
                               const dist::Box<3>& box, const HostArray& w1, const HostArray& b1,
                               const HostArray& w2, const HostArray& b2, Activation act) {
  const int hidden = int(b1.data.size()), out = int(b2.data.size());
  const test::Dims5 o{d.n, out, box.extent(0), box.extent(1), box.extent(2)};
  std::vector<double> y(o.size());
  for (int n = 0; n < d.n; ++n)
    for (int i = 0; i < o.x; ++i)
      for (int j = 0; j < o.y; ++j)
        for (int k = 0; k < o.t; ++k) {
          std::vector<double> s(b2.data.begin(), b2.data.end());
          for (int h = 0; h < hidden; ++h) {
            double a = b1.data[h];
            for (int c = 0; c < d.c; ++c)
              a += double(w1.data[h * d.c + c]) *
                   x[d.at(n, c, box.lo[0] + i, box.lo[1] + j, box.lo[2] + k)];
            if (act == Activation::ReLU) a = a > 0 ? a : 0;
            if (act == Activation::GELU) a = 0.5 * a * (1 + std::erf(a / std::sqrt(2.0)));
            for (int q = 0; q < out; ++q) s[q] += double(w2.data[q * hidden + h]) * a;
          }
          for (int q = 0; q < out; ++q) y[o.at(n, q, i, j, k)] = s[q];
        }
  return y;
}

}  // namespace

TEST_CASE("the fused head on the kept cells equals the head on every cell, then cropped",
          "[linear][head]") {
  // An odd padding on every axis and a T run longer than one 16-cell tile (the host kernel reads
  // whole runs in place and gathers the rest), 11 hidden channels (not a multiple of the 8 the
  // host kernel blocks them in), 3 cases; 5 input channels (the whole-tensor kernel holds them
  // in registers, padded to 16) and 130 (more than it holds: it reads them from memory), up to
  // the 4 output channels the kernels take.
  static_assert(MlpHead::kMaxRegisterIn < 130);
  for (int channels : {5, 130}) {
    const test::Dims5 d{3, channels, 9, 7, 23};
    dist::Box<3> box;
    box.lo = {1, 2, 3};
    box.hi = {8, 6, 21};  // 7 x 4 x 18 of 9 x 7 x 23
    const int hidden = 11;
    auto x = test::random_vector(d.size(), 21);
    Tensor xt = test::to_device(x, {d.n, d.c, d.x, d.y, d.t});
    for (int out : {1, 2, 4}) {
      const HostArray w1 = test::random_array({std::size_t(hidden), std::size_t(d.c)}, 22),
                      b1 = test::random_array({std::size_t(hidden)}, 23),
                      w2 = test::random_array({std::size_t(out), std::size_t(hidden)}, 24),
                      b2 = test::random_array({std::size_t(out)}, 25);
      Linear fc1(d.c, hidden, w1, b1), fc2(hidden, out, w2, b2);
      for (Activation act : {Activation::ReLU, Activation::GELU}) {
        const auto ref = naive_head(x, d, box, w1, b1, w2, b2, act);
        MlpHead head(fc1, act, fc2);
        for (PlanKind plan : {PlanKind::Streaming, PlanKind::WholeTensor}) {
          ScopedExecutionPlan use(plan);
          INFO(channels << " input and " << out << " output channel(s), "
                        << (act == Activation::ReLU ? "ReLU" : "GELU") << ", " << plan_name(plan)
                        << " plan");
          const auto got = test::to_host(head.forward(xt, box));
          REQUIRE(got.size() == ref.size());
          CHECK(test::rel_l2(got, ref) < 1e-6);
          // What the model computed before: the head on every cell (pointwise_mlp), then the crop.
          const auto all = test::to_host(pointwise_mlp(xt, fc1, act, fc2));
          const test::Dims5 o{d.n, out, d.x, d.y, d.t};
          std::vector<double> cropped;
          for (int n = 0; n < d.n; ++n)
            for (int q = 0; q < out; ++q)
              for (int i = box.lo[0]; i < box.hi[0]; ++i)
                for (int j = box.lo[1]; j < box.hi[1]; ++j)
                  for (int k = box.lo[2]; k < box.hi[2]; ++k)
                    cropped.push_back(all[o.at(n, q, i, j, k)]);
          CHECK(test::rel_l2(got, cropped) < 1e-6);
        }
      }
      // The whole grid as the box, written into a given output.
      dist::Box<3> whole;
      whole.hi = {d.x, d.y, d.t};
      MlpHead head(fc1, Activation::ReLU, fc2);
      Tensor y = make_tensor("y", {d.n, out, d.x, d.y, d.t});
      head.forward(xt, whole, y);
      CHECK(test::rel_l2(test::to_host(y),
                         naive_head(x, d, whole, w1, b1, w2, b2, Activation::ReLU)) < 1e-6);
    }
  }
}

TEST_CASE("the fused head refuses what does not fit", "[linear][head]") {
  const test::Dims5 d{1, 3, 4, 4, 4};
  Tensor xt = test::to_device(test::random_vector(d.size(), 1), {d.n, d.c, d.x, d.y, d.t});
  Linear fc1(3, 6, test::random_array({6, 3}, 2), test::random_array({6}, 3));
  Linear fc2(6, 1, test::random_array({1, 6}, 4), test::random_array({1}, 5));
  Linear wide(6, 5, test::random_array({5, 6}, 6), test::random_array({5}, 7));
  CHECK_THROWS_WITH(MlpHead(fc1, Activation::ReLU, fc1), Catch::Contains("do not chain"));
  CHECK_THROWS_WITH(MlpHead(fc1, Activation::ReLU, wide), Catch::Contains("output channels"));
  MlpHead head(fc1, Activation::ReLU, fc2);
  dist::Box<3> box;
  box.hi = {4, 4, 5};  // beyond T
  CHECK_THROWS_WITH(head.forward(xt, box), Catch::Contains("do not fit"));
  box.hi = {4, 4, 4};
  Tensor wrong = make_tensor("y", {1, 1, 4, 4, 3});
  CHECK_THROWS_WITH(head.forward(xt, box, wrong), Catch::Contains("do not fit"));
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
