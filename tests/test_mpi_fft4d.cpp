// The distributed 4-D FFT (DistributedFft<4>) and the 4-D spectral convolution against direct
// double-precision sums: every 1-D DFT of the reference is a plain sum over exp(-2 pi i j k / n),
// no FFT library. R2C full and truncated, C2C truncated, on every process grid over one, two and
// three axes that the rank count allows, with odd extents (uneven blocks, empty ranks at 3 and 4
// ranks). The spectral convolution is also checked against PyTorch
// (tests/data/spectral4d_small.h5).
#include <mpi.h>

#include <catch2/catch.hpp>
#include <complex>

#include "core/ExecutionPlan.hpp"
#include "decomposition/DistributedFft.hpp"
#include "operators/DistributedSpectralConv.hpp"
#include "support/MpiUtil.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;
using namespace ufno::dist;

namespace {

using Ext = std::array<int, 4>;
using cd = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

long cells(const Ext& e) { return long(e[0]) * e[1] * e[2] * e[3]; }

// Unnormalised DFT (sign -1) or inverse (sign +1) along axis a of nl arrays of extents e.
void dft_axis(std::vector<cd>& v, int nl, const Ext& e, int a, int sign) {
  long inner = 1, outer = nl;
  for (int b = a + 1; b < 4; ++b) inner *= e[b];
  for (int b = 0; b < a; ++b) outer *= e[b];
  const int n = e[a];
  std::vector<cd> line(n);
  for (long o = 0; o < outer; ++o)
    for (long i = 0; i < inner; ++i) {
      for (int k = 0; k < n; ++k) {
        cd acc = 0;
        for (int j = 0; j < n; ++j)
          acc += v[(o * n + j) * inner + i] * std::polar(1.0, sign * 2 * kPi * j * k / n);
        line[k] = acc;
      }
      for (int k = 0; k < n; ++k) v[(o * n + k) * inner + i] = line[k];
    }
}

// The cells of box `b` of a global (nl, n) array, in the block's row-major order, as (flat
// global index) per block cell.
std::vector<long> block_indices(int nl, const Ext& n, const Box4& b) {
  std::vector<long> idx;
  for (int l = 0; l < nl; ++l)
    for (int i = b.lo[0]; i < b.hi[0]; ++i)
      for (int j = b.lo[1]; j < b.hi[1]; ++j)
        for (int k = b.lo[2]; k < b.hi[2]; ++k)
          for (int t = b.lo[3]; t < b.hi[3]; ++t)
            idx.push_back((((long(l) * n[0] + i) * n[1] + j) * n[2] + k) * n[3] + t);
  return idx;
}

template <class T, class G>
GridView<4, T> device_block(const std::vector<G>& g, int B, int C, const Ext& n, const Box4& b) {
  auto v = make_grid_view<4, T>("block", B, C, b.extents());
  auto h = Kokkos::create_mirror_view(v);
  const auto idx = block_indices(B * C, n, b);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if constexpr (std::is_same_v<T, float>)
      h.data()[i] = float(std::real(g[idx[i]]));
    else
      h.data()[i] = complexf(float(std::real(g[idx[i]])), float(std::imag(g[idx[i]])));
  }
  Kokkos::deep_copy(v, h);
  return v;
}

// Sum over ranks of squared differences and of squared reference values.
double global_rel(double err2, double ref2) {
  double in[2] = {err2, ref2}, out[2];
  MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(out[0] / std::max(out[1], 1e-300));
}

// Bin of kept index k on an axis of n cells keeping `low` low and `high` high bins.
int bin(int k, int low, int high, int n) { return k < low ? k : n - (low + high) + k; }

bool kept(int k, int low, int high, int n) { return k < low || k >= n - high; }

}  // namespace

