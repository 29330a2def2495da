// The distributed 3-D FFT against single-process FFTW 3-D transforms of the same global tensor:
// full r2c and c2r, and the truncated (kept-mode) variant the Fourier layers use, on every process
// grid the rank count allows, with an odd extent.
#include <fftw3.h>
#include <mpi.h>

#include <catch2/catch.hpp>
#include <complex>

#include "decomposition/DistributedFft.hpp"
#include "support/MpiUtil.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;
using namespace ufno::dist;

namespace {

// This rank's block of a global (B, C, X, Y, T) host array.
template <class T, class V>
V block_of(const std::vector<T>& g, const std::array<int, 5>& s, const Box3& b) {
  V v("block", s[0], s[1], b.extent(0), b.extent(1), b.extent(2));
  auto h = Kokkos::create_mirror_view(v);
  for (int n = 0; n < s[0]; ++n)
    for (int c = 0; c < s[1]; ++c)
      for (int i = 0; i < b.extent(0); ++i)
        for (int j = 0; j < b.extent(1); ++j)
          for (int k = 0; k < b.extent(2); ++k)
            h(n, c, i, j, k) =
                g[((((std::size_t(n) * s[1] + c) * s[2] + b.lo[0] + i) * s[3] + b.lo[1] + j) *
                   s[4]) +
                  b.lo[2] + k];
  Kokkos::deep_copy(v, h);
  return v;
}

// Full r2c of each (B, C) slice: (B, C, X, Y, T/2+1).
std::vector<std::complex<float>> reference_r2c(std::vector<float> x, int nl, int X, int Y, int T) {
  const int tc = T / 2 + 1;
  std::vector<std::complex<float>> out(std::size_t(nl) * X * Y * tc);
  int dims[3] = {X, Y, T};
  fftwf_plan p = fftwf_plan_many_dft_r2c(3, dims, nl, x.data(), nullptr, 1, X * Y * T,
                                         reinterpret_cast<fftwf_complex*>(out.data()), nullptr, 1,
                                         X * Y * tc, FFTW_ESTIMATE);
  fftwf_execute(p);
  fftwf_destroy_plan(p);
  return out;
}

std::vector<float> reference_c2r(std::vector<std::complex<float>> s, int nl, int X, int Y, int T) {
  const int tc = T / 2 + 1;
  std::vector<float> out(std::size_t(nl) * X * Y * T);
  int dims[3] = {X, Y, T};
  fftwf_plan p =
      fftwf_plan_many_dft_c2r(3, dims, nl, reinterpret_cast<fftwf_complex*>(s.data()), nullptr, 1,
                              X * Y * tc, out.data(), nullptr, 1, X * Y * T, FFTW_ESTIMATE);
  fftwf_execute(p);
  fftwf_destroy_plan(p);
  return out;
}

double max_rel_diff(const std::vector<std::complex<double>>& a,
                    const std::vector<std::complex<double>>& b, double scale) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m / scale;
}

}  // namespace

