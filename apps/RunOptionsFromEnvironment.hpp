#pragma once
// The RunOptions of a program: its flags (threads, bf16) and the environment switches, read here
// and nowhere below apps/: UFNO_PLANE_CONV=0 (oneDNN for the U-Net output convolution),
// UFNO_FFTW_WISDOM=<file> (measured FFTW plans, wisdom kept), UFNO_PROFILE=1 (per-layer times),
// UFNO_HEAP_REUSE=0 (glibc returns freed pages).
#include "core/RunOptions.hpp"

namespace ufno {

RunOptions run_options_from_environment(int threads, bool bf16_convolutions);

// Applies what is process-wide by the libraries' nature: the OpenMP and FFTW thread counts, the
// FFTW wisdom file and the profiler. (The kernel choice and the convolutions' precision travel
// with the model: DistributedNet3d's constructor.)
void apply_process_options(const RunOptions& o);

}  // namespace ufno
