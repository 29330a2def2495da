// backend::PlaneConv3d (the AVX-512 plane-vectorised 3x3x3 convolution of the U-Net's output
// layer) against direct loops, and the join that fills its zero-bordered input slab.
#include <catch2/catch.hpp>

#include "operators/PaddedSlab.hpp"
#include "operators/SubpixelJoin.hpp"
#include "operators/backend/PlaneConv3d.hpp"
#include "support/Naive.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

// Rows of x (1, C, J, Y, T) written into a slab with room for `slab_rows` rows.
PaddedSlab slab_of(const std::vector<float>& x, test::Dims5 d, int slab_rows) {
  PaddedSlab s(d.c, slab_rows, d.y, d.t);
  for (int c = 0; c < d.c; ++c)
    for (int j = 0; j < d.x; ++j)
      for (int y = 0; y < d.y; ++y)
        for (int t = 0; t < d.t; ++t) s.interior(c, j)[y * (d.t + 2) + t] = x[d.at(0, c, j, y, t)];
  return s;
}

struct Case {
  int in, out, rows, slab_rows, y, t;
};

// A case's random input, weights and bias (from `seed`), and the direct loops' output on the
// slab's interior rows 1 .. R (the loops pad X too), channels first.
struct Problem {
  test::Dims5 d;
  std::vector<float> x, w, b;
  std::vector<double> want;
};
Problem problem(const Case& k, unsigned seed) {
  Problem p{{1, k.in, k.rows + 2, k.y, k.t}, {}, {}, {}, {}};
  p.x = test::random_vector(p.d.size(), seed);
  p.w = test::random_vector(std::size_t(k.out) * k.in * 27, seed + 1);
  p.b = test::random_vector(k.out, seed + 2);
  test::Dims5 od{};
  const auto ref = test::naive_conv3d(p.x, p.d, p.w, p.b, k.out, 3, 1, 1, &od);
  for (int o = 0; o < k.out; ++o)
    for (int r = 1; r <= k.rows; ++r)
      for (int j = 0; j < k.y; ++j)
        for (int t = 0; t < k.t; ++t) p.want.push_back(ref[od.at(0, o, r, j, t)]);
  return p;
}

// The relative L2 error of a case's bf16 output in `tiles` against the direct loops (logged).
double bf16_error(const Case& k, unsigned seed, WinogradTiles tiles) {
  const Problem p = problem(k, seed);
  backend::PlaneConv3d conv(k.in, k.out, p.w, p.b);
  conv.set_bf16(true);
  conv.set_winograd(tiles);
  Tensor y = empty_tensor("plane.out", 1, k.out, k.rows, k.y, k.t);
  conv.forward(slab_of(p.x, p.d, k.slab_rows), y);
  const double e = test::rel_l2(test::to_host(y), p.want);
  UNSCOPED_INFO(k.in << " -> " << k.out << " channels, " << k.rows << " rows of " << k.y << "x"
                     << k.t << ", tiles " << int(tiles) << ": relative L2 " << e);
  return e;
}

}  // namespace

TEST_CASE("PlaneConv3d matches direct convolution", "[conv][plane]") {
  if (!backend::PlaneConv3d::available()) {
    // Without AVX-512 the U-Net keeps oneDNN; the kernel must refuse rather than run. Said in
    // the output, so a CPU without AVX-512 does not pass this test silently.
    WARN("this CPU has no AVX-512: PlaneConv3d's numerics are NOT tested here, only its refusal");
    backend::PlaneConv3d conv(1, 1, std::vector<float>(27, 1.f), {});
    PaddedSlab s(1, 3, 2, 2);
    CHECK_THROWS(conv.forward(s, empty_tensor("out", 1, 1, 1, 2, 2)));
    return;
  }
  // The model's 72 -> 36 (whole blocks of 12 output channels, 9 input chunks); channel counts
  // with remainders of both blocks; planes that end mid-vector; spare slab rows beyond R + 2;
  // T a multiple of 32, where whole lines are summed straight into the output.
  // Rows in tiles of 4 (Winograd) and left over (direct): 4, 5, 8, 9 and 11 rows, along whole
  // lines (T a multiple of 32) and along the flattened plane. Along whole lines the two-axis
  // tiles take 4 lines at a time: 2, 3, 6, 8 and 13 lines (none, one, two tiles, lines left
  // over), input channels in passes of 24 with a remainder (30, 72).
  for (const Case k :
       {Case{72, 36, 2, 4, 10, 12}, Case{5, 7, 1, 3, 3, 5}, Case{9, 13, 3, 6, 8, 8},
        Case{4, 4, 4, 6, 17, 23}, Case{72, 36, 2, 5, 3, 32}, Case{9, 13, 1, 3, 2, 64},
        Case{72, 36, 8, 10, 6, 32}, Case{7, 13, 5, 8, 5, 9}, Case{10, 25, 11, 13, 3, 64},
        Case{16, 13, 4, 6, 8, 32}, Case{3, 5, 9, 11, 13, 64}, Case{30, 13, 4, 6, 4, 64},
        Case{72, 36, 5, 7, 9, 32}}) {
    const Problem p = problem(k, 31);
    backend::PlaneConv3d conv(k.in, k.out, p.w, p.b);
    for (const WinogradTiles tiles : {WinogradTiles::off, WinogradTiles::x, WinogradTiles::xy}) {
      conv.set_winograd(tiles);
      Tensor y = empty_tensor("plane.out", 1, k.out, k.rows, k.y, k.t);
      conv.forward(slab_of(p.x, p.d, k.slab_rows), y);
      const double e = test::rel_l2(test::to_host(y), p.want);
      INFO(k.in << " -> " << k.out << " channels, " << k.rows << " rows of " << k.y << "x" << k.t
                << ", tiles " << int(tiles) << ": relative L2 " << e);
      // Winograd's transforms round a few more times per value (its constants reach 8 and 1/24):
      // about twice the direct kernel's error against double-precision loops along X, and about
      // twice again over X and Y (products of two transforms' constants).
      const double bound[] = {1e-6, 3e-6, 6e-6};
      CHECK(e < bound[int(tiles)]);
    }
  }
}

