#pragma once
// Error checks shared by the CUDA backend's .cu files (never included from a .cpp: it pulls in the
// CUDA runtime header). Every failure becomes a std::runtime_error naming the call, so a missing
// device or driver surfaces as a message rather than as a silent wrong result.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "core/LaunchLog.hpp"

namespace ufno::backend::cuda {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA: ") + what + " failed: " + cudaGetErrorName(e) +
                             " (" + cudaGetErrorString(e) + ")");
}

constexpr int kThreads = 256;
inline unsigned grid_for(long long n);

// After a kernel launch over `values` elements (grid_for(values) blocks of kThreads): launch
// errors (bad configuration, no device) are reported at once; faults inside the kernel surface at
// the next synchronising call. The launch goes into the active LaunchLog (core/LaunchLog.hpp).
inline void check_launch(const char* kernel, long long values) {
  check_cuda(cudaGetLastError(), kernel);
  const long long threads = (long long)grid_for(values) * kThreads;
  LaunchLog::record(kernel, threads < values ? threads : values, values);
}

// Grid for a grid-stride loop over n elements: enough blocks to fill any current GPU, capped so
// the block count stays far below the grid limit whatever n is.
inline unsigned grid_for(long long n) {
  const long long blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace ufno::backend::cuda
