// Fft1dPlan against direct DFTs along the middle axis of (outer, n, inner) arrays, for every
// transform kind, odd and even lengths, and inner strides > 1; the pruned real transform against
// direct DFTs of the kept bins.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <complex>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "fft/Fft1dPlan.hpp"
#include "fft/TruncatedDft.hpp"
#include "fft/TruncatedRealDft.hpp"
#include "support/Naive.hpp"
#include "support/Skip.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;
using cd = std::complex<double>;

namespace {

// Direct DFT of one line; sign -1 forward, +1 backward; unnormalised.
std::vector<cd> dft(const std::vector<cd>& v, int sign) {
  const int n = int(v.size());
  std::vector<cd> r(n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j) r[k] += v[j] * std::polar(1.0, sign * 2 * M_PI * double(k) * j / n);
  return r;
}

using ComplexView = Kokkos::View<complexf*, Kokkos::HostSpace>;
using RealView = Kokkos::View<float*, Kokkos::HostSpace>;

}  // namespace

TEST_CASE("batched 1-D FFTs match direct DFTs", "[fft]") {
  for (int n : {6, 7, 16}) {
    for (long inner : {1L, 3L}) {
      const long outer = 4;
      const fft::Batch1d b{outer, n, inner};
      const int nc = n / 2 + 1;
      auto r = test::random_vector(outer * n * inner, 11 + n);
      auto im = test::random_vector(outer * n * inner, 97 + n);
      auto idx = [&](long o, int k, long i, int len) { return (o * len + k) * inner + i; };
      SECTION("r2c n=" + std::to_string(n) + " inner=" + std::to_string(inner)) {
        RealView in("in", outer * n * inner);
        ComplexView out("out", outer * nc * inner);
        for (std::size_t i = 0; i < in.size(); ++i) in(i) = r[i];
        fft::make_fft1d_plan(fft::Transform::R2C, b)->execute(in.data(), out.data());
        for (long o = 0; o < outer; ++o)
          for (long i = 0; i < inner; ++i) {
            std::vector<cd> line(n);
            for (int k = 0; k < n; ++k) line[k] = r[idx(o, k, i, n)];
            auto ref = dft(line, -1);
            for (int k = 0; k < nc; ++k) {
              CHECK(out(idx(o, k, i, nc)).real() == Approx(ref[k].real()).margin(1e-4));
              CHECK(out(idx(o, k, i, nc)).imag() == Approx(ref[k].imag()).margin(1e-4));
            }
          }
      }
      SECTION("c2c both signs, in place, n=" + std::to_string(n) +
              " inner=" + std::to_string(inner)) {
        for (auto t : {fft::Transform::C2C_FORWARD, fft::Transform::C2C_BACKWARD}) {
          ComplexView a("a", outer * n * inner);
          for (std::size_t i = 0; i < a.size(); ++i) a(i) = complexf(r[i], im[i]);
          fft::make_fft1d_plan(t, b)->execute(a.data(), a.data());
          for (long o = 0; o < outer; ++o)
            for (long i = 0; i < inner; ++i) {
              std::vector<cd> line(n);
              for (int k = 0; k < n; ++k) line[k] = cd(r[idx(o, k, i, n)], im[idx(o, k, i, n)]);
              auto ref = dft(line, t == fft::Transform::C2C_FORWARD ? -1 : 1);
              for (int k = 0; k < n; ++k) {
                CHECK(a(idx(o, k, i, n)).real() == Approx(ref[k].real()).margin(1e-4));
                CHECK(a(idx(o, k, i, n)).imag() == Approx(ref[k].imag()).margin(1e-4));
              }
            }
        }
      }
      SECTION("c2r ignores the imaginary part of bin 0, n=" + std::to_string(n) +
              " inner=" + std::to_string(inner)) {
        ComplexView in("in", outer * nc * inner);
        RealView out("out", outer * n * inner);
        std::vector<cd> spec(outer * nc * inner);
        for (std::size_t i = 0; i < spec.size(); ++i) spec[i] = cd(r[i], im[i]);
        for (std::size_t i = 0; i < in.size(); ++i)
          in(i) = complexf(spec[i].real(), spec[i].imag());
        fft::make_fft1d_plan(fft::Transform::C2R, b)->execute(in.data(), out.data());
        for (long o = 0; o < outer; ++o)
          for (long i = 0; i < inner; ++i)
            for (int t = 0; t < n; ++t) {
              double v = 0;
              for (int k = 0; k < nc; ++k) {
                const cd z = spec[idx(o, k, i, nc)];
                const bool self = k == 0 || (n % 2 == 0 && k == n / 2);
                v += self ? z.real() * std::cos(2 * M_PI * k * t / n)
                          : 2 * (z * std::polar(1.0, 2 * M_PI * double(k) * t / n)).real();
              }
              CHECK(out(idx(o, t, i, n)) == Approx(v).margin(1e-4));
            }
      }
    }
  }
}

