// Conv3d (stride 1 and 2, bias, BatchNorm folding, fused LeakyReLU) and ConvTranspose3d against
// direct loops.
#include <catch2/catch.hpp>

#include "core/Bf16.hpp"
#include "operators/Conv3d.hpp"
#include "operators/ConvTranspose3d.hpp"
#include "support/Naive.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

TEST_CASE("Conv3d matches direct convolution", "[conv]") {
  const int out = 4;
  for (const test::Dims5 d : {test::Dims5{2, 3, 8, 6, 4}, test::Dims5{1, 2, 7, 9, 5}}) {
    for (int stride : {1, 2}) {
      auto x = test::random_vector(d.size(), 7);
      auto w = test::random_vector(std::size_t(out) * d.c * 27, 8);
      auto b = test::random_vector(out, 9);
      test::Dims5 od{};
      auto ref = test::naive_conv3d(x, d, w, b, out, 3, stride, 1, &od);
      backend::ConvSpec s;
      s.in_channels = d.c;
      s.out_channels = out;
      s.stride = stride;
      s.has_bias = true;
      Conv3d conv(s, w, b);
      Tensor y = conv.forward(test::to_device(x, {d.n, d.c, d.x, d.y, d.t}));
      REQUIRE(shape_of(y) == Shape5{od.n, od.c, od.x, od.y, od.t});
      INFO("grid " << d.x << "x" << d.y << "x" << d.t << " stride " << stride);
      CHECK(test::rel_l2(test::to_host(y), ref) < 1e-6);
    }
  }
}

TEST_CASE("Conv3d folds BatchNorm and fuses LeakyReLU", "[conv][batchnorm]") {
  const test::Dims5 d{1, 3, 8, 8, 8};
  const int out = 5;
  auto x = test::random_vector(d.size(), 17);
  auto w = test::random_vector(std::size_t(out) * d.c * 27, 18);
  BatchNorm3d bn;
  bn.gamma = test::random_vector(out, 19, 0.5f, 1.5f);
  bn.beta = test::random_vector(out, 20);
  bn.mean = test::random_vector(out, 21);
  bn.var = test::random_vector(out, 22, 0.5f, 2.f);
  bn.eps = 1e-5;
  test::Dims5 od{};
  auto ref = test::naive_conv3d(x, d, w, {}, out, 3, 2, 1, &od);
  const std::size_t per_c = std::size_t(od.x) * od.y * od.t;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const int c = int((i / per_c) % out);
    double v =
        (ref[i] - bn.mean[c]) / std::sqrt(double(bn.var[c]) + bn.eps) * bn.gamma[c] + bn.beta[c];
    ref[i] = v > 0 ? v : 0.1 * v;
  }
  backend::ConvSpec s;
  s.in_channels = d.c;
  s.out_channels = out;
  s.stride = 2;
  s.activation = Activation::LeakyReLU;
  s.slope = 0.1f;
  Conv3d conv(s, w, {}, &bn);
  Tensor y = conv.forward(test::to_device(x, {d.n, d.c, d.x, d.y, d.t}));
  CHECK(test::rel_l2(test::to_host(y), ref) < 1e-6);
}

TEST_CASE("ConvTranspose3d in direct form (kernel 3) matches the scatter definition",
          "[conv][transpose]") {
  const test::Dims5 d{1, 3, 4, 3, 5};
  const int out = 2;
  auto x = test::random_vector(d.size(), 41);
  auto w = test::random_vector(std::size_t(d.c) * out * 27, 42);
  auto b = test::random_vector(out, 43);
  test::Dims5 od{};
  auto ref = test::naive_conv_transpose3d(x, d, w, b, out, 3, 2, 1, &od);
  backend::ConvSpec s;
  s.in_channels = d.c;
  s.out_channels = out;
  s.kernel = 3;
  s.stride = 2;
  s.padding = 1;
  s.has_bias = true;
  ConvTranspose3d deconv(s, w, b);
  Tensor y = deconv.forward(test::to_device(x, {d.n, d.c, d.x, d.y, d.t}));
  REQUIRE(shape_of(y) == Shape5{od.n, od.c, od.x, od.y, od.t});
  CHECK(test::rel_l2(test::to_host(y), ref) < 1e-6);
}