TEST_CASE("distributed 4-D FFT equals direct sums on every process grid", "[mpi][fft][4d]") {
  const int B = 1, C = 2;
  const Ext n{5, 6, 7, 6};
  const int nl = B * C;
  const auto real = test::random_vector(std::size_t(nl) * cells(n), 91);
  std::vector<cd> spec(real.begin(), real.end());
  for (int a = 3; a >= 0; --a) dft_axis(spec, nl, n, a, -1);
  const Ext m{2, 3, 2, 3};
  // Both execution plans (core/ExecutionPlan.hpp): only the streaming one streams rows.
  for (PlanKind kind : {PlanKind::Streaming, PlanKind::WholeTensor}) {
    ScopedExecutionPlan plan_kind(kind);
    INFO(plan_name(kind) << " plan");
    for (auto parts : test::grids_3d(test::mpi_size())) {
      ProcessGrid grid(MPI_COMM_WORLD, parts);
      const int me = grid.rank();
      for (bool truncated : {false, true}) {
        INFO("grid " << grid.str() << (truncated ? " truncated" : " full"));
        DistributedFft<4> plan(grid, n, truncated ? std::optional(m) : std::nullopt);
        const Ext kn = plan.spectral_extents();
        CHECK(kn == (truncated ? Ext{4, 6, 4, 3} : Ext{5, 6, 7, 4}));
        auto x = device_block<float>(real, B, C, n, plan.real_layout().box(me));
        auto s = plan.forward(x);
        // Forward: each kept bin equals the direct sum.
        const Box4 sb = plan.spectral_layout().box(me);
        auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
        const auto sidx = block_indices(nl, kn, sb);
        double e2 = 0, r2 = 0;
        for (std::size_t i = 0; i < sidx.size(); ++i) {
          long rest = sidx[i];
          Ext k{};
          for (int a = 3; a >= 0; --a) k[a] = rest % kn[a], rest /= kn[a];
          Ext g{};
          for (int a = 0; a < 4; ++a)
            g[a] = truncated && a < 3 ? bin(k[a], m[a], m[a], n[a]) : k[a];
          const cd want = spec[(((rest * n[0] + g[0]) * n[1] + g[1]) * n[2] + g[2]) * n[3] + g[3]];
          const cd got(hs.data()[i].real(), hs.data()[i].imag());
          e2 += std::norm(got - want);
          r2 += std::norm(want);
        }
        CHECK(global_rel(e2, r2) < 1e-6);
        // Backward: the unnormalised inverse of the kept bins of the half spectrum: complex
        // inverses over A1..A3, then the complex-to-real inverse along T (the kept low and high
        // bins are not a conjugate-symmetric set, so this is not the full inverse of a masked full
        // spectrum).
        const int hc = n[3] / 2 + 1;
        const Ext nh{n[0], n[1], n[2], hc};
        std::vector<cd> half(std::size_t(nl) * cells(nh));
        for (long f = 0; f < long(half.size()); ++f) {
          long rest = f;
          Ext k{};
          for (int a = 3; a >= 0; --a) k[a] = int(rest % nh[a]), rest /= nh[a];
          bool keep = true;
          for (int a = 0; a < 4 && truncated; ++a)
            keep = keep && (a < 3 ? kept(k[a], m[a], m[a], n[a]) : k[a] < m[3]);
          half[f] = keep ? spec[(((rest * n[0] + k[0]) * n[1] + k[1]) * n[2] + k[2]) * n[3] + k[3]]
                         : cd(0);
        }
        for (int a = 0; a < 3; ++a) dft_axis(half, nl, nh, a, +1);
        std::vector<cd> masked(std::size_t(nl) * cells(n));
        for (long r = 0; r < long(masked.size()) / n[3]; ++r)
          for (int t = 0; t < n[3]; ++t) {
            double y = 0;
            for (int k = 0; k < hc; ++k) {
              const double w = (k == 0 || 2 * k == n[3]) ? 1.0 : 2.0;
              y += w * (half[r * hc + k] * std::polar(1.0, 2 * kPi * k * t / n[3])).real();
            }
            masked[r * n[3] + t] = y;
          }
        auto back = plan.backward(s);
        auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
        const auto ridx = block_indices(nl, n, plan.real_layout().box(me));
        e2 = r2 = 0;
        for (std::size_t i = 0; i < ridx.size(); ++i) {
          const double want = masked[ridx[i]].real();
          e2 += (hb.data()[i] - want) * (hb.data()[i] - want);
          r2 += want * want;
        }
        CHECK(global_rel(e2, r2) < 1e-6);
        // One rank holding everything streams rows: the inverse of A1, then of A2 and A3 a few rows
        // at a time, gives the T modes backward_to_t_modes gives.
        CHECK(plan.streams_rows() == (truncated && parts[0] == 1 && kind == PlanKind::Streaming));
        if (!plan.streams_rows()) continue;
        auto tm = plan.backward_to_t_modes(s);
        auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tm);
        auto first = plan.backward_first_axis(s);
        const Ext e = plan.real_layout().box(me).extents();
        double d2 = 0, t2 = 0;
        for (int r0 = 0; r0 < n[0]; r0 += 2) {
          const int R = std::min(2, n[0] - r0);
          auto rows = plan.t_modes_of_rows(first, 0, r0, R);
          REQUIRE(grid_extents<4>(rows) == Ext{R, e[1], e[2], m[3]});
          auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows);
          for (int c = 0; c < C; ++c)
            for (int i = 0; i < R; ++i)
              for (int j = 0; j < e[1]; ++j)
                for (int k = 0; k < e[2]; ++k)
                  for (int t = 0; t < m[3]; ++t) {
                    const complexf d = hr(0, c, i, j, k, t) - ht(0, c, r0 + i, j, k, t);
                    d2 += std::norm(std::complex<float>(d.real(), d.imag()));
                    t2 += std::norm(std::complex<float>(ht(0, c, r0 + i, j, k, t).real(),
                                                        ht(0, c, r0 + i, j, k, t).imag()));
                  }
        }
        double sums[2] = {d2, t2}, all[2];
        MPI_Allreduce(sums, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        d2 = all[0];
        t2 = all[1];
        CHECK(std::sqrt(d2 / t2) < 1e-6);
      }
    }
  }
}