TEST_CASE("truncated real DFT keeps the first m bins and inverts from them", "[fft]") {
  // (n, m): truncated, all bins of an odd length, all bins including the Nyquist bin.
  for (auto [n, m] : {std::pair{32, 10}, std::pair{7, 4}, std::pair{8, 5}, std::pair{6, 1}}) {
    const long rows = 5;
    fft::TruncatedRealDft t(n, m);
    auto r = test::random_vector(rows * n, 31 + n);
    auto s = test::random_vector(rows * m * 2, 57 + m);
    SECTION("forward n=" + std::to_string(n) + " m=" + std::to_string(m)) {
      RealView in("in", rows * n);
      ComplexView out("out", rows * m);
      for (std::size_t i = 0; i < in.size(); ++i) in(i) = r[i];
      t.forward(in.data(), out.data(), rows);
      for (long row = 0; row < rows; ++row) {
        std::vector<cd> line(n);
        for (int j = 0; j < n; ++j) line[j] = r[row * n + j];
        const auto ref = dft(line, -1);
        for (int k = 0; k < m; ++k) {
          CHECK(out(row * m + k).real() == Approx(ref[k].real()).margin(1e-4));
          CHECK(out(row * m + k).imag() == Approx(ref[k].imag()).margin(1e-4));
        }
      }
    }
    SECTION("backward n=" + std::to_string(n) + " m=" + std::to_string(m)) {
      ComplexView in("in", rows * m);
      RealView out("out", rows * n);
      for (long i = 0; i < rows * m; ++i) in(i) = complexf(s[2 * i], s[2 * i + 1]);
      t.backward(in.data(), out.data(), rows);
      for (long row = 0; row < rows; ++row) {
        // The c2r reference: the Hermitian completion of bins 0..m-1 (all others zero), with the
        // imaginary parts of bin 0 and of the Nyquist bin dropped, then the inverse DFT.
        std::vector<cd> full(n);
        for (int k = 0; k < m; ++k) {
          cd v(s[2 * (row * m + k)], s[2 * (row * m + k) + 1]);
          if (k == 0 || 2 * k == n) v = cd(v.real(), 0);
          full[k] = v;
          if (k != 0 && 2 * k != n) full[n - k] = std::conj(v);
        }
        const auto ref = dft(full, +1);
        for (int j = 0; j < n; ++j) CHECK(out(row * n + j) == Approx(ref[j].real()).margin(1e-4));
      }
    }
  }
  CHECK_THROWS_AS(fft::TruncatedRealDft(8, 6), std::invalid_argument);
}

