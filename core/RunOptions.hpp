#pragma once
// How a run executes (never what it computes, beyond bf16 rounding): built once by each program
// from its flags and the environment (runtime/RunOptionsFromEnvironment.hpp), then passed to the
// model at construction and applied to the process's libraries. Nothing below runtime/ reads the
// environment.
#include <string>

#include "core/ExecutionPlan.hpp"

namespace ufno {

// Which Winograd tiles the U-Net's output convolution (PlaneConv3d) runs in: none (its direct
// form), F(4, 3) along X (half the direct form's multiply-adds), or F(4x4, 3x3) over X and Y along
// whole T lines (half again; X tiles elsewhere). Each within float32 rounding of the direct form.
enum class WinogradTiles { off, x, xy };

struct RunOptions {
  int threads = 1;         // per rank: OpenMP (oneDNN, host kernels) and FFTW
  bool bf16 = false;       // U-Net convolutions in bfloat16 with float32 sums
                           // (CPUs with AVX512_BF16 or AMX: core/Bf16.hpp)
  bool plane_conv = true;  // the AVX-512 PlaneConv3d for the U-Net output convolution
                           // where it applies (else oneDNN; same results)
  WinogradTiles winograd = WinogradTiles::xy;  // PlaneConv3d's tiles (above)
  std::string fftw_wisdom;              // measure FFTW plans and keep their wisdom in this file
  bool profile = false;                 // per-layer times and peak RSS on stderr
  bool heap_reuse = true;               // glibc without jemalloc: keep freed heap pages for reuse
  bool tf32 = false;                    // GPU products and convolutions on TF32 tensor cores
  PlanKind plan = default_plan_kind();  // core/ExecutionPlan.hpp; the backend's unless asked
};

}  // namespace ufno
