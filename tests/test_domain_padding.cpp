// The reference padding (replicate T and Y, then zeros in X, all at the end) and the crop.
#include <catch2/catch.hpp>

#include "reference/DomainPadding.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

TEST_CASE("DomainPadding pads like the reference and crops back", "[padding]") {
  const int B = 2, X = 3, Y = 4, T = 2, C = 5;
  auto v = test::random_vector(std::size_t(B) * X * Y * T * C, 3);
  Tensor in = test::to_device(v, {B, X, Y, T, C});  // channel-last
  reference::DomainPadding pad{{2, 3, 1}};
  Tensor p = pad.pad_channel_last(in);
  REQUIRE(shape_of(p) == Shape5{B, C, X + 2, Y + 3, T + 1});
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
  auto at = [&](int b, int x, int y, int t, int c) {
    return v[((((std::size_t(b) * X + x) * Y + y) * T + t) * C) + c];
  };
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < C; ++c)
      for (int x = 0; x < X + 2; ++x)
        for (int y = 0; y < Y + 3; ++y)
          for (int t = 0; t < T + 1; ++t) {
            const float want = x >= X ? 0.f : at(b, x, std::min(y, Y - 1), std::min(t, T - 1), c);
            REQUIRE(h(b, c, x, y, t) == want);
          }
  Tensor cropped = pad.crop(p);
  REQUIRE(shape_of(cropped) == Shape5{B, C, X, Y, T});
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cropped);
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < C; ++c)
      for (int x = 0; x < X; ++x)
        for (int y = 0; y < Y; ++y)
          for (int t = 0; t < T; ++t) REQUIRE(hc(b, c, x, y, t) == at(b, x, y, t, c));
}