TEST_CASE("truncated complex DFT along a middle axis keeps the low and high bins", "[fft]") {
  // (n, low, high, inner, outer): the Fourier layers' form, an odd length, no high bins, every bin
  // (n / 2 kept from the low and from the high side), lengths 1 and 2 (no position pairs), bins
  // whose classes do not pair up, and the LGR1 model's A3 axis with enough slices to be cut into
  // cache blocks.
  for (auto [n, low, high, inner, outer] :
       {std::tuple{12, 3, 3, 1L, 4L}, std::tuple{12, 3, 3, 3L, 4L}, std::tuple{7, 2, 2, 1L, 4L},
        std::tuple{7, 2, 2, 3L, 4L}, std::tuple{9, 4, 0, 1L, 4L}, std::tuple{9, 4, 0, 3L, 4L},
        std::tuple{8, 5, 3, 2L, 3L}, std::tuple{8, 4, 4, 2L, 3L}, std::tuple{1, 1, 0, 2L, 3L},
        std::tuple{2, 1, 1, 2L, 3L}, std::tuple{2, 2, 0, 1L, 3L}, std::tuple{10, 1, 4, 2L, 3L},
        std::tuple{57, 10, 10, 200L, 20L}}) {
    const int K = low + high;
    {
      auto bin = [n = n, low = low, high = high](int k) {
        return k < low ? k : n - high + (k - low);
      };
      auto r = test::random_vector(outer * n * inner * 2, 13 + n);
      const std::string name = "n=" + std::to_string(n) + " low=" + std::to_string(low) +
                               " high=" + std::to_string(high) + " inner=" + std::to_string(inner) +
                               " outer=" + std::to_string(outer);
      fft::TruncatedDft t(n, low, high);
      SECTION("forward " + name) {
        ComplexView in("in", outer * n * inner), out("out", outer * K * inner);
        for (std::size_t i = 0; i < in.size(); ++i) in(i) = complexf(r[2 * i], r[2 * i + 1]);
        t.forward(in.data(), out.data(), outer, inner);
        for (long o = 0; o < outer; ++o)
          for (long i = 0; i < inner; ++i) {
            std::vector<cd> line(n);
            for (int j = 0; j < n; ++j) {
              const auto v = in((o * n + j) * inner + i);
              line[j] = cd(v.real(), v.imag());
            }
            const auto ref = dft(line, -1);
            for (int k = 0; k < K; ++k) {
              const auto v = out((o * K + k) * inner + i);
              CHECK(v.real() == Approx(ref[bin(k)].real()).margin(1e-4));
              CHECK(v.imag() == Approx(ref[bin(k)].imag()).margin(1e-4));
            }
          }
      }
      SECTION("backward " + name) {
        ComplexView in("in", outer * K * inner), out("out", outer * n * inner);
        for (std::size_t i = 0; i < in.size(); ++i) in(i) = complexf(r[2 * i], r[2 * i + 1]);
        t.backward(in.data(), out.data(), outer, inner);
        for (long o = 0; o < outer; ++o)
          for (long i = 0; i < inner; ++i) {
            std::vector<cd> full(n);  // kept bins in place, the others zero
            for (int k = 0; k < K; ++k) {
              const auto v = in((o * K + k) * inner + i);
              full[bin(k)] = cd(v.real(), v.imag());
            }
            const auto ref = dft(full, +1);
            for (int j = 0; j < n; ++j) {
              const auto v = out((o * n + j) * inner + i);
              CHECK(v.real() == Approx(ref[j].real()).margin(1e-4));
              CHECK(v.imag() == Approx(ref[j].imag()).margin(1e-4));
            }
          }
      }
    }
  }
  CHECK_THROWS_AS(fft::TruncatedDft(8, 5, 4), std::invalid_argument);
}