TEST_CASE("distributed 3-D FFT equals the single-process FFTW transform", "[mpi][fft]") {
  const int B = 2, C = 2, X = 9, Y = 10, T = 8, tc = T / 2 + 1;
  const std::array<int, 5> shape{B, C, X, Y, T};
  const auto g = test::random_vector(std::size_t(B) * C * X * Y * T, 77);
  const auto ref = reference_r2c(g, B * C, X, Y, T);
  double scale = 0;
  for (auto v : ref) scale = std::max(scale, double(std::abs(v)));
  for (auto parts : test::grids_2d(test::mpi_size())) {
    ProcessGrid grid(MPI_COMM_WORLD, parts);
    const int me = grid.rank();
    for (bool truncated : {false, true}) {
      INFO("grid " << grid.str() << (truncated ? " truncated" : " full"));
      const std::array<int, 3> m{3, 4, 3};
      DistributedFft<3> plan(grid, {X, Y, T}, truncated ? std::optional(m) : std::nullopt);
      Tensor x = block_of<float, Tensor>(g, shape, plan.real_layout().box(me));
      CTensor s = plan.forward(x);
      const Box3 sb = plan.spectral_layout().box(me);
      auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
      std::vector<std::complex<double>> got, want;
      auto bin = [&](int k, int low, int n) { return k < low ? k : n - 2 * low + k; };
      for (int n = 0; n < B; ++n)
        for (int c = 0; c < C; ++c)
          for (int i = 0; i < sb.extent(0); ++i)
            for (int j = 0; j < sb.extent(1); ++j)
              for (int k = 0; k < sb.extent(2); ++k) {
                const int kx = truncated ? bin(sb.lo[0] + i, m[0], X) : sb.lo[0] + i;
                const int ky = truncated ? bin(sb.lo[1] + j, m[1], Y) : sb.lo[1] + j;
                const int kt = sb.lo[2] + k;
                got.emplace_back(hs(n, c, i, j, k).real(), hs(n, c, i, j, k).imag());
                want.emplace_back(ref[((std::size_t(n * C + c) * X + kx) * Y + ky) * tc + kt]);
              }
      CHECK(max_rel_diff(got, want, scale) < 1e-5);

      // Backward: the unnormalised c2r of the (masked) spectrum.
      auto masked = ref;
      if (truncated)
        for (int l = 0; l < B * C; ++l)
          for (int kx = 0; kx < X; ++kx)
            for (int ky = 0; ky < Y; ++ky)
              for (int kt = 0; kt < tc; ++kt) {
                const bool keep =
                    (kx < m[0] || kx >= X - m[0]) && (ky < m[1] || ky >= Y - m[1]) && kt < m[2];
                if (!keep) masked[((std::size_t(l) * X + kx) * Y + ky) * tc + kt] = 0;
              }
      const auto back_ref = reference_c2r(masked, B * C, X, Y, T);
      Tensor back = plan.backward(s);
      const Box3 rb = plan.real_layout().box(me);
      auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
      double err = 0, mag = 0;
      for (int n = 0; n < B; ++n)
        for (int c = 0; c < C; ++c)
          for (int i = 0; i < rb.extent(0); ++i)
            for (int j = 0; j < rb.extent(1); ++j)
              for (int k = 0; k < rb.extent(2); ++k) {
                const float w =
                    back_ref[((std::size_t(n * C + c) * X + rb.lo[0] + i) * Y + rb.lo[1] + j) * T +
                             rb.lo[2] + k];
                err = std::max(err, double(std::abs(hb(n, c, i, j, k) - w)));
                mag = std::max(mag, double(std::abs(w)));
              }
      CHECK(err <= 1e-5 * std::max(mag, 1.0));

      // A grid that leaves X whole streams rows: the inverse stopped after X, then finished
      // through Y a few rows at a time, equals the T modes backward_to_t_modes gives.
      CHECK(plan.streams_rows() == (truncated && grid.parts()[0] == 1));
      if (!plan.streams_rows()) continue;
      const CTensor tm = plan.backward_to_t_modes(s);
      const CTensor ym = plan.backward_first_axis(s);
      auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tm);
      double tm_mag = 0;
      for (std::size_t i = 0; i < ht.span(); ++i)
        tm_mag = std::max(tm_mag, double(Kokkos::abs(ht.data()[i])));
      for (int rows : {1, 4, X}) {
        double row_err = 0;
        for (int n = 0; n < B; ++n)
          for (int r0 = 0; r0 < X; r0 += rows) {
            const int R = std::min(rows, X - r0);
            auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                          plan.t_modes_of_rows(ym, n, r0, R));
            for (int c = 0; c < C; ++c)
              for (int i = 0; i < R; ++i)
                for (int j = 0; j < int(ht.extent(3)); ++j)
                  for (int k = 0; k < m[2]; ++k)
                    row_err = std::max(
                        row_err, double(Kokkos::abs(hr(0, c, i, j, k) - ht(n, c, r0 + i, j, k))));
          }
        INFO(rows << " rows at a time");
        CHECK(row_err <= 1e-6 * tm_mag);
      }
      CHECK_THROWS_AS(plan.t_modes_of_rows(ym, 0, X - 1, 2), std::invalid_argument);
    }
  }
}

