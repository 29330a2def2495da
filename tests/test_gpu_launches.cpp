// The shape of the GPU plan's launches, checked on the host.
// 1. The MDRange kernels iterate the rightmost (contiguous) index fastest on every backend:
//    Kokkos' CUDA default is Iterate::Left, which on the row-major tensors puts threadIdx.x on the
//    batch and channel axes. The policy type carries the order, so the check is on the type (it
//    holds for the CUDA execution space as for this build's), plus a scan of the sources for any
//    MDRangePolicy built outside core/Tensor.hpp, and the sub-pixel join (one value per
//    iteration) against a plain loop.
// 2. The launch log counts vendor library calls as well as the project's kernels: each GEMM,
//    FFT execution and convolution call site logs itself (core/LaunchLog.hpp); here the host
//    backend's (oneDNN, FFTW), whose sites are written as the CUDA backend's are.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>

#include "core/Gemm.hpp"
#include "core/LaunchLog.hpp"
#include "core/Parallel.hpp"
#include "core/Tensor.hpp"
#include "fft/Fft1dPlan.hpp"
#include "operators/SubpixelJoin.hpp"

namespace {

using ufno::RowMajorRange;

template <class Policy>
constexpr bool row_major_policy() {
  return Policy::outer_direction == Kokkos::Iterate::Right &&
         Policy::inner_direction == Kokkos::Iterate::Right;
}

// The iteration pattern alone, whatever the execution space (the CUDA build's included).
static_assert(RowMajorRange<4>::iteration_pattern::outer_direction == Kokkos::Iterate::Right);
static_assert(RowMajorRange<4>::iteration_pattern::inner_direction == Kokkos::Iterate::Right);
static_assert(RowMajorRange<5>::iteration_pattern::outer_direction == Kokkos::Iterate::Right);
static_assert(RowMajorRange<5>::iteration_pattern::inner_direction == Kokkos::Iterate::Right);
static_assert(row_major_policy<RowMajorRange<4>>() && row_major_policy<RowMajorRange<5>>());
static_assert(
    std::is_same_v<decltype(ufno::range5(std::declval<const ufno::Tensor&>())), RowMajorRange<5>>);
static_assert(
    std::is_same_v<decltype(ufno::range5(std::declval<const ufno::CTensor&>())), RowMajorRange<5>>);
// The default order (what a bare MDRangePolicy<ExecSpace, Rank<5>> gets) is not what the tensors
// need on CUDA: the type differs from the one ufno::parallel_for takes.
static_assert(
    !std::is_same_v<Kokkos::MDRangePolicy<ufno::ExecSpace, Kokkos::Rank<5>>, RowMajorRange<5>>);

std::filesystem::path source_root() {
  return std::filesystem::path(UFNO_TEST_DATA_DIR).parent_path().parent_path();
}

}  // namespace

TEST_CASE("every MDRangePolicy of the sources is core/Tensor.hpp's RowMajorRange",
          "[iteration_order]") {
  const auto root = source_root();
  REQUIRE(std::filesystem::exists(root / "core" / "Tensor.hpp"));
  int files = 0;
  for (const char* dir : {"core", "fft", "decomposition", "operators", "io", "runtime", "screening",
                          "apps", "benchmarks", "tests"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / dir)) {
      const auto ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".hpp" && ext != ".cpp" && ext != ".cu" && ext != ".cuh"))
        continue;
      const auto rel = std::filesystem::relative(e.path(), root).string();
      if (rel == "core/Tensor.hpp" || rel == "tests/test_gpu_launches.cpp") continue;
      ++files;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        INFO(rel << ":" << n << ": " << line);
        CHECK(line.find("MDRangePolicy") == std::string::npos);
      }
    }
  }
  CHECK(files > 50);
}

TEST_CASE("a rank-5 row-major range visits every index once", "[iteration_order]") {
  ufno::Tensor t("t", 2, 3, 4, 5, 6);
  ufno::parallel_for(
      "test::visit", ufno::range5(t),
      KOKKOS_LAMBDA(int b, int c, int x, int y, int z) { t(b, c, x, y, z) += 1.f; });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t);
  for (std::size_t i = 0; i < h.size(); ++i) REQUIRE(h.data()[i] == 1.f);
}

