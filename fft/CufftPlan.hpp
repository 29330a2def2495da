#pragma once
// cuFFT implementation of Fft1dPlan. Same semantics as the FFTW backend (unnormalised, batched
// along the middle axis of (outer, n, inner), C2R destroys its input), but in/out are CUDA device
// pointers. FftPlans<backend::Cuda> (fft/Fft1dPlan.hpp), which make_fft1d_plan uses when the
// tensors live on the GPU, hands it out behind a fence; this raw plan is for the backend's tests.
// docs/gpu.md says what has and has not run.
#include <memory>

#include "fft/Fft1dPlan.hpp"

namespace ufno::fft::cuda {

// Plans at once (needs a device); throws std::runtime_error if cuFFT cannot.
std::unique_ptr<Fft1dPlan> make_cufft_plan(Transform t, const Batch1d& b);

}  // namespace ufno::fft::cuda
