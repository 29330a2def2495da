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
      fourier_layer_update(xi, modes, t_inverse, w, u, chunk);
      INFO("chunk " << chunk << (with_unet ? " with" : " without") << " the U-Net term");
      CHECK(test::rel_l2(test::to_host(xi), expect) < 1e-6);
    }
  }
  Tensor x = test::to_device(xv, {B, C, X, Y, T});
  Tensor wrong("wrong", B, C, X, Y, T + 1);
  CHECK_THROWS_AS(fourier_layer_update(x, modes, t_inverse, w, wrong), std::invalid_argument);
}
