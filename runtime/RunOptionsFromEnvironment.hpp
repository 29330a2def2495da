#pragma once
// The RunOptions of a program: its flags (threads, bf16) and the environment switches, read here
// and nowhere below runtime/: UFNO_PLANE_CONV=0 (oneDNN for the U-Net output convolution),
// UFNO_WINOGRAD=0 or x (that convolution in its direct form, or in Winograd tiles along X only
// instead of over X and Y),
// UFNO_FFTW_WISDOM=<file> (measured FFTW plans, wisdom kept), UFNO_PROFILE=1 (per-layer times),
// UFNO_HEAP_REUSE=0 (glibc returns freed pages), UFNO_TF32=1 (TF32 tensor cores on GPUs),
// UFNO_BF16=1 (bfloat16 layers on CPUs that have it, as --bf16),
// UFNO_PLAN=streaming|whole-tensor (the execution plan; default: the backend's).
#include "core/RunOptions.hpp"

namespace ufno {

// Throws InputError on a switch with a value it does not know (UFNO_PLAN), and on bf16 (the
// --bf16 flag given as `bf16`, or UFNO_BF16=1) where the CPU or the build has no bfloat16 (one
// line naming the flag or the variable).
RunOptions run_options_from_environment(int threads, bool bf16);
// RunOptions::heap_reuse alone, read before MPI and Kokkos start (never throws).
bool heap_reuse_from_environment();

// Applies what is process-wide by the libraries' nature: the OpenMP and FFTW thread counts, the
// FFTW wisdom file, the profiler, the execution plan and TF32. (The kernel choice and the
// convolutions' precision travel with the model: DistributedNet3d's constructor.)
void apply_process_options(const RunOptions& o);

}  // namespace ufno