TEST_CASE("a windowed 4-D plan transforms a zero-padded grid's interior alone", "[mpi][fft][4d]") {
  // The box [off, off + nb) of a periodic grid np, zero outside: the window plan's forward of the
  // box equals the whole grid's plan's forward of the zero-padded grid, on every rank's spectral
  // block; its backward (and, streaming rows, its T modes of each row group) equals the box's
  // part of the whole grid's. Odd extents and offsets; every process grid the ranks allow.
  const int B = 1, C = 2;
  const Ext np{9, 8, 7, 10}, nb{4, 5, 3, 6}, off{2, 1, 3, 4}, m{2, 3, 2, 3};
  const int nl = B * C;
  const auto inner = test::random_vector(std::size_t(nl) * cells(nb), 94);
  std::vector<cd> padded(std::size_t(nl) * cells(np), 0.0);
  for (int l = 0; l < nl; ++l)
    for (int i = 0; i < nb[0]; ++i)
      for (int j = 0; j < nb[1]; ++j)
        for (int k = 0; k < nb[2]; ++k)
          for (int t = 0; t < nb[3]; ++t)
            padded[(((long(l) * np[0] + i + off[0]) * np[1] + j + off[1]) * np[2] + k + off[2]) *
                       np[3] +
                   t + off[3]] =
                inner[(((long(l) * nb[0] + i) * nb[1] + j) * nb[2] + k) * nb[3] + t];
  // Both execution plans (core/ExecutionPlan.hpp): only the streaming one streams rows.
  for (PlanKind kind : {PlanKind::Streaming, PlanKind::WholeTensor}) {
    ScopedExecutionPlan plan_kind(kind);
    INFO(plan_name(kind) << " plan");
    for (auto parts : test::grids_3d(test::mpi_size())) {
      ProcessGrid grid(MPI_COMM_WORLD, parts);
      INFO("grid " << grid.str());
      const int me = grid.rank();
      DistributedFft<4> whole(grid, np, m);
      DistributedFft<4> box(grid, nb, m, ExchangeAlgorithm::Alltoallv, FftKind::R2C,
                            DistributedFft<4>::Window{np, off});
      REQUIRE(box.period() == np);
      REQUIRE(box.spectral_layout().boxes() == whole.spectral_layout().boxes());
      auto xw = device_block<float>(padded, B, C, np, whole.real_layout().box(me));
      auto xb = device_block<float>(inner, B, C, nb, box.real_layout().box(me));
      auto sw = whole.forward(xw);
      auto sb = box.forward(xb);
      auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sw);
      auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sb);
      REQUIRE(hw.size() == hb.size());
      double e2 = 0, r2 = 0;
      for (std::size_t i = 0; i < hw.size(); ++i) {
        const std::complex<double> d(hb.data()[i].real() - hw.data()[i].real(),
                                     hb.data()[i].imag() - hw.data()[i].imag());
        e2 += std::norm(d);
        r2 += std::norm(std::complex<double>(hw.data()[i].real(), hw.data()[i].imag()));
      }
      CHECK(global_rel(e2, r2) < 1e-6);
      // Backward from the same spectrum: the box's cells of the whole grid's inverse, gathered
      // from every rank's block of it into a global array.
      auto yw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole.backward(sw));
      std::vector<double> all(std::size_t(nl) * cells(np), 0.0), sum(all.size());
      const auto widx = block_indices(nl, np, whole.real_layout().box(me));
      for (std::size_t i = 0; i < widx.size(); ++i) all[widx[i]] = yw.data()[i];
      MPI_Allreduce(all.data(), sum.data(), int(all.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      auto yb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), box.backward(sw));
      const Box4 mine = box.real_layout().box(me);
      const auto bidx = block_indices(nl, nb, mine);
      e2 = r2 = 0;
      for (std::size_t i = 0; i < bidx.size(); ++i) {
        long q = bidx[i];  // global box index -> padded index
        const int t = q % nb[3], k = (q / nb[3]) % nb[2], j = (q / (nb[3] * nb[2])) % nb[1];
        const long rest = q / (long(nb[3]) * nb[2] * nb[1]);
        const int r = rest % nb[0], l = rest / nb[0];
        const double want =
            sum[(((long(l) * np[0] + r + off[0]) * np[1] + j + off[1]) * np[2] + k + off[2]) *
                    np[3] +
                t + off[3]];
        e2 += (yb.data()[i] - want) * (yb.data()[i] - want);
        r2 += want * want;
      }
      CHECK(global_rel(e2, r2) < 1e-6);
      CHECK(box.streams_rows() == (parts[0] == 1 && kind == PlanKind::Streaming));
      if (box.streams_rows()) {  // rows of T modes = backward_to_t_modes' rows, within the box
        auto ht =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), box.backward_to_t_modes(sw));
        auto first = box.backward_first_axis(sw);
        double d2 = 0, t2 = 0;
        for (int r0 = 0; r0 < nb[0]; r0 += 3) {
          const int R = std::min(3, nb[0] - r0);
          auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                        box.t_modes_of_rows(first, 0, r0, R));
          const long per_row = long(hr.size()) / (C * R);
          for (int c = 0; c < C; ++c)
            for (int i = 0; i < R; ++i)
              for (long v = 0; v < per_row; ++v) {
                const complexf a = hr.data()[(long(c) * R + i) * per_row + v];
                const complexf w = ht.data()[(long(c) * nb[0] + r0 + i) * per_row + v];
                d2 += std::norm(std::complex<double>(a.real() - w.real(), a.imag() - w.imag()));
                t2 += std::norm(std::complex<double>(w.real(), w.imag()));
              }
        }
        CHECK(global_rel(d2, t2) < 1e-6);
      }
    }
  }
  ProcessGrid one(MPI_COMM_WORLD, std::array<int, 4>{test::mpi_size(), 1, 1, 1});
  using W = DistributedFft<4>::Window;
  CHECK_THROWS_AS(DistributedFft<4>(one, nb, m, ExchangeAlgorithm::Alltoallv, FftKind::R2C,
                                    W{np, Ext{6, 1, 3, 4}}),
                  std::invalid_argument);  // 6 + 4 > 9
  CHECK_THROWS_AS(DistributedFft<4>(one, nb, std::nullopt, ExchangeAlgorithm::Alltoallv,
                                    FftKind::R2C, W{np, off}),
                  std::invalid_argument);  // a window needs kept modes
}

