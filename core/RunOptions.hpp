#pragma once
// How a run executes (never what it computes, beyond bf16 rounding): built once by each program
// from its flags and the environment (runtime/RunOptionsFromEnvironment.hpp), then passed to the
// model at construction and applied to the process's libraries. Nothing below runtime/ reads the
// environment.
#include <string>

#include "core/ExecutionPlan.hpp"

namespace ufno {

struct RunOptions {
  int threads = 1;                      // per rank: OpenMP (oneDNN, host kernels) and FFTW
  bool bf16 = false;                    // U-Net convolutions in bfloat16 with float32 sums
                                        // (CPUs with AVX512_BF16 or AMX: core/Bf16.hpp)
  bool plane_conv = true;               // the AVX-512 PlaneConv3d for the U-Net output convolution
                                        // where it applies (else oneDNN; same results)
  bool winograd = true;                 // PlaneConv3d in Winograd F(4, 3) tiles along X (half the
                                        // multiply-adds; within float32 rounding of the direct)
  std::string fftw_wisdom;              // measure FFTW plans and keep their wisdom in this file
  bool profile = false;                 // per-layer times and peak RSS on stderr
  bool heap_reuse = true;               // glibc without jemalloc: keep freed heap pages for reuse
  bool tf32 = false;                    // GPU products and convolutions on TF32 tensor cores
  PlanKind plan = default_plan_kind();  // core/ExecutionPlan.hpp; the backend's unless asked
};

}  // namespace ufno
