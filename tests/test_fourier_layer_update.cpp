// fourier_layer_update (the fused, in-place end of a Fourier layer) against the unfused sum
// relu(T^-1(modes) + W x + b + u), in chunks that do not divide the columns.
#include <catch2/catch.hpp>

#include <limits>
#include <tuple>

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

namespace {

// A 4-D block (1, C, X, Y, Z, T) with its T modes, for the Support tests.
struct Block4 {
  static constexpr int C = 3, X = 6, Y = 5, Z = 7, T = 8, m = 3;
  std::vector<complexf> modes = [] {
    auto v = test::random_vector(std::size_t(C) * X * Y * Z * m * 2, 71);
    std::vector<complexf> c(v.size() / 2);
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = complexf(v[2 * i], v[2 * i + 1]);
    return c;
  }();
  static long at(int c, int i, int y, int z, int t) {
    return (((long(c) * X + i) * Y + y) * Z + z) * T + t;
  }
  GridView<4> tensor(const std::vector<float>& v) const {
    GridView<4> x = make_grid_view<4>("x", 1, C, {X, Y, Z, T}, false);
    auto h = Kokkos::create_mirror_view(x);
    std::copy(v.begin(), v.end(), h.data());
    Kokkos::deep_copy(x, h);
    return x;
  }
  static std::vector<float> host(const GridView<4>& x) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    return std::vector<float>(h.data(), h.data() + h.size());
  }
  // Rows [r0, r0 + R) of the T modes, (1, C, R, Y, Z, m).
  GridView<4, complexf> rows(int r0, int R) const {
    auto t = make_grid_view<4, complexf>("tm", 1, C, {R, Y, Z, m}, false);
    auto h = Kokkos::create_mirror_view(t);
    for (int c = 0; c < C; ++c)
      for (int i = 0; i < R; ++i)
        for (long v = 0; v < long(Y) * Z * m; ++v)
          h.data()[(long(c) * R + i) * Y * Z * m + v] =
              modes[(long(c) * X + r0 + i) * Y * Z * m + v];
    Kokkos::deep_copy(t, h);
    return t;
  }
  // Rows [r0, r0 + R) of `box` (counted from box.lo[0]) of the T modes, its columns only:
  // (1, C, R, box Y, box Z, m), as a plan over the box gives them.
  GridView<4, complexf> box_rows(const dist::Box<4>& box, int r0, int R) const {
    const int by = box.extent(1), bz = box.extent(2);
    auto t = make_grid_view<4, complexf>("btm", 1, C, {R, by, bz, m}, false);
    auto h = Kokkos::create_mirror_view(t);
    for (int c = 0; c < C; ++c)
      for (int i = 0; i < R; ++i)
        for (int y = 0; y < by; ++y)
          for (int z = 0; z < bz; ++z)
            for (int k = 0; k < m; ++k)
              h.data()[(((long(c) * R + i) * by + y) * bz + z) * m + k] =
                  modes[(((long(c) * X + box.lo[0] + r0 + i) * Y + box.lo[1] + y) * Z + box.lo[2] +
                         z) *
                            m +
                        k];
    Kokkos::deep_copy(t, h);
    return t;
  }
  // The update of the box alone, in groups of R of its rows.
  std::vector<float> update_box(const std::vector<float>& xv, const Linear& w, int R,
                                const dist::Box<4>& box) const {
    fft::TruncatedRealDft t_box(T, m, box.lo[3], box.extent(3));
    GridView<4> x = tensor(xv);
    for (int r0 = 0; r0 < box.extent(0); r0 += R) {
      const int rows_here = std::min(R, box.extent(0) - r0);
      fourier_layer_update_box_rows<4>(x, 0, r0, box_rows(box, r0, rows_here), t_box, w,
                                       Activation::GELU, box, 4);
    }
    return host(x);
  }
  // The whole-block updates (all rows at once), with what is known about `box`, and of the box
  // alone.
  std::vector<float> update_whole(const std::vector<float>& xv, const Linear& w, Support s,
                                  const dist::Box<4>& box) const {
    fft::TruncatedRealDft t_inverse(T, m);
    GridView<4> x = tensor(xv);
    fourier_layer_update<4>(x, rows(0, X), t_inverse, w, Activation::GELU, s, box,
                            dist::device_column_runs<4>({X, Y, Z, T}, box), 4);
    return host(x);
  }
  std::vector<float> update_box_whole(const std::vector<float>& xv, const Linear& w,
                                      const dist::Box<4>& box) const {
    fft::TruncatedRealDft t_box(T, m, box.lo[3], box.extent(3));
    GridView<4> x = tensor(xv);
    fourier_layer_update_box<4>(x, box_rows(box, 0, box.extent(0)), t_box, w, Activation::GELU, box,
                                dist::device_column_runs<4>({X, Y, Z, T}, box), 4);
    return host(x);
  }
  // The update in row groups of R rows, with or without what is known about `box`.
  std::vector<float> update(const std::vector<float>& xv, const Linear& w, int R, Support s,
                            const dist::Box<4>& box) const {
    fft::TruncatedRealDft t_inverse(T, m);
    GridView<4> x = tensor(xv);
    for (int r0 = 0; r0 < X; r0 += R) {
      const int rows_here = std::min(R, X - r0);
      if (s == Support::All)
        fourier_layer_update_rows<4>(x, 0, r0, rows(r0, rows_here), t_inverse, w, GridView<4>(),
                                     Activation::GELU, 4);
      else
        fourier_layer_update_rows<4>(x, 0, r0, rows(r0, rows_here), t_inverse, w, Activation::GELU,
                                     s, box);
    }
    return host(x);
  }
};