TEST_CASE("distributed 4-D complex FFT, truncated, equals direct sums", "[mpi][fft][4d]") {
  const int B = 2, C = 1;
  const Ext n{4, 5, 3, 7};
  const int nl = B * C;
  const auto re = test::random_vector(std::size_t(nl) * cells(n), 92);
  const auto im = test::random_vector(re.size(), 93);
  std::vector<cd> input(re.size()), spec;
  for (std::size_t i = 0; i < re.size(); ++i) input[i] = cd(re[i], im[i]);
  spec = input;
  for (int a = 3; a >= 0; --a) dft_axis(spec, nl, n, a, -1);
  const Ext m{1, 2, 1, 3};
  for (auto parts : test::grids_3d(test::mpi_size())) {
    ProcessGrid grid(MPI_COMM_WORLD, parts);
    INFO("grid " << grid.str());
    DistributedFft<4> plan(grid, n, m, ExchangeAlgorithm::PointToPoint, FftKind::C2C);
    const Ext kn = plan.spectral_extents();
    auto x = device_block<complexf>(input, B, C, n, plan.real_layout().box(grid.rank()));
    auto s = plan.forward(x);
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
    const auto sidx = block_indices(nl, kn, plan.spectral_layout().box(grid.rank()));
    double e2 = 0, r2 = 0;
    for (std::size_t i = 0; i < sidx.size(); ++i) {
      long rest = sidx[i];
      Ext g{};
      for (int a = 3; a >= 0; --a) g[a] = bin(int(rest % kn[a]), m[a], m[a], n[a]), rest /= kn[a];
      const cd want = spec[(((rest * n[0] + g[0]) * n[1] + g[1]) * n[2] + g[2]) * n[3] + g[3]];
      e2 += std::norm(cd(hs.data()[i].real(), hs.data()[i].imag()) - want);
      r2 += std::norm(want);
    }
    CHECK(global_rel(e2, r2) < 1e-6);
    std::vector<cd> masked = spec;
    for (long f = 0; f < long(masked.size()); ++f) {
      long rest = f;
      bool keep = true;
      for (int a = 3; a >= 0; --a)
        keep = keep && kept(int(rest % n[a]), m[a], m[a], n[a]), rest /= n[a];
      if (!keep) masked[f] = 0;
    }
    for (int a = 0; a < 4; ++a) dft_axis(masked, nl, n, a, +1);
    auto back = plan.backward_c2c(s);
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
    const auto ridx = block_indices(nl, n, plan.real_layout().box(grid.rank()));
    e2 = r2 = 0;
    for (std::size_t i = 0; i < ridx.size(); ++i) {
      e2 += std::norm(cd(hb.data()[i].real(), hb.data()[i].imag()) - masked[ridx[i]]);
      r2 += std::norm(masked[ridx[i]]);
    }
    CHECK(global_rel(e2, r2) < 1e-6);
  }
}

