// cuFFT implementation of Fft1dPlan.
//
// The FFTW backend describes (outer, n, inner) with two batch dimensions; cuFFT's advanced layout
// has one (element b of line k at b * dist + k * stride). With inner == 1 one plan covers it all
// (stride 1, dist = line length, batch = outer). With inner > 1:
// - complex-to-complex transforms are batched over one of the two dimensions and executed once
//   per index of the other at an offset pointer (over outer: stride inner, dist = n * inner, one
//   call per inner index; over inner: stride inner, dist 1, one call per outer index; the larger
//   dimension batched, so the calls stay few). Exact, no transpose, no buffer.
// - real transforms (R2C, C2R) are staged: the lines are transposed into (outer, inner, length),
//   transformed as outer * inner contiguous lines by one plan, and transposed back. cuFFT refuses
//   (CUFFT_INVALID_VALUE) a real array at an offset that is not a whole complex element, which the
//   per-call offsets above give whenever an offset is odd (shape (5, 9, 3) failed so); a
//   transpose costs two passes but no call ever starts at an unaligned element. In the Fourier
//   layers real transforms run along T, the last axis (inner == 1), so this path serves only
//   full-transform layouts that put T elsewhere.
#include <cufft.h>

#include <stdexcept>
#include <string>

#include "core/CudaCheck.cuh"
#include "core/CudaDevice.hpp"
#include "fft/CufftPlan.hpp"

namespace ufno::fft::cuda {

namespace {

using backend::cuda::check_launch;
using backend::cuda::grid_for;
using backend::cuda::kThreads;

void check_cufft(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS)
    throw std::runtime_error(std::string("cuFFT: ") + what + " failed with cufftResult " +
                             std::to_string(int(r)));
}

// FFTW's c2r ignores the imaginary parts of bin 0 and (even n) bin n/2; cuFFT leaves the result
// for such non-Hermitian input unspecified. Zeroing them gives the same answer as ignoring them,
// and the input is documented as destroyed anyway.
__global__ void zero_hermitian_imag(cufftComplex* a, long long outer, long long nc, long long inner,
                                    bool nyquist) {
  const long long lines = outer * inner;
  for (long long l = blockIdx.x * (long long)blockDim.x + threadIdx.x; l < lines;
       l += (long long)gridDim.x * blockDim.x) {
    const long long o = l / inner, i = l % inner;
    a[o * nc * inner + i].y = 0.f;
    if (nyquist) a[(o * nc + nc - 1) * inner + i].y = 0.f;
  }
}

// (outer, len, inner) -> (outer, inner, len) of element type E, or back when `back`.
template <class E>
__global__ void transpose_lines(const E* src, E* dst, long long outer, long long len,
                                long long inner, bool back) {
  const long long total = outer * len * inner;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    // e indexes the destination: (o, i, k) forward, (o, k, i) back.
    const long long o = e / (len * inner), rest = e % (len * inner);
    const long long k = back ? rest / inner : rest % len, i = back ? rest % inner : rest / len;
    dst[e] = back ? src[(o * inner + i) * len + k] : src[(o * len + k) * inner + i];
  }
}

class CufftPlan1d final : public Fft1dPlan {
 public:
  CufftPlan1d(Transform t, const Batch1d& b) : t_(t), b_(b) {
    if (b.n < 1 || b.outer < 0 || b.inner < 1)
      throw std::invalid_argument("fft: invalid batch shape");
    if (!b.lead.empty())  // FftPlans<backend::Cuda>::multi_axis is false
      throw std::invalid_argument("fft: the cuFFT backend plans one axis at a time");
    if (b.outer == 0) return;  // nothing to transform; execute() is a no-op
    const long long n = b.n, nc = n / 2 + 1;
    const bool real = t == Transform::R2C || t == Transform::C2R;
    staged_ = real && b.inner > 1;
    // A staged transform runs on outer * inner contiguous lines (inner 1 from the plan's view).
    const long long inner = staged_ ? 1 : b.inner, outer = staged_ ? b.outer * b.inner : b.outer;
    const long long in_len = t == Transform::C2R ? nc : n;  // line lengths in elements
    const long long out_len = t == Transform::R2C ? nc : n;
    if (staged_) {
      const std::size_t in_bytes = (t == Transform::C2R ? 8 : 4) * std::size_t(outer * in_len);
      const std::size_t out_bytes = (t == Transform::R2C ? 8 : 4) * std::size_t(outer * out_len);
      stage_in_ = backend::cuda::DeviceBuffer(in_bytes);
      stage_out_ = backend::cuda::DeviceBuffer(out_bytes);
    }
    long long idist, odist, batch;
    if (inner == 1 || outer >= inner) {
      idist = in_len * inner;
      odist = out_len * inner;
      batch = outer;
      calls_ = inner;
      in_step_ = out_step_ = 1;
    } else {
      idist = odist = 1;
      batch = inner;
      calls_ = outer;
      in_step_ = in_len * inner;
      out_step_ = out_len * inner;
    }
    // Non-null embeds select the advanced layout; for rank 1 only the strides and dists matter.
    long long dims[1] = {n}, inembed[1] = {in_len}, onembed[1] = {out_len};
    const cufftType type = t == Transform::R2C   ? CUFFT_R2C
                           : t == Transform::C2R ? CUFFT_C2R
                                                 : CUFFT_C2C;
    check_cufft(cufftCreate(&plan_), "cufftCreate");
    std::size_t work = 0;
    // The 64-bit planner: idist * batch exceeds 2^31 elements on large grids.
    const cufftResult r = cufftMakePlanMany64(plan_, 1, dims, inembed, inner, idist, onembed, inner,
                                              odist, type, batch, &work);
    if (r != CUFFT_SUCCESS) cufftDestroy(plan_);  // no destructor runs after a throwing constructor
    check_cufft(r, "cufftMakePlanMany64");
    created_ = true;
  }
  ~CufftPlan1d() override {
    if (created_) cufftDestroy(plan_);
  }
  Transform transform() const override { return t_; }
  const Batch1d& batch() const override { return b_; }