bool in_box(const dist::Box<4>& b, int i, int y, int z) {
  return i >= b.lo[0] && i < b.hi[0] && y >= b.lo[1] && y < b.hi[1] && z >= b.lo[2] && z < b.hi[2];
}

// The largest difference of `got` from `full` on the cells `inside(i, y, z, t)` selects, and
// from the input `x` on the others (which an update that knows its box must leave as they were).
template <class Inside>
std::pair<double, double> worst_inside_and_outside(const std::vector<float>& got,
                                                   const std::vector<float>& full,
                                                   const std::vector<float>& x, Inside inside) {
  using B4 = Block4;
  double in = 0, out = 0;
  for (int c = 0; c < B4::C; ++c)
    for (int i = 0; i < B4::X; ++i)
      for (int y = 0; y < B4::Y; ++y)
        for (int z = 0; z < B4::Z; ++z)
          for (int t = 0; t < B4::T; ++t) {
            const long a = B4::at(c, i, y, z, t);
            if (inside(i, y, z, t))
              in = std::max(in, double(std::abs(got[a] - full[a])));
            else
              out = std::max(out, double(std::abs(got[a] - x[a])));
          }
  return {in, out};
}

}  // namespace

TEST_CASE("an update that knows the padding equals the full update where it must", "[fourier]") {
  using B4 = Block4;
  const B4 blk;
  Linear w(B4::C, B4::C, test::random_array({std::size_t(B4::C), std::size_t(B4::C)}, 72),
           HostArray{{std::size_t(B4::C)}, std::vector<float>(B4::C, 0.f)});
  dist::Box<4> box;
  box.lo = {1, 2, 1, 0};
  box.hi = {5, 4, 5, B4::T};
  const auto xv = test::random_vector(std::size_t(B4::C) * B4::X * B4::Y * B4::Z * B4::T, 73);
  std::vector<float> zero_outside = xv;  // the first layer's input: zero outside the box
  for (int c = 0; c < B4::C; ++c)
    for (int i = 0; i < B4::X; ++i)
      for (int y = 0; y < B4::Y; ++y)
        for (int z = 0; z < B4::Z; ++z)
          for (int t = 0; t < B4::T; ++t)
            if (!in_box(box, i, y, z)) zero_outside[B4::at(c, i, y, z, t)] = 0.f;
  for (int R : {1, 4}) {
    INFO(R << " rows per group");
    // InputInside: every cell as the full update (w left out only where x is zero).
    const auto full_in = blk.update(zero_outside, w, R, Support::All, box);
    const auto known_in = blk.update(zero_outside, w, R, Support::InputInside, box);
    CHECK(test::rel_l2(known_in, std::vector<double>(full_in.begin(), full_in.end())) < 1e-6);
    // OutputInside: the box as the full update, everything else untouched.
    const auto full = blk.update(xv, w, R, Support::All, box);
    const auto known_out = blk.update(xv, w, R, Support::OutputInside, box);
    const auto [worst_in, worst_out] = worst_inside_and_outside(
        known_out, full, xv, [&](int i, int y, int z, int) { return in_box(box, i, y, z); });
    CHECK(worst_in < 1e-5);
    CHECK(worst_out == 0.0);
    // An empty box: OutputInside computes nothing.
    CHECK(blk.update(xv, w, R, Support::OutputInside, dist::Box<4>{}) == xv);
  }
  // w with a bias cannot be left out where x is zero.
  Linear biased(B4::C, B4::C, test::random_array({std::size_t(B4::C), std::size_t(B4::C)}, 74),
                test::random_array({std::size_t(B4::C)}, 75));
  CHECK_THROWS_AS(blk.update(zero_outside, biased, 2, Support::InputInside, box),
                  std::invalid_argument);
}

