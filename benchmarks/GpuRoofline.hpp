#pragma once
// A roofline prediction of a pass from its launch costs (benchmarks/LaunchCost.hpp): each launch
// takes the longer of its FLOPs at the device's peak and its bytes at the device's memory
// bandwidth, and the launches run one after another. Launch latency, host synchronisation,
// caches and occupancy are left out: the prediction is a lower bound on the time of a pass.
//
// The devices' figures are the vendor's datasheet numbers (FP32 without tensor cores, the
// precision of a run without --tf32):
//   H100 SXM: 67 TFLOP/s FP32, 3.35 TB/s HBM3 (NVIDIA H100 Tensor Core GPU datasheet);
//   H200 SXM: 67 TFLOP/s FP32, 4.8 TB/s HBM3e (NVIDIA H200 Tensor Core GPU datasheet).
// Both list 989 TFLOP/s TF32 tensor-core throughput with sparsity, about 495 dense: pass that as
// the peak to predict a --tf32 run whose products all run on tensor cores.
#include <string>
#include <vector>

#include "benchmarks/LaunchCost.hpp"

namespace ufno::bench {

struct GpuPeak {
  std::string name;
  double flops_per_s = 0;  // FP32 peak
  double bytes_per_s = 0;  // memory bandwidth
};

inline const std::vector<GpuPeak>& known_gpus() {
  static const std::vector<GpuPeak> gpus = {
      {"h100", 67e12, 3.35e12},
      {"h200", 67e12, 4.8e12},
  };
  return gpus;
}

// The named device's figures; false when the name is not known.
inline bool find_gpu(const std::string& name, GpuPeak& out) {
  for (const GpuPeak& g : known_gpus())
    if (g.name == name) {
      out = g;
      return true;
    }
  return false;
}

// Seconds one launch takes at best on `gpu`.
inline double roofline_seconds(const LaunchCost& c, const GpuPeak& gpu) {
  const double compute = c.flops / gpu.flops_per_s, memory = c.bytes / gpu.bytes_per_s;
  return compute > memory ? compute : memory;
}

// Whether the launch is bound by memory on `gpu` (its intensity below the ridge point).
inline bool memory_bound(const LaunchCost& c, const GpuPeak& gpu) {
  return c.intensity() < gpu.flops_per_s / gpu.bytes_per_s;
}

inline double roofline_seconds(const std::vector<LaunchCost>& costs, const GpuPeak& gpu) {
  double s = 0;
  for (const LaunchCost& c : costs) s += roofline_seconds(c, gpu);
  return s;
}

}  // namespace ufno::bench