  void execute(void* in, void* out) override {
    if (b_.outer == 0) return;
    // On the Kokkos stream: ordered with the kernels that write the input and read the output.
    const auto stream = static_cast<cudaStream_t>(backend::cuda::kokkos_stream());
    check_cufft(cufftSetStream(plan_, stream), "cufftSetStream");
    const bool real = t_ == Transform::R2C || t_ == Transform::C2R;
    if (real && in == out)
      throw std::invalid_argument("fft: the cuFFT backend runs real transforms out of place only");
    if (staged_) {
      execute_staged(in, out, stream);
      return;
    }
    switch (t_) {
      case Transform::R2C: {
        auto* src = static_cast<cufftReal*>(in);
        auto* dst = static_cast<cufftComplex*>(out);
        for (long long c = 0; c < calls_; ++c) {
          check_cufft(cufftExecR2C(plan_, src + c * in_step_, dst + c * out_step_), "cufftExecR2C");
          LaunchLog::record_library("cufftExecR2C");
        }
        break;
      }
      case Transform::C2R: {
        auto* src = static_cast<cufftComplex*>(in);
        auto* dst = static_cast<cufftReal*>(out);
        const long long nc = b_.n / 2 + 1, lines = b_.outer * b_.inner;
        zero_hermitian_imag<<<grid_for(lines), kThreads, 0, stream>>>(src, b_.outer, nc, b_.inner,
                                                                      b_.n % 2 == 0);
        check_launch("zero_hermitian_imag", lines);
        for (long long c = 0; c < calls_; ++c) {
          check_cufft(cufftExecC2R(plan_, src + c * in_step_, dst + c * out_step_), "cufftExecC2R");
          LaunchLog::record_library("cufftExecC2R");
        }
        break;
      }
      default: {
        auto* src = static_cast<cufftComplex*>(in);
        auto* dst = static_cast<cufftComplex*>(out);
        const int dir = t_ == Transform::C2C_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE;
        for (long long c = 0; c < calls_; ++c) {
          check_cufft(cufftExecC2C(plan_, src + c * in_step_, dst + c * out_step_, dir),
                      "cufftExecC2C");
          LaunchLog::record_library("cufftExecC2C");
        }
      }
    }
  }

 private:
  // Real transforms with inner > 1: transpose in, one plan over contiguous lines, transpose out.
  void execute_staged(void* in, void* out, cudaStream_t stream) {
    const long long outer = b_.outer, inner = b_.inner, n = b_.n, nc = n / 2 + 1;
    const long long lines = outer * inner;
    if (t_ == Transform::R2C) {
      transpose_lines<float><<<grid_for(lines * n), kThreads, 0, stream>>>(
          static_cast<const float*>(in), stage_in_.as<float>(), outer, n, inner, false);
      check_launch("transpose_lines", lines * n);
      check_cufft(cufftExecR2C(plan_, stage_in_.as<cufftReal>(), stage_out_.as<cufftComplex>()),
                  "cufftExecR2C");
      LaunchLog::record_library("cufftExecR2C");
      transpose_lines<cufftComplex><<<grid_for(lines * nc), kThreads, 0, stream>>>(
          stage_out_.as<cufftComplex>(), static_cast<cufftComplex*>(out), outer, nc, inner, true);
      check_launch("transpose_lines", lines * nc);
      return;
    }
    transpose_lines<cufftComplex><<<grid_for(lines * nc), kThreads, 0, stream>>>(
        static_cast<const cufftComplex*>(in), stage_in_.as<cufftComplex>(), outer, nc, inner,
        false);
    check_launch("transpose_lines", lines * nc);
    zero_hermitian_imag<<<grid_for(lines), kThreads, 0, stream>>>(stage_in_.as<cufftComplex>(),
                                                                  lines, nc, 1, n % 2 == 0);
    check_launch("zero_hermitian_imag", lines);
    check_cufft(cufftExecC2R(plan_, stage_in_.as<cufftComplex>(), stage_out_.as<cufftReal>()),
                "cufftExecC2R");
    LaunchLog::record_library("cufftExecC2R");
    transpose_lines<float><<<grid_for(lines * n), kThreads, 0, stream>>>(
        stage_out_.as<float>(), static_cast<float*>(out), outer, n, inner, true);
    check_launch("transpose_lines", lines * n);
  }

  Transform t_;
  Batch1d b_;
  cufftHandle plan_ = 0;
  bool created_ = false;
  bool staged_ = false;
  backend::cuda::DeviceBuffer stage_in_, stage_out_;
  long long calls_ = 0, in_step_ = 0, out_step_ = 0;  // offsets in elements of in / out
};

}  // namespace

std::unique_ptr<Fft1dPlan> make_cufft_plan(Transform t, const Batch1d& b) {
  return std::make_unique<CufftPlan1d>(t, b);
}

}  // namespace ufno::fft::cuda

namespace ufno::fft {

std::unique_ptr<Fft1dPlan> FftPlans<backend::Cuda>::make(Transform t, const Batch1d& b) {
  return cuda::make_cufft_plan(t, b);  // on the Kokkos stream: no fence needed
}

}  // namespace ufno::fft