TEST_CASE("windowed truncated DFTs read and write only their window of the period", "[fft]") {
  // A signal of period n that is zero outside [off, off + len): the windowed forward of its
  // window equals the forward of the whole zero-padded signal; the windowed inverse equals the
  // window of the whole inverse. The real T transform and the complex middle-axis one; windows
  // at the start, inside, at the end and the whole period; an odd period.
  const long rows = 3, inner = 2;
  for (auto [n, off, len] : {std::tuple{40, 8, 24}, std::tuple{57, 16, 25}, std::tuple{9, 0, 4},
                             std::tuple{9, 5, 4}, std::tuple{9, 0, 9}}) {
    const std::string name =
        "n=" + std::to_string(n) + " window " + std::to_string(off) + "+" + std::to_string(len);
    const int m = 4, low = 3, high = 3, K = low + high;
    auto r = test::random_vector(rows * len * inner * 2, 77 + n + off);
    auto s = test::random_vector(rows * K * inner * 2, 79 + n + off);
    SECTION("real " + name) {
      fft::TruncatedRealDft full(n, m), win(n, m, off, len);
      CHECK(win.period() == n);
      CHECK(win.length() == len);
      RealView x("x", rows * len), xp("xp", rows * n);  // xp: zero-padded
      for (long i = 0; i < rows; ++i)
        for (int j = 0; j < len; ++j) x(i * len + j) = xp(i * n + off + j) = r[i * len + j];
      ComplexView a("a", rows * m), b("b", rows * m);
      win.forward(x.data(), a.data(), rows);
      full.forward(xp.data(), b.data(), rows);
      for (long i = 0; i < rows * m; ++i) {
        CHECK(a(i).real() == Approx(b(i).real()).margin(1e-4));
        CHECK(a(i).imag() == Approx(b(i).imag()).margin(1e-4));
      }
      ComplexView q("q", rows * m);
      for (long i = 0; i < rows * m; ++i) q(i) = complexf(s[2 * i], s[2 * i + 1]);
      RealView y("y", rows * len), yp("yp", rows * n);
      win.backward(q.data(), y.data(), rows);
      full.backward(q.data(), yp.data(), rows);
      for (long i = 0; i < rows; ++i)
        for (int j = 0; j < len; ++j)
          CHECK(y(i * len + j) == Approx(yp(i * n + off + j)).margin(1e-4));
    }
    SECTION("complex " + name) {
      fft::TruncatedDft full(n, low, high), win(n, low, high, off, len);
      CHECK(win.period() == n);
      CHECK(win.length() == len);
      ComplexView x("x", rows * len * inner), xp("xp", rows * n * inner);
      for (long o = 0; o < rows; ++o)
        for (int j = 0; j < len; ++j)
          for (long i = 0; i < inner; ++i) {
            const long q = (o * len + j) * inner + i;
            x(q) = xp((o * n + off + j) * inner + i) = complexf(r[2 * q], r[2 * q + 1]);
          }
      ComplexView a("a", rows * K * inner), b("b", rows * K * inner);
      win.forward(x.data(), a.data(), rows, inner);
      full.forward(xp.data(), b.data(), rows, inner);
      for (long i = 0; i < rows * K * inner; ++i) {
        CHECK(a(i).real() == Approx(b(i).real()).margin(1e-4));
        CHECK(a(i).imag() == Approx(b(i).imag()).margin(1e-4));
      }
      ComplexView q("q", rows * K * inner), y("y", rows * len * inner), yp("yp", rows * n * inner);
      for (long i = 0; i < rows * K * inner; ++i) q(i) = complexf(s[2 * i], s[2 * i + 1]);
      win.backward(q.data(), y.data(), rows, inner);
      full.backward(q.data(), yp.data(), rows, inner);
      for (long o = 0; o < rows; ++o)
        for (int j = 0; j < len; ++j)
          for (long i = 0; i < inner; ++i) {
            const complexf u = y((o * len + j) * inner + i), v = yp((o * n + off + j) * inner + i);
            CHECK(u.real() == Approx(v.real()).margin(1e-4));
            CHECK(u.imag() == Approx(v.imag()).margin(1e-4));
          }
    }
  }
  CHECK_THROWS_AS(fft::TruncatedRealDft(8, 3, 5, 4), std::invalid_argument);  // 5 + 4 > 8
  CHECK_THROWS_AS(fft::TruncatedRealDft(8, 3, -1, 4), std::invalid_argument);
  CHECK_THROWS_AS(fft::TruncatedDft(8, 2, 2, 0, 0), std::invalid_argument);
}

TEST_CASE("measured plans with a wisdom file give the same transforms and keep the wisdom",
          "[fft][wisdom]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ufno_test_wisdom_" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove(path);
  const long outer = 5, inner = 3;
  const int n = 12, nc = n / 2 + 1;
  const fft::Batch1d b{outer, n, inner};
  auto r = test::random_vector(outer * n * inner, 5);
  // One real and one in-place complex transform, on arrays starting one float past FFTW's
  // alignment (the measured plan is made on scratch arrays that must match it).
  auto run = [&](bool shifted) {
    RealView in("in", outer * n * inner + 1);
    ComplexView out("out", outer * nc * inner + 1), c("c", outer * n * inner + 1);
    float* src = in.data() + (shifted ? 1 : 0);
    for (std::size_t i = 0; i < r.size(); ++i) src[i] = r[i];
    complexf* dst = out.data();
    fft::make_fft1d_plan(fft::Transform::R2C, b)->execute(src, dst);
    complexf* cc = c.data();
    for (std::size_t i = 0; i < r.size(); ++i) cc[i] = complexf(r[i], -r[i]);
    fft::make_fft1d_plan(fft::Transform::C2C_FORWARD, b)->execute(cc, cc);
    std::vector<float> got;
    for (long i = 0; i < outer * nc * inner; ++i)
      got.insert(got.end(), {dst[i].real(), dst[i].imag()});
    for (long i = 0; i < outer * n * inner; ++i)
      got.insert(got.end(), {cc[i].real(), cc[i].imag()});
    return got;
  };
  fft::set_fft_wisdom_file("");
  const auto estimated = run(false);
  fft::set_fft_wisdom_file(path);
  for (bool shifted : {false, true}) {
    const auto measured = run(shifted);
    std::vector<double> ref(estimated.begin(), estimated.end());
    INFO("arrays shifted by one float: " << shifted);
    CHECK(test::rel_l2(measured, ref) < 1e-6);
  }
  REQUIRE(std::filesystem::exists(path));
  CHECK(std::filesystem::file_size(path) > 0);
  CHECK_NOTHROW(fft::set_fft_wisdom_file(path));  // reads back what it wrote
  { std::ofstream(path) << "not wisdom\n"; }
  CHECK_THROWS_WITH(fft::set_fft_wisdom_file(path), Catch::Contains(path));
  fft::set_fft_wisdom_file("");
  std::filesystem::remove(path);
}