TEST_CASE("the box update equals the full update on the box and leaves the rest", "[fourier]") {
  // The last layer of a zero-padded grid on the interior alone: T modes of the box's columns,
  // a T transform windowed to the box's T cells (a box that does not start at T = 0).
  using B4 = Block4;
  const B4 blk;
  Linear w(B4::C, B4::C, test::random_array({std::size_t(B4::C), std::size_t(B4::C)}, 76),
           test::random_array({std::size_t(B4::C)}, 77));
  dist::Box<4> box;
  box.lo = {1, 2, 1, 2};
  box.hi = {5, 4, 5, 7};
  const auto xv = test::random_vector(std::size_t(B4::C) * B4::X * B4::Y * B4::Z * B4::T, 78);
  const auto full = blk.update(xv, w, 2, Support::All, box);
  for (int R : {1, 3}) {
    INFO(R << " box rows per group");
    const auto got = blk.update_box(xv, w, R, box);
    const auto [worst_in, worst_out] =
        worst_inside_and_outside(got, full, xv, [&](int i, int y, int z, int t) {
          return in_box(box, i, y, z) && t >= box.lo[3] && t < box.hi[3];
        });
    CHECK(worst_in < 1e-5);
    CHECK(worst_out == 0.0);
  }
  // An empty box (a rank without interior cells): nothing to do.
  GridView<4> x = blk.tensor(xv);
  fft::TruncatedRealDft t_box(B4::T, B4::m, box.lo[3], box.extent(3));
  fourier_layer_update_box_rows<4>(x, 0, 0, blk.box_rows(box, 0, 2), t_box, w, Activation::GELU,
                                   dist::Box<4>{});
  CHECK(B4::host(x) == xv);
  // T modes that are not the box's (the whole block's rows) or a T transform of another window.
  CHECK_THROWS_AS(
      fourier_layer_update_box_rows<4>(x, 0, 0, blk.rows(0, 2), t_box, w, Activation::GELU, box),
      std::invalid_argument);
  fft::TruncatedRealDft t_other(B4::T, B4::m, 0, box.extent(3) - 1);
  CHECK_THROWS_AS(fourier_layer_update_box_rows<4>(x, 0, 0, blk.box_rows(box, 0, 2), t_other, w,
                                                   Activation::GELU, box),
                  std::invalid_argument);
  CHECK_THROWS_AS(fourier_layer_update_box_rows<4>(x, 0, 3, blk.box_rows(box, 0, 2), t_box, w,
                                                   Activation::GELU, box),
                  std::invalid_argument);  // box rows 3, 4 of 4
}

