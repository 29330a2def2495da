#include "operators/OutputScaling.hpp"

#include "core/Parallel.hpp"

namespace ufno {

void descale_output(Tensor& y, const ModelSpec& s) {
  const float a = float(s.output_scale), b = float(s.output_offset);
  float* p = y.data();
  ufno::parallel_for(
      "ufno::descale", Kokkos::RangePolicy<ExecSpace>(0, y.span()),
      KOKKOS_LAMBDA(const std::size_t i) { p[i] = p[i] * a + b; });
}

}  // namespace ufno