// CTest: fft_multi_axis_plan (skipped where the backend plans one axis at a time: cuFFT).
TEST_CASE("a plan over several axes equals one plan per axis", "[fft][.fft_multi_axis_plan]") {
  if (!fft::fft_multi_axis) ufno::test::skip("this FFT backend plans one axis at a time");
  using fft::Transform;
  const long outer = 2, inner = 3;
  const int a = 5, b = 4, n = 6, nc = n / 2 + 1;  // axes (a, b, n) of (outer, a, b, n, inner)
  const auto xv = test::random_vector(std::size_t(outer) * a * b * n * inner, 81);
  RealView x("x", xv.size());
  std::copy(xv.begin(), xv.end(), x.data());
  const long half = outer * a * b * nc * inner;
  // R2C over (a, b, n) at once.
  ComplexView multi("multi", half);
  fft::make_fft1d_plan(Transform::R2C, {outer, n, inner, {a, b}})->execute(x.data(), multi.data());
  // The same axis by axis: n (r2c), then b, then a.
  ComplexView step("step", half);
  fft::make_fft1d_plan(Transform::R2C, {outer * a * b, n, inner})->execute(x.data(), step.data());
  fft::make_fft1d_plan(Transform::C2C_FORWARD, {outer * a, b, long(nc) * inner})
      ->execute(step.data(), step.data());
  fft::make_fft1d_plan(Transform::C2C_FORWARD, {outer, a, long(b) * nc * inner})
      ->execute(step.data(), step.data());
  double d2 = 0, r2 = 0;
  for (long i = 0; i < half; ++i) {
    d2 += std::norm(cd(multi(i).real() - step(i).real(), multi(i).imag() - step(i).imag()));
    r2 += std::norm(cd(step(i).real(), step(i).imag()));
  }
  CHECK(std::sqrt(d2 / r2) < 1e-6);
  // C2R back over (a, b, n): N x the input.
  RealView back("back", xv.size());
  fft::make_fft1d_plan(Transform::C2R, {outer, n, inner, {a, b}})
      ->execute(multi.data(), back.data());
  double e2 = 0, x2 = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const double want = double(xv[i]) * a * b * n;
    e2 += (back(i) - want) * (back(i) - want);
    x2 += want * want;
  }
  CHECK(std::sqrt(e2 / x2) < 1e-6);
  // C2C over (a, b) of a complex array, against the two 1-D plans.
  ComplexView c1("c1", half), c2("c2", half);
  for (long i = 0; i < half; ++i) c1(i) = c2(i) = step(i);
  fft::make_fft1d_plan(Transform::C2C_BACKWARD, {outer, b, long(nc) * inner, {a}})
      ->execute(c1.data(), c1.data());
  fft::make_fft1d_plan(Transform::C2C_BACKWARD, {outer * a, b, long(nc) * inner})
      ->execute(c2.data(), c2.data());
  fft::make_fft1d_plan(Transform::C2C_BACKWARD, {outer, a, long(b) * nc * inner})
      ->execute(c2.data(), c2.data());
  d2 = r2 = 0;
  for (long i = 0; i < half; ++i) {
    d2 += std::norm(cd(c1(i).real() - c2(i).real(), c1(i).imag() - c2(i).imag()));
    r2 += std::norm(cd(c2(i).real(), c2(i).imag()));
  }
  CHECK(std::sqrt(d2 / r2) < 1e-6);
}
