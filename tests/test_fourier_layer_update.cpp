// fourier_layer_update (the fused, in-place end of a Fourier layer) against the unfused sum
// relu(T^-1(modes) + W x + b + u), in chunks that do not divide the columns.
#include <catch2/catch.hpp>

#include "operators/FourierLayerUpdate.hpp"
#include "support/Naive.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

TEST_CASE("the fused Fourier-layer update equals the unfused sum", "[fourier]") {
  const int B = 2, C = 3, X = 5, Y = 4, T = 8, m = 3;  // 20 (x, y) columns per case
  fft::TruncatedRealDft t_inverse(T, m);
  Linear w(C, C, test::random_array({std::size_t(C), std::size_t(C)}, 51),
           test::random_array({std::size_t(C)}, 52));
  auto xv = test::random_vector(std::size_t(B) * C * X * Y * T, 53);
  auto uv = test::random_vector(xv.size(), 54);
  auto mv = test::random_vector(std::size_t(B) * C * X * Y * m * 2, 55);
  CTensor modes("modes", B, C, X, Y, m);
  {
    auto h = Kokkos::create_mirror_view(modes);
    for (std::size_t i = 0; i < h.span(); ++i) h.data()[i] = complexf(mv[2 * i], mv[2 * i + 1]);
    Kokkos::deep_copy(modes, h);
  }
  for (bool with_unet : {false, true}) {
    // Reference: the inverse transform of every column, plus W x + b, plus u, then ReLU.
    Tensor x = test::to_device(xv, {B, C, X, Y, T});
    Tensor spectral("spectral", B, C, X, Y, T);
    t_inverse.backward(modes.data(), spectral.data(), long(B) * C * X * Y);
    w.forward_accumulate(x, spectral, Activation::None);
    auto ref = test::to_host(spectral);
    std::vector<double> expect(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double v = ref[i] + (with_unet ? uv[i] : 0.0);
      expect[i] = v > 0 ? v : 0;
    }
    for (long chunk : {1L, 7L, 20L, 64L}) {
      Tensor xi = test::to_device(xv, {B, C, X, Y, T});
      Tensor u = with_unet ? test::to_device(uv, {B, C, X, Y, T}) : Tensor();
      fourier_layer_update<3>(xi, modes, t_inverse, w, u, Activation::ReLU, chunk);
      INFO("chunk " << chunk << (with_unet ? " with" : " without") << " the U-Net term");
      CHECK(test::rel_l2(test::to_host(xi), expect) < 1e-6);
    }
  }
  Tensor x = test::to_device(xv, {B, C, X, Y, T});
  Tensor wrong("wrong", B, C, X, Y, T + 1);
  CHECK_THROWS_AS(fourier_layer_update<3>(x, modes, t_inverse, w, wrong, Activation::ReLU),
                  std::invalid_argument);
}

TEST_CASE("the row-group update equals the whole-block update", "[fourier]") {
  const int B = 2, C = 3, X = 7, Y = 4, T = 8, m = 3;
  fft::TruncatedRealDft t_inverse(T, m);
  Linear w(C, C, test::random_array({std::size_t(C), std::size_t(C)}, 61),
           test::random_array({std::size_t(C)}, 62));
  auto xv = test::random_vector(std::size_t(B) * C * X * Y * T, 63);
  auto uv = test::random_vector(xv.size(), 64);
  auto mv = test::random_vector(std::size_t(B) * C * X * Y * m * 2, 65);
  auto mh = std::vector<complexf>(mv.size() / 2);
  for (std::size_t i = 0; i < mh.size(); ++i) mh[i] = complexf(mv[2 * i], mv[2 * i + 1]);
  CTensor modes("modes", B, C, X, Y, m);
  {
    auto h = Kokkos::create_mirror_view(modes);
    std::copy(mh.begin(), mh.end(), h.data());
    Kokkos::deep_copy(modes, h);
  }
  auto at = [&](int b, int c, int i, int y, int t) {
    return ((((long(b) * C + c) * X + i) * Y + y) * T + t);
  };
  for (bool with_unet : {false, true}) {
    Tensor ref = test::to_device(xv, {B, C, X, Y, T});
    fourier_layer_update<3>(ref, modes, t_inverse, w,
                            with_unet ? test::to_device(uv, {B, C, X, Y, T}) : Tensor(),
                            Activation::ReLU);
    const auto got_ref = test::to_host(ref);
    const std::vector<double> expect(got_ref.begin(), got_ref.end());
    for (int rows : {1, 3, 7}) {
      for (long chunk : {5L, 512L}) {
        Tensor x = test::to_device(xv, {B, C, X, Y, T});
        // Row groups in reverse order: each group touches its own rows only.
        for (int b = B - 1; b >= 0; --b)
          for (int r0 = (X - 1) / rows * rows; r0 >= 0; r0 -= rows) {
            const int R = std::min(rows, X - r0);
            CTensor tm("tm", 1, C, R, Y, m);
            Tensor ur = with_unet ? Tensor("u_rows", 1, C, R, Y, T) : Tensor();
            auto ht = Kokkos::create_mirror_view(tm);
            for (int c = 0; c < C; ++c)
              for (int i = 0; i < R; ++i)
                for (int y = 0; y < Y; ++y)
                  for (int k = 0; k < m; ++k)
                    ht(0, c, i, y, k) = mh[(((long(b) * C + c) * X + r0 + i) * Y + y) * m + k];
            Kokkos::deep_copy(tm, ht);
            if (with_unet) {
              auto hu = Kokkos::create_mirror_view(ur);
              for (int c = 0; c < C; ++c)
                for (int i = 0; i < R; ++i)
                  for (int y = 0; y < Y; ++y)
                    for (int t = 0; t < T; ++t) hu(0, c, i, y, t) = uv[at(b, c, r0 + i, y, t)];
              Kokkos::deep_copy(ur, hu);
            }
            fourier_layer_update_rows<3>(x, b, r0, tm, t_inverse, w, ur, Activation::ReLU, chunk);
          }
        INFO(rows << " rows per group, chunk " << chunk << (with_unet ? " with" : " without")
                  << " the U-Net term");
        CHECK(test::rel_l2(test::to_host(x), expect) < 1e-6);
      }
    }
  }
  Tensor x = test::to_device(xv, {B, C, X, Y, T});
  CTensor tm("tm", 1, C, 2, Y, m);
  CHECK_THROWS_AS(
      fourier_layer_update_rows<3>(x, 0, X - 1, tm, t_inverse, w, Tensor(), Activation::ReLU),
      std::invalid_argument);
  CHECK_THROWS_AS(fourier_layer_update_rows<3>(x, 0, 0, tm, t_inverse, w,
                                               Tensor("u", 1, C + 1, 2, Y, T), Activation::ReLU),
                  std::invalid_argument);
}