TEST_CASE("ConvTranspose3d matches the scatter definition", "[conv][transpose]") {
  const int out = 3;
  for (const test::Dims5 d : {test::Dims5{2, 4, 3, 4, 2}, test::Dims5{1, 2, 5, 3, 4}}) {
    auto x = test::random_vector(d.size(), 31);
    auto w = test::random_vector(std::size_t(d.c) * out * 64, 32);  // (in, out, 4, 4, 4)
    auto b = test::random_vector(out, 33);
    test::Dims5 od{};
    auto ref = test::naive_conv_transpose3d(x, d, w, b, out, 4, 2, 1, &od);
    for (auto& v : ref) v = v > 0 ? v : 0.1 * v;
    backend::ConvSpec s;
    s.in_channels = d.c;
    s.out_channels = out;
    s.kernel = 4;
    s.stride = 2;
    s.padding = 1;
    s.has_bias = true;
    s.activation = Activation::LeakyReLU;
    s.slope = 0.1f;
    ConvTranspose3d deconv(s, w, b);
    Tensor y = deconv.forward(test::to_device(x, {d.n, d.c, d.x, d.y, d.t}));
    REQUIRE(shape_of(y) == Shape5{od.n, od.c, 2 * d.x, 2 * d.y, 2 * d.t});
    CHECK(test::rel_l2(test::to_host(y), ref) < 1e-6);
    // Padding 0 (the uncropped form the distributed layer uses).
    test::Dims5 od0{};
    auto ref0 = test::naive_conv_transpose3d(x, d, w, b, out, 4, 2, 0, &od0);
    for (auto& v : ref0) v = v > 0 ? v : 0.1 * v;
    Tensor y0 = deconv.with_padding(0).forward(test::to_device(x, {d.n, d.c, d.x, d.y, d.t}));
    REQUIRE(shape_of(y0) == Shape5{od0.n, od0.c, od0.x, od0.y, od0.t});
    CHECK(test::rel_l2(test::to_host(y0), ref0) < 1e-6);
  }
}

namespace {
// (n, c, x, y, t) channels-first values -> (n, x, y, t, c) channels-last, or back.
template <class T>
std::vector<T> to_channels_last(const std::vector<T>& v, const test::Dims5& d) {
  std::vector<T> r(v.size());
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int i = 0; i < d.x * d.y * d.t; ++i)
        r[(std::size_t(n) * d.x * d.y * d.t + i) * d.c + c] =
            v[(std::size_t(n) * d.c + c) * d.x * d.y * d.t + i];
  return r;
}
}  // namespace

TEST_CASE("Conv3d reads and writes channels-last tensors", "[conv]") {
  const test::Dims5 d{2, 3, 8, 6, 4};
  const int out = 5;
  auto x = test::random_vector(d.size(), 27);
  auto w = test::random_vector(std::size_t(out) * d.c * 27, 28);
  auto b = test::random_vector(out, 29);
  test::Dims5 od{};
  const auto ref = test::naive_conv3d(x, d, w, b, out, 3, 2, 1, &od);
  backend::ConvSpec s;
  s.in_channels = d.c;
  s.out_channels = out;
  s.stride = 2;
  s.has_bias = true;
  Conv3d conv(s, w, b);
  constexpr auto first = backend::Layout::ChannelsFirst, last = backend::Layout::ChannelsLast;
  const Tensor x_last = test::to_device(to_channels_last(x, d), {d.n, d.x, d.y, d.t, d.c});
  const Tensor x_first = test::to_device(x, {d.n, d.c, d.x, d.y, d.t});
  SECTION("channels last in and out") {
    Tensor y = conv.forward(x_last, last, last);
    REQUIRE(shape_of(y) == Shape5{od.n, od.x, od.y, od.t, od.c});
    CHECK(test::rel_l2(test::to_host(y), to_channels_last(ref, od)) < 1e-6);
  }
  SECTION("channels first in, last out, and the reverse") {
    CHECK(test::rel_l2(test::to_host(conv.forward(x_first, first, last)),
                       to_channels_last(ref, od)) < 1e-6);
    CHECK(test::rel_l2(test::to_host(conv.forward(x_last, last, first)), ref) < 1e-6);
  }
}

TEST_CASE("bf16 convolutions stay within bf16 rounding of float32", "[conv][bf16]") {
  if (!backend::bf16_supported()) {
    WARN(
        "this CPU has no AVX512_BF16 / AMX-BF16: the bf16 path is not tested here "
        "(CTest shows bf16_numerics_tested skipped)");
    backend::ConvSpec s;
    s.in_channels = s.out_channels = 1;
    s.bf16 = true;
    CHECK_THROWS_AS(Conv3d(s, std::vector<float>(27, 1.f), {}), std::invalid_argument);
    return;
  }
  const test::Dims5 d{1, 8, 8, 8, 8};
  const int out = 6;
  auto x = test::random_vector(d.size(), 37);
  auto w = test::random_vector(std::size_t(out) * d.c * 27, 38);
  auto b = test::random_vector(out, 39);
  test::Dims5 od{};
  const auto ref = test::naive_conv3d(x, d, w, b, out, 3, 1, 1, &od);
  backend::ConvSpec s;
  s.in_channels = d.c;
  s.out_channels = out;
  s.has_bias = true;
  s.bf16 = true;
  Conv3d conv(s, w, b);
  const double err =
      test::rel_l2(test::to_host(conv.forward(test::to_device(x, {d.n, d.c, d.x, d.y, d.t}))), ref);
  // bf16 keeps 8 mantissa bits (relative rounding 2^-9 per input); sums of 216 products
  // average it down. Far above float32's 1e-7, far below a wrong result's O(1).
  CHECK(err > 1e-5);
  CHECK(err < 1e-2);
  INFO("bf16 relative L2 error " << err);
}