TEST_CASE("the sub-pixel join, one value per iteration, matches a plain loop",
          "[iteration_order]") {
  const int B = 2, Cs = 3, C = 2, X = 6, Y = 4, T = 6, p = 1;
  const int n0 = (X + 2 * p) / 2, n1 = (Y + 2 * p) / 2, n2 = (T + 2 * p) / 2;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const auto layout :
       {ufno::backend::Layout::ChannelsFirst, ufno::backend::Layout::ChannelsLast}) {
    const bool last = layout == ufno::backend::Layout::ChannelsLast;
    ufno::Tensor skip =
        last ? ufno::Tensor("skip", B, X, Y, T, Cs) : ufno::Tensor("skip", B, Cs, X, Y, T);
    ufno::Tensor parts("parts", B, n0, n1, n2, 8 * C);
    auto hs = Kokkos::create_mirror_view(skip);
    auto hp = Kokkos::create_mirror_view(parts);
    for (std::size_t i = 0; i < hs.size(); ++i) hs.data()[i] = u(rng);
    for (std::size_t i = 0; i < hp.size(); ++i) hp.data()[i] = u(rng);
    Kokkos::deep_copy(skip, hs);
    Kokkos::deep_copy(parts, hp);
    auto out = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), ufno::join_skip_and_upsampled(skip, layout, parts, p));
    REQUIRE(out.extent(4) == std::size_t(Cs + C));
    int wrong = 0;
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < X; ++i)
        for (int j = 0; j < Y; ++j)
          for (int k = 0; k < T; ++k) {
            for (int c = 0; c < Cs; ++c)
              wrong += out(b, i, j, k, c) != (last ? hs(b, i, j, k, c) : hs(b, c, i, j, k));
            const int a = i + p, v = j + p, w = k + p;
            const int r = ((a & 1) << 2) | ((v & 1) << 1) | (w & 1);
            for (int c = 0; c < C; ++c)
              wrong += out(b, i, j, k, Cs + c) != hp(b, a >> 1, v >> 1, w >> 1, r * C + c);
          }
    CHECK(wrong == 0);
  }
}

namespace {

std::size_t count(const std::vector<ufno::Launch>& v, const std::string& label) {
  std::size_t n = 0;
  for (const auto& l : v) n += l.label == label;
  return n;
}

}  // namespace

TEST_CASE("the launch log counts each vendor call and each kernel", "[launch_log]") {
  const int M = 8, N = 16, K = 4;
  std::vector<float> A(M * K, 1.f), B(K * N, 2.f), C(M * N, 0.f);
  ufno::Tensor t("t", 1, 2, 3, 4, 5);
  ufno::LaunchLog log;
  ufno::backend::gemm(M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, C.data(), N);
  ufno::backend::gemm_batched(3, M, N, K, A.data(), 0, K, B.data(), 0, N, 0.f, C.data(), 0, N);
  ufno::parallel_for(
      "test::kernel", ufno::range5(t),
      KOKKOS_LAMBDA(int b, int c, int x, int y, int z) { t(b, c, x, y, z) = 1.f; });
  auto plan = ufno::fft::make_fft1d_plan(ufno::fft::Transform::R2C, {4, 16, 1});
  std::vector<float> in(4 * 16, 1.f), out(4 * 18, 0.f);
  plan->execute(in.data(), out.data());
  const auto kernels = log.of_kind(ufno::LaunchKind::Kernel);
  const auto calls = log.of_kind(ufno::LaunchKind::Library);
  CHECK(C[0] == 8.f);  // the products ran (K x 1 x 2)
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].label == "test::kernel");
  CHECK(kernels[0].values == 120);
  // The host GEMM is oneDNN's matmul: one call each, or one per batch entry where the backend
  // splits a batch; the FFT one execution at least.
  CHECK(count(calls, "onednn::matmul") >= 2);
  CHECK(count(calls, "fftw::execute") >= 1);
  CHECK(calls.size() + kernels.size() == log.launches().size());
  for (const auto& c : calls) {
    CHECK(c.iterations == 1);
    CHECK(c.values == 0);
  }
}

TEST_CASE("no launch is recorded without an active log", "[launch_log]") {
  std::vector<float> A(4, 1.f), B(4, 1.f), C(4, 0.f);
  ufno::backend::gemm(2, 2, 2, 1.f, A.data(), 2, B.data(), 2, 0.f, C.data(), 2);
  ufno::LaunchLog log;
  CHECK(log.launches().empty());
}
