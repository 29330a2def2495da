// FFTW (single precision) implementation of Fft1dPlan: guru interface, one transform dimension and
// two batch dimensions (outer, inner), so strided middle axes need no transposes.
#include <fftw3.h>

#include <mutex>
#include <stdexcept>

#include "fft/Fft1dPlan.hpp"
#include "operators/backend/CudaDispatch.hpp"  // a GPU build uses it (UFNO_CUDA_BACKEND)

namespace ufno::fft {

namespace {

std::mutex& planner_mutex() {  // the FFTW planner is not thread safe
  static std::mutex m;
  return m;
}

int g_threads = 1;

class FftwPlan1d final : public Fft1dPlan {
 public:
  FftwPlan1d(Transform t, const Batch1d& b) : t_(t), b_(b) {
    if (b.n < 1 || b.outer < 0 || b.inner < 1)
      throw std::invalid_argument("fft: invalid batch shape");
  }
  ~FftwPlan1d() override {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (plan_) fftwf_destroy_plan(plan_);
  }
  Transform transform() const override { return t_; }
  const Batch1d& batch() const override { return b_; }

  void execute(void* in, void* out) override {
    if (b_.outer == 0) return;
    // New-array execution needs the alignment and in-placeness the plan was made for.
    const int ai = fftwf_alignment_of(static_cast<float*>(in));
    const int ao = fftwf_alignment_of(static_cast<float*>(out));
    const bool inplace = in == out;
    if (!plan_ || ai != align_in_ || ao != align_out_ || inplace != inplace_) make(in, out);
    switch (t_) {
      case Transform::R2C:
        fftwf_execute_dft_r2c(plan_, static_cast<float*>(in), static_cast<fftwf_complex*>(out));
        break;
      case Transform::C2R:
        fftwf_execute_dft_c2r(plan_, static_cast<fftwf_complex*>(in), static_cast<float*>(out));
        break;
      default:
        fftwf_execute_dft(plan_, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out));
    }
  }

 private:
  void make(void* in, void* out) {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (plan_) fftwf_destroy_plan(plan_);
    const int n = b_.n;
    const long inner = b_.inner;
    const long nc = n / 2 + 1;  // complex length of a real transform
    const long in_len = (t_ == Transform::C2R) ? nc : n;
    const long out_len = (t_ == Transform::R2C) ? nc : n;
    fftwf_iodim dim{n, int(inner), int(inner)};
    fftwf_iodim many[2] = {{int(b_.outer), int(in_len * inner), int(out_len * inner)},
                           {int(inner), 1, 1}};
    // ESTIMATE never touches the arrays, so planning on the caller's buffers is safe.
    const unsigned flags = FFTW_ESTIMATE;
    fftwf_plan_with_nthreads(g_threads);
    switch (t_) {
      case Transform::R2C:
        plan_ = fftwf_plan_guru_dft_r2c(1, &dim, 2, many, static_cast<float*>(in),
                                        static_cast<fftwf_complex*>(out), flags);
        break;
      case Transform::C2R:
        plan_ = fftwf_plan_guru_dft_c2r(1, &dim, 2, many, static_cast<fftwf_complex*>(in),
                                        static_cast<float*>(out), flags | FFTW_DESTROY_INPUT);
        break;
      default:
        plan_ = fftwf_plan_guru_dft(
            1, &dim, 2, many, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out),
            t_ == Transform::C2C_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD, flags);
    }
    if (!plan_)
      throw std::runtime_error("fft: FFTW could not plan a " + to_string(t_) + " of length " +
                               std::to_string(n));
    align_in_ = fftwf_alignment_of(static_cast<float*>(in));
    align_out_ = fftwf_alignment_of(static_cast<float*>(out));
    inplace_ = in == out;
  }

  Transform t_;
  Batch1d b_;
  fftwf_plan plan_ = nullptr;
  int align_in_ = -1, align_out_ = -1;
  bool inplace_ = false;
};

}  // namespace

std::string to_string(Transform t) {
  switch (t) {
    case Transform::R2C:
      return "r2c";
    case Transform::C2R:
      return "c2r";
    case Transform::C2C_FORWARD:
      return "c2c forward";
    default:
      return "c2c backward";
  }
}

std::unique_ptr<Fft1dPlan> make_fft1d_plan(Transform t, const Batch1d& b) {
#if defined(UFNO_CUDA_BACKEND)
  if constexpr (!kHostTensors) return backend::cuda::make_layer_fft1d_plan(t, b);
#endif
  return std::make_unique<FftwPlan1d>(t, b);
}

void set_fft_threads(int n) {
  static bool initialised = false;
  std::lock_guard<std::mutex> lock(planner_mutex());
  if (!initialised) {
    fftwf_init_threads();
    initialised = true;
  }
  g_threads = n < 1 ? 1 : n;
}

}  // namespace ufno::fft