TEST_CASE("PlaneConv3d's bf16 Winograd products stay within bf16 rounding of direct loops",
          "[conv][plane][bf16]") {
  if (!backend::PlaneConv3d::bf16_available()) {
    WARN(
        "this CPU has no AVX512_BF16: the bf16 Winograd products are NOT tested here, only "
        "their refusal");
    backend::PlaneConv3d conv(1, 1, std::vector<float>(27, 1.f), {});
    CHECK_THROWS_AS(conv.set_bf16(true), std::invalid_argument);
    return;
  }
  // The model's 72 -> 36; odd input counts (a pair with a zero channel), chunks of 8 with a
  // remainder, output blocks with a remainder; whole lines and the flattened plane; rows left
  // over from the tiles (direct, float32).
  for (const Case k : {Case{72, 36, 8, 10, 6, 32}, Case{9, 13, 4, 6, 8, 8}, Case{7, 13, 5, 8, 5, 9},
                       Case{17, 25, 4, 6, 3, 64}, Case{1, 3, 4, 6, 4, 32}}) {
    // X tiles everywhere; the tiles over X and Y below.
    const double e = bf16_error(k, 51, WinogradTiles::x);
    // bf16 keeps 8 bits of mantissa (up to 2^-9 = 2e-3 of each rounded operand); Winograd's
    // transforms (constants up to 5 in, 8 out) make it 0.7-0.8 % of the output here, about 4x
    // a direct bf16 convolution's. A wrong channel pairing, point or weight is O(1).
    CHECK(e < 1.5e-2);
    CHECK(e > 1e-4);  // the products did run in bf16
  }
  // Tiles over X and Y (the default) along whole lines: 8 rows of 8 lines are all two-axis
  // tiles; 5 rows of 6 lines leave a row (direct, float32) and two lines (X tiles); odd input
  // channels; more than one pass of 24 input channels with a remainder. Products of two
  // transforms (constants up to 25 in, 64 out) take the rounding to 2-3 % of the output here,
  // about 3.5x the X tiles' (the effect on the models' accuracy: benchmarks/README.md).
  for (const Case k :
       {Case{72, 36, 8, 10, 8, 32}, Case{72, 36, 5, 7, 6, 32}, Case{31, 13, 4, 6, 4, 64}}) {
    const double e = bf16_error(k, 61, WinogradTiles::xy);
    CHECK(e < 4e-2);
    CHECK(e > 1e-4);
  }
}

TEST_CASE("PlaneConv3d rejects a slab that does not fit", "[conv][plane]") {
  backend::PlaneConv3d conv(2, 3, std::vector<float>(2 * 3 * 27, 0.f), {});
  PaddedSlab s(2, 4, 5, 6);
  CHECK_THROWS(conv.forward(s, empty_tensor("out", 1, 3, 3, 5, 6)));  // needs 5 slab rows
  CHECK_THROWS(conv.forward(s, empty_tensor("out", 1, 4, 2, 5, 6)));  // wrong channel count
  CHECK_THROWS(conv.forward(s, empty_tensor("out", 1, 3, 2, 5, 7)));  // wrong plane
  CHECK_THROWS(backend::PlaneConv3d(2, 3, std::vector<float>(10, 0.f), {}));
}

TEST_CASE("join_rows_into writes the channels-last join rows into a zero-bordered slab",
          "[unet][plane]") {
  // A 2-channel skip of 6x4x4 and the parity outputs of a 3-channel k4 s2 p1 upsampling.
  const int Cs = 2, C = 3, X = 6, Y = 4, T = 4, p = 1;
  const Tensor skip =
      test::to_device(test::random_vector(std::size_t(Cs) * X * Y * T, 41), {1, Cs, X, Y, T});
  const int n0 = X / 2 + 1, n1 = Y / 2 + 1, n2 = T / 2 + 1;
  const Tensor parts = test::to_device(test::random_vector(std::size_t(n0) * n1 * n2 * 8 * C, 42),
                                       {1, n0, n1, n2, 8 * C});
  // Join rows -1 .. 4 (row -1 outside the grid), twice into the same slab: stale values of the
  // first fill must not survive, and the borders must stay zero.
  PaddedSlab slab(Cs + C, 7, Y, T);
  for (int j0 : {2, -1}) {
    const int J = j0 < 0 ? 6 : 4;
    join_rows_into(skip, parts, 0, j0, J, p, slab);
    auto want = test::to_host(join_rows(skip, parts, 0, j0, J, p));  // (1, J, Y, T, Cs + C)
    const int Tp = T + 2;
    double worst = 0;
    for (int c = 0; c < Cs + C; ++c)
      for (int j = 0; j < J; ++j) {
        const float* plane = slab.interior(c, j) - Tp - 1;
        for (int y = -1; y <= Y; ++y)
          for (int t = -1; t <= T; ++t) {
            const float v = plane[(y + 1) * Tp + t + 1];
            const bool inside = y >= 0 && y < Y && t >= 0 && t < T;
            const double e = inside ? want[((std::size_t(j) * Y + y) * T + t) * (Cs + C) + c] : 0.;
            worst = std::max(worst, std::abs(v - e));
          }
      }
    INFO("join rows from " << j0);
    CHECK(worst == 0.);
  }
}
