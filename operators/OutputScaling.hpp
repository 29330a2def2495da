#pragma once
// The model file's de-scaling of the network's raw output to physical units:
// physical = raw * output_scale + output_offset (dP in bar; SG is not scaled).
#include "core/ModelSpec.hpp"
#include "core/Parallel.hpp"
#include "core/Tensor.hpp"

namespace ufno {

inline void descale_output(Tensor& y, const ModelSpec& s) {
  const float a = float(s.output_scale), b = float(s.output_offset);
  float* p = y.data();
  ufno::parallel_for(
      "ufno::descale", Kokkos::RangePolicy<ExecSpace>(0, y.span()),
      KOKKOS_LAMBDA(const std::size_t i) { p[i] = p[i] * a + b; });
}

}  // namespace ufno