TEST_CASE("the whole-block updates that know the padding equal the full update where they must",
          "[fourier]") {
  // The whole-tensor plan's first and last layers of a zero-padded grid, on either plan: the
  // first layer's x is NaN (unset memory) outside the box's columns, which the update must not
  // read; the last layer computes the box's columns (or its cells, from a plan over the box)
  // and leaves the rest.
  using B4 = Block4;
  const B4 blk;
  Linear w(B4::C, B4::C, test::random_array({std::size_t(B4::C), std::size_t(B4::C)}, 81),
           HostArray{{std::size_t(B4::C)}, std::vector<float>(B4::C, 0.f)});
  Linear biased(B4::C, B4::C, test::random_array({std::size_t(B4::C), std::size_t(B4::C)}, 82),
                test::random_array({std::size_t(B4::C)}, 83));
  dist::Box<4> box;
  box.lo = {1, 2, 1, 2};
  box.hi = {5, 4, 5, 7};
  const auto xv = test::random_vector(std::size_t(B4::C) * B4::X * B4::Y * B4::Z * B4::T, 84);
  std::vector<float> zero_outside = xv, nan_outside = xv;
  for (int c = 0; c < B4::C; ++c)
    for (int i = 0; i < B4::X; ++i)
      for (int y = 0; y < B4::Y; ++y)
        for (int z = 0; z < B4::Z; ++z)
          for (int t = 0; t < B4::T; ++t)
            if (!in_box(box, i, y, z)) {
              zero_outside[B4::at(c, i, y, z, t)] = 0.f;
              nan_outside[B4::at(c, i, y, z, t)] = std::numeric_limits<float>::quiet_NaN();
            }
  const auto full_in = blk.update(zero_outside, w, 2, Support::All, box);
  const auto full = blk.update(xv, w, 2, Support::All, box);
  const auto full_biased = blk.update(xv, biased, 2, Support::All, box);
  for (PlanKind plan : {PlanKind::Streaming, PlanKind::WholeTensor}) {
    ScopedExecutionPlan use(plan);
    INFO(plan_name(plan) << " plan");
    const auto known_in = blk.update_whole(nan_outside, w, Support::InputInside, box);
    CHECK(test::rel_l2(known_in, std::vector<double>(full_in.begin(), full_in.end())) < 1e-6);
    const auto all = blk.update_whole(xv, w, Support::All, box);
    CHECK(test::rel_l2(all, std::vector<double>(full.begin(), full.end())) < 1e-6);
    const auto known_out = blk.update_whole(xv, w, Support::OutputInside, box);
    auto [worst_in, worst_out] = worst_inside_and_outside(
        known_out, full, xv, [&](int i, int y, int z, int) { return in_box(box, i, y, z); });
    CHECK(worst_in < 1e-5);
    CHECK(worst_out == 0.0);
    CHECK(blk.update_whole(xv, w, Support::OutputInside, dist::Box<4>{}) == xv);
    const auto got_box = blk.update_box_whole(xv, biased, box);
    std::tie(worst_in, worst_out) =
        worst_inside_and_outside(got_box, full_biased, xv, [&](int i, int y, int z, int t) {
          return in_box(box, i, y, z) && t >= box.lo[3] && t < box.hi[3];
        });
    CHECK(worst_in < 1e-5);
    CHECK(worst_out == 0.0);
  }
  // A biased w cannot be left out where x is unset; runs that are not the box's are refused.
  CHECK_THROWS_AS(blk.update_whole(zero_outside, biased, Support::InputInside, box),
                  std::invalid_argument);
  fft::TruncatedRealDft t_inverse(B4::T, B4::m);
  GridView<4> x = blk.tensor(xv);
  dist::Box<4> other = box;
  other.hi[1] += 1;
  CHECK_THROWS_AS(fourier_layer_update<4>(
                      x, blk.rows(0, B4::X), t_inverse, w, Activation::GELU, Support::OutputInside,
                      box, dist::device_column_runs<4>({B4::X, B4::Y, B4::Z, B4::T}, other)),
                  std::invalid_argument);
}
