// The CUDA backend against host references: cuFFT vs FFTW, cuBLAS vs oneDNN's GEMM, cuDNN
// (transposed) convolutions vs direct sums (tests/support/Naive.hpp). The references run on host
// vectors, whatever the build's default memory space (a GPU build's tensors are device memory,
// which the host backends cannot read). Catch2 with a
// main of its own: without a CUDA device it exits 77 before any test case runs, which CTest
// reports as skipped (SKIP_RETURN_CODE, as capability_available's checks): the backend is
// compiled and linked but cannot run. No CUDA header here: the device is reached only through
// the backend's own interfaces.
#define CATCH_CONFIG_RUNNER
#include <Kokkos_Core.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/CudaDevice.hpp"
#include "core/Gemm.hpp"
#include "fft/CufftPlan.hpp"
#include "fft/Fft1dPlan.hpp"
#include "operators/backend/ConvPrimitive.hpp"
#include "operators/backend/CudnnConv.hpp"
#include "support/Naive.hpp"

using namespace ufno;
using backend::cuda::DeviceBuffer;
using cf = std::complex<float>;

namespace {

constexpr double kTolerance = 1e-5;  // relative L2 error, device vs host

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

std::vector<cf> random_complex(std::size_t n, unsigned seed) {
  auto re = random_vector(n, seed), im = random_vector(n, seed + 1000);
  std::vector<cf> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = cf(re[i], im[i]);
  return v;
}

template <class T>
double rel_l2(const std::vector<T>& got, const std::vector<T>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(std::complex<double>(got[i]) - std::complex<double>(ref[i]));
    den += std::norm(std::complex<double>(ref[i]));
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

void report(const std::string& what, double err) {
  INFO(what << ": relative L2 error " << err);
  CHECK(err <= kTolerance);
}

template <class T>
DeviceBuffer upload(const std::vector<T>& v) {
  DeviceBuffer b(v.size() * sizeof(T));
  b.upload(v.data(), v.size() * sizeof(T));
  return b;
}

template <class T>
std::vector<T> download(const DeviceBuffer& b, std::size_t n) {
  std::vector<T> v(n);
  backend::cuda::synchronize();
  b.download(v.data(), n * sizeof(T));
  return v;
}

std::string shape_name(const fft::Batch1d& b) {
  return "(" + std::to_string(b.outer) + "," + std::to_string(b.n) + "," + std::to_string(b.inner) +
         ")";
}

}  // namespace

// Each transform on each shape, cuFFT vs FFTW. The shapes have odd and even n, inner == 1, and
// inner smaller and larger than outer (the two ways the cuFFT plan batches).
TEST_CASE("cuFFT equals FFTW: every transform, odd and even n, inner 1, < outer and > outer",
          "[cuda][fft]") {
  using fft::Transform;
  for (const fft::Batch1d& b : {fft::Batch1d{4, 16, 1}, fft::Batch1d{3, 7, 1},
                                fft::Batch1d{5, 9, 3}, fft::Batch1d{2, 12, 7}}) {
    const std::size_t nr = b.outer * b.n * b.inner, nc = b.outer * (b.n / 2 + 1) * b.inner;
    {  // R2C
      auto x = random_vector(nr, 1);
      std::vector<cf> ref(nc);
      fft::FftPlans<backend::Host>::make(Transform::R2C, b)->execute(x.data(), ref.data());
      DeviceBuffer dx = upload(x), dy(nc * sizeof(cf));
      fft::cuda::make_cufft_plan(Transform::R2C, b)->execute(dx.get(), dy.get());
      report("cuFFT r2c " + shape_name(b), rel_l2(download<cf>(dy, nc), ref));
    }
    {  // C2R: both destroy their input, so each gets its own copy
      auto s = random_complex(nc, 2);
      auto host_in = s;
      std::vector<float> ref(nr);
      fft::FftPlans<backend::Host>::make(Transform::C2R, b)->execute(host_in.data(), ref.data());
      DeviceBuffer ds = upload(s), dy(nr * sizeof(float));
      fft::cuda::make_cufft_plan(Transform::C2R, b)->execute(ds.get(), dy.get());
      report("cuFFT c2r " + shape_name(b), rel_l2(download<float>(dy, nr), ref));
    }
    for (Transform t : {Transform::C2C_FORWARD, Transform::C2C_BACKWARD}) {  // in place
      auto a = random_complex(nr, 3);
      DeviceBuffer da = upload(a);
      fft::FftPlans<backend::Host>::make(t, b)->execute(a.data(), a.data());
      fft::cuda::make_cufft_plan(t, b)->execute(da.get(), da.get());
      report("cuFFT " + fft::to_string(t) + " " + shape_name(b), rel_l2(download<cf>(da, nr), a));
    }
  }
}

// Row-major GEMM with padded leading dimensions and beta != 0.
TEST_CASE("cuBLAS equals oneDNN's GEMM: padded, beta != 0, LeakyReLU epilogue, shared-A batch",
          "[cuda][gemm]") {
  const int M = 7, N = 37, K = 13, lda = K + 2, ldb = N + 3, ldc = N + 1;
  auto A = random_vector(std::size_t(M) * lda, 5), B = random_vector(std::size_t(K) * ldb, 6);
  auto C = random_vector(std::size_t(M) * ldc, 7);
  DeviceBuffer dA = upload(A), dB = upload(B), dC = upload(C);
  backend::Gemm<backend::Host>::run(M, N, K, 0.75f, A.data(), lda, B.data(), ldb, 0.5f, C.data(),
                                    ldc, Activation::None, 0.f);
  backend::Gemm<backend::Cuda>::run(M, N, K, 0.75f, dA.as<float>(), lda, dB.as<float>(), ldb, 0.5f,
                                    dC.as<float>(), ldc, Activation::None, 0.f);
  report("cuBLAS gemm", rel_l2(download<float>(dC, C.size()), C));

  // The fused LeakyReLU epilogue.
  auto C2 = random_vector(std::size_t(M) * ldc, 17);
  DeviceBuffer dC2 = upload(C2);
  backend::Gemm<backend::Host>::run(M, N, K, 1.f, A.data(), lda, B.data(), ldb, 1.f, C2.data(), ldc,
                                    Activation::LeakyReLU, 0.1f);
  backend::Gemm<backend::Cuda>::run(M, N, K, 1.f, dA.as<float>(), lda, dB.as<float>(), ldb, 1.f,
                                    dC2.as<float>(), ldc, Activation::LeakyReLU, 0.1f);
  report("cuBLAS gemm + LeakyReLU", rel_l2(download<float>(dC2, C2.size()), C2));

  // One A for a batch of B matrices (the pruned transforms' form), padded strides.
  const int batch = 5;
  const long sb = long(K) * ldb + 4, sc = long(M) * ldc + 3;
  auto Bs = random_vector(std::size_t(batch) * sb, 18);
  std::vector<float> Cs(std::size_t(batch) * sc, 0.f);
  DeviceBuffer dBs = upload(Bs), dCs = upload(Cs);
  backend::Gemm<backend::Host>::batched(batch, M, N, K, A.data(), 0, lda, Bs.data(), sb, ldb, 0.f,
                                        Cs.data(), sc, ldc);
  backend::Gemm<backend::Cuda>::batched(batch, M, N, K, dA.as<float>(), 0, lda, dBs.as<float>(), sb,
                                        ldb, 0.f, dCs.as<float>(), sc, ldc);
  report("cuBLAS strided-batched gemm, shared A", rel_l2(download<float>(dCs, Cs.size()), Cs));
}

// Above grid_for's cap of 65,536 x 256 = 16,777,216 values a kernel must loop grid-stride: the
// paper U-FNO's fc1 ReLU covers 128 x 692,224 values. Every value of a 4,200 x 4,100 GEMM's
// output (17.2 M) activated, checked element by element (tests/test_grid_stride.py checks the
// sources on every machine).
TEST_CASE("an activation over more values than one grid of threads covers all of them",
          "[cuda][gemm]") {
  const int M = 4200, N = 4100, K = 1;
  std::vector<float> A(M), B(N), C(std::size_t(M) * N, 0.f);
  for (int i = 0; i < M; ++i) A[i] = (i % 2 ? 1.f : -1.f);
  for (int j = 0; j < N; ++j) B[j] = 1.f + float(j % 3);
  DeviceBuffer dA = upload(A), dB = upload(B), dC = upload(C);
  backend::Gemm<backend::Cuda>::run(M, N, K, 1.f, dA.as<float>(), K, dB.as<float>(), N, 0.f,
                                    dC.as<float>(), N, Activation::ReLU, 0.f);
  const auto got = download<float>(dC, C.size());
  std::size_t wrong = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      wrong += got[std::size_t(i) * N + j] != (i % 2 ? 1.f + float(j % 3) : 0.f);
  CHECK(wrong == 0);
}

namespace {

// v, channels first (B, C, X, Y, T) of extents d, as stored in `layout`.
template <class T>
std::vector<float> stored_as(const std::vector<T>& v, const test::Dims5& d,
                             backend::Layout layout) {
  std::vector<float> out(v.size());
  std::size_t e = 0;
  if (layout == backend::Layout::ChannelsFirst) {
    for (const T& x : v) out[e++] = float(x);
    return out;
  }
  for (int n = 0; n < d.n; ++n)
    for (int i = 0; i < d.x; ++i)
      for (int j = 0; j < d.y; ++j)
        for (int k = 0; k < d.t; ++k)
          for (int c = 0; c < d.c; ++c) out[e++] = float(v[d.at(n, c, i, j, k)]);
  return out;
}

// The spec from its definition (tests/support/Naive.hpp), channels first: the host backend's
// convolution reads host memory, which a GPU build's tensors are not.
std::vector<double> reference_conv(const backend::ConvSpec& s, const std::vector<float>& x,
                                   const test::Dims5& d, const std::vector<float>& w,
                                   const std::vector<float>& b, test::Dims5* od) {
  const int I = s.in_channels, O = s.out_channels, K = s.kernel;
  const std::size_t k3 = std::size_t(K) * K * K;
  std::vector<double> y;
  if (s.transposed) {  // PyTorch's (in, out, k3) from the spec's (out, in, k3)
    std::vector<float> wt(w.size());
    for (int o = 0; o < O; ++o)
      for (int i = 0; i < I; ++i)
        for (std::size_t k = 0; k < k3; ++k)
          wt[(std::size_t(i) * O + o) * k3 + k] = w[(std::size_t(o) * I + i) * k3 + k];
    y = test::naive_conv_transpose3d(x, d, wt, b, O, K, s.stride, s.padding, od);
  } else {
    y = test::naive_conv3d(x, d, w, b, O, K, s.stride, s.padding, od);
  }
  const int cut = s.padding - backend::conv_padding(s, 0);  // X padding below the others'
  if (cut > 0) {  // stride 1: row i without X padding is row i + cut with it
    REQUIRE((s.stride == 1 && !s.transposed));
    test::Dims5 c = *od;
    c.x -= 2 * cut;
    std::vector<double> cropped(c.size());
    for (int n = 0; n < c.n; ++n)
      for (int ch = 0; ch < c.c; ++ch)
        for (int i = 0; i < c.x; ++i)
          for (int j = 0; j < c.y; ++j)
            for (int k = 0; k < c.t; ++k)
              cropped[c.at(n, ch, i, j, k)] = y[od->at(n, ch, i + cut, j, k)];
    y = std::move(cropped);
    *od = c;
  }
  for (double& v : y) {
    if (s.activation == Activation::ReLU) v = v > 0 ? v : 0;
    if (s.activation == Activation::LeakyReLU) v = v > 0 ? v : s.slope * v;
  }
  return y;
}

// One spec through cuDNN (make_cudnn_conv) against the direct sums, both tensors in `layout`
// (the U-Net keeps its tensors channels last).
void test_conv_case(const std::string& name, const backend::ConvSpec& s, Shape5 in,
                    backend::Layout layout = backend::Layout::ChannelsFirst) {
  const std::size_t k3 = std::size_t(s.kernel) * s.kernel * s.kernel;
  auto w = random_vector(std::size_t(s.out_channels) * s.in_channels * k3, 8);
  auto bias = s.has_bias ? random_vector(s.out_channels, 9) : std::vector<float>{};
  const test::Dims5 d{int(in[0]), int(in[1]), int(in[2]), int(in[3]), int(in[4])};
  const auto xs = random_vector(d.size(), 10);
  test::Dims5 od{};
  const std::vector<float> ref = stored_as(reference_conv(s, xs, d, w, bias, &od), od, layout);
  REQUIRE(od.x == backend::conv_output_extent(s, d.x, 0));

  DeviceBuffer dx = upload(stored_as(xs, d, layout)), dy(ref.size() * sizeof(float));
  auto conv = backend::cuda::make_cudnn_conv(s, w, bias);
  conv->forward(dx.as<float>(), in[0], in[2], in[3], in[4], dy.as<float>(), layout, layout);
  report(name + " " + to_string(in), rel_l2(download<float>(dy, ref.size()), ref));
  conv->forward(dx.as<float>(), in[0], in[2], in[3], in[4], dy.as<float>(), layout,
                layout);  // cached plan
  report(name + " " + to_string(in) + ", second call",
         rel_l2(download<float>(dy, ref.size()), ref));
}

}  // namespace

TEST_CASE("cuDNN (transposed) convolutions equal oneDNN's, channels first and last",
          "[cuda][conv]") {
  backend::ConvSpec s;
  s.in_channels = 3;
  s.out_channels = 5;
  s.kernel = 3;
  s.stride = 1;
  s.padding = 1;
  s.has_bias = true;
  s.activation = Activation::LeakyReLU;
  s.slope = 0.1f;
  test_conv_case("cuDNN conv k3 s1 + bias + LeakyReLU", s, {2, 3, 6, 5, 7});
  s.stride = 2;
  test_conv_case("cuDNN conv k3 s2 + bias + LeakyReLU", s, {1, 3, 8, 7, 6});
  constexpr auto last = backend::Layout::ChannelsLast;
  test_conv_case("cuDNN conv k3 s2 + bias + LeakyReLU, channels last", s, {1, 3, 8, 7, 6}, last);
  backend::ConvSpec slab = s;  // a slab of X rows with its own halo (the U-Net's top level)
  slab.stride = 1;
  slab.padding_x = 0;
  slab.activation = Activation::None;
  test_conv_case("cuDNN conv k3 s1, no X padding, channels last", slab, {1, 3, 6, 5, 4}, last);
  backend::ConvSpec t = s;  // the U-Net's up-sampling block
  t.transposed = true;
  t.in_channels = 4;
  t.out_channels = 3;
  t.kernel = 4;
  t.stride = 2;
  t.padding = 1;
  test_conv_case("cuDNN transposed conv k4 s2 + bias + LeakyReLU", t, {2, 4, 3, 5, 4});
  test_conv_case("cuDNN transposed conv k4 s2 + bias + LeakyReLU, channels last", t,
                 {2, 4, 3, 5, 4}, last);
  t.kernel = 3;
  t.padding = 0;
  t.activation = Activation::ReLU;
  test_conv_case("cuDNN transposed conv k3 s2 p0 + bias + ReLU", t, {1, 4, 4, 3, 5});
}

int main(int argc, char** argv) {
  const auto q = backend::cuda::query_devices();
  if (q.count == 0) {
    std::printf("SKIP: no CUDA device (%s): the CUDA backend is compiled but cannot run here\n",
                q.reason.c_str());
    return 77;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  return Catch::Session().run(argc, argv);
}