TEST_CASE("distributed 3-D c2c FFT equals the single-process FFTW transform", "[mpi][fft]") {
  const int B = 1, C = 2, X = 7, Y = 10, T = 6;
  const std::array<int, 5> shape{B, C, X, Y, T};
  const auto re = test::random_vector(std::size_t(B) * C * X * Y * T, 91);
  const auto im = test::random_vector(re.size(), 92);
  std::vector<std::complex<float>> g(re.size()), ref(re.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = {re[i], im[i]};
  int dims[3] = {X, Y, T};
  auto c2c = [&](std::vector<std::complex<float>> in, int sign) {
    std::vector<std::complex<float>> out(in.size());
    fftwf_plan p = fftwf_plan_many_dft(
        3, dims, B * C, reinterpret_cast<fftwf_complex*>(in.data()), nullptr, 1, X * Y * T,
        reinterpret_cast<fftwf_complex*>(out.data()), nullptr, 1, X * Y * T, sign, FFTW_ESTIMATE);
    fftwf_execute(p);
    fftwf_destroy_plan(p);
    return out;
  };
  ref = c2c(g, FFTW_FORWARD);
  double scale = 0;
  for (auto v : ref) scale = std::max(scale, double(std::abs(v)));
  const std::array<int, 3> m{2, 3, 2};
  auto kept = [&](int k, int mm, int n) { return k < mm || k >= n - mm; };
  auto bin = [&](int k, int mm, int n) { return k < mm ? k : n - 2 * mm + k; };
  for (auto parts : test::grids_2d(test::mpi_size())) {
    ProcessGrid grid(MPI_COMM_WORLD, parts);
    const int me = grid.rank();
    for (bool truncated : {false, true}) {
      INFO("grid " << grid.str() << (truncated ? " truncated" : " full"));
      DistributedFft<3> plan(grid, {X, Y, T}, truncated ? std::optional(m) : std::nullopt,
                             ExchangeAlgorithm::PointToPoint, FftKind::C2C);
      CTensor x = block_of<std::complex<float>, CTensor>(
          std::vector<std::complex<float>>(g.begin(), g.end()), shape, plan.real_layout().box(me));
      CTensor s = plan.forward(x);
      const Box3 sb = plan.spectral_layout().box(me);
      auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
      std::vector<std::complex<double>> got, want;
      for (int c = 0; c < C; ++c)
        for (int i = 0; i < sb.extent(0); ++i)
          for (int j = 0; j < sb.extent(1); ++j)
            for (int k = 0; k < sb.extent(2); ++k) {
              const int kx = truncated ? bin(sb.lo[0] + i, m[0], X) : sb.lo[0] + i;
              const int ky = truncated ? bin(sb.lo[1] + j, m[1], Y) : sb.lo[1] + j;
              const int kt = truncated ? bin(sb.lo[2] + k, m[2], T) : sb.lo[2] + k;
              got.emplace_back(hs(0, c, i, j, k).real(), hs(0, c, i, j, k).imag());
              want.emplace_back(ref[((std::size_t(c) * X + kx) * Y + ky) * T + kt]);
            }
      CHECK(max_rel_diff(got, want, scale) < 1e-5);
      auto masked = ref;
      if (truncated)
        for (int c = 0; c < C; ++c)
          for (int kx = 0; kx < X; ++kx)
            for (int ky = 0; ky < Y; ++ky)
              for (int kt = 0; kt < T; ++kt)
                if (!(kept(kx, m[0], X) && kept(ky, m[1], Y) && kept(kt, m[2], T)))
                  masked[((std::size_t(c) * X + kx) * Y + ky) * T + kt] = 0;
      const auto back_ref = c2c(masked, FFTW_BACKWARD);
      CTensor back = plan.backward_c2c(s);
      const Box3 rb = plan.real_layout().box(me);
      auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
      double err = 0, mag = 0;
      for (int c = 0; c < C; ++c)
        for (int i = 0; i < rb.extent(0); ++i)
          for (int j = 0; j < rb.extent(1); ++j)
            for (int k = 0; k < rb.extent(2); ++k) {
              const auto w = back_ref[((std::size_t(c) * X + rb.lo[0] + i) * Y + rb.lo[1] + j) * T +
                                      rb.lo[2] + k];
              const auto v = hb(0, c, i, j, k);
              err = std::max(err, double(std::abs(std::complex<float>(v.real(), v.imag()) - w)));
              mag = std::max(mag, double(std::abs(w)));
            }
      CHECK(err <= 1e-5 * std::max(mag, 1.0));
    }
  }
}
