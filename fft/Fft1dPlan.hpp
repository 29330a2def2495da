#pragma once
// Backend-neutral plan for a batched 1-D FFT along the middle axis of a contiguous array viewed as
// (outer, n, inner). Any axis of a row-major tensor has this form, which is all the per-axis
// Fourier layer and the distributed FFT need. Built once, executed many times; no vendor types
// appear here so that CUDA and FFTW stay out of public headers.
#include <memory>
#include <string>
#include <vector>

#include "core/Backend.hpp"
#include "core/Tensor.hpp"

namespace ufno::fft {

enum class Transform {
  R2C,          // real (outer, n, inner) -> complex (outer, n/2+1, inner), unnormalised
  C2R,          // complex (outer, n/2+1, inner) -> real (outer, n, inner), unnormalised; input
                // is destroyed; imaginary parts of the k=0 (and Nyquist) bins are ignored
  C2C_FORWARD,  // exp(-i...), unnormalised; in place allowed
  C2C_BACKWARD  // exp(+i...), unnormalised; in place allowed
};

struct Batch1d {
  long outer = 1;
  int n = 1;
  long inner = 1;
  // More axes transformed together with n, just before it (outermost first): a multi-dimensional
  // FFT over (outer, lead..., n, inner), the R2C / C2R half axis still n. Only for backends whose
  // FftPlans<Tag>::multi_axis is true.
  std::vector<int> lead = {};
  bool operator==(const Batch1d& o) const {
    return outer == o.outer && n == o.n && inner == o.inner && lead == o.lead;
  }
};

std::string to_string(Transform t);

class Fft1dPlan {
 public:
  virtual ~Fft1dPlan() = default;
  virtual Transform transform() const = 0;
  virtual const Batch1d& batch() const = 0;
  // in/out are device pointers of the element type the transform implies (float or complexf).
  virtual void execute(void* in, void* out) = 0;
};

// The plans of a backend (core/Backend.hpp), on pointers of its memory space.
template <class Tag>
struct FftPlans;

template <>
struct FftPlans<backend::Host> {  // FFTW (fft/FftwBackend.cpp)
  static constexpr bool multi_axis = true;
  static std::unique_ptr<Fft1dPlan> make(Transform t, const Batch1d& b);
};

template <>
struct FftPlans<backend::Cuda> {  // cuFFT (fft/CufftPlan.cu, in ufno_cuda)
  // Each execute runs on the Kokkos execution space's stream (core/CudaDevice.hpp). One axis
  // per plan (not yet the advanced layouts of several).
  static constexpr bool multi_axis = false;
  static std::unique_ptr<Fft1dPlan> make(Transform t, const Batch1d& b);
};

// The layers' plans: the backend of the tensors' memory space.
constexpr bool fft_multi_axis = FftPlans<backend::Default>::multi_axis;
inline std::unique_ptr<Fft1dPlan> make_fft1d_plan(Transform t, const Batch1d& b) {
  return FftPlans<backend::Default>::make(t, b);
}

// Threads used by the host FFT backend (process-wide setting, applied to new plans).
void set_fft_threads(int n);

// FFTW wisdom for the host backend (process-wide, applies to new plans). With a file, plans are
// measured (FFTW_MEASURE, on scratch arrays) instead of estimated; the file's wisdom is loaded
// now, so plans it already holds cost nothing, and each new plan's wisdom is written back (to a
// temporary name, then renamed). An empty path returns to estimated plans, the default. Throws
// std::invalid_argument naming the file when it exists but is not FFTW single-precision wisdom.
void set_fft_wisdom_file(const std::string& path);

}  // namespace ufno::fft