TEST_CASE("the 4-D spectral convolution equals PyTorch's on every process grid",
          "[mpi][spectral][4d]") {
  auto io = test::read_all(test::data_path("spectral4d_small.h5"));
  const HostArray& in = io.arrays.at("input");     // (B, I, n1, n2, n3, n4)
  const HostArray& out = io.arrays.at("output");   // (B, O, n1, n2, n3, n4)
  const HostArray& w1 = io.arrays.at("weights1");  // (I, O, m1, m2, m3, m4, 2)
  const int B = in.shape[0], I = in.shape[1], O = out.shape[1];
  const Ext n{int(in.shape[2]), int(in.shape[3]), int(in.shape[4]), int(in.shape[5])};
  const Ext m{int(w1.shape[2]), int(w1.shape[3]), int(w1.shape[4]), int(w1.shape[5])};
  std::vector<HostArray> corners;
  for (int q = 1; q <= 8; ++q) corners.push_back(io.arrays.at("weights" + std::to_string(q)));
  for (auto parts : test::grids_3d(test::mpi_size())) {
    ProcessGrid grid(MPI_COMM_WORLD, parts);
    INFO("grid " << grid.str());
    DistributedSpectralConv<4> conv(grid, n, I, O, m, corners, ExchangeAlgorithm::Alltoallv);
    const Box4 b = conv.fft().real_layout().box(grid.rank());
    auto x = device_block<float>(in.data, B, I, n, b);
    auto y = conv.forward(x);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    const auto idx = block_indices(B * O, n, b);
    double e2 = 0, r2 = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) {
      const double want = out.data[idx[i]];
      e2 += (hy.data()[i] - want) * (hy.data()[i] - want);
      r2 += want * want;
    }
    CHECK(global_rel(e2, r2) < 1e-5);
  }
}
