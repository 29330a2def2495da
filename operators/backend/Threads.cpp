#include "operators/backend/Threads.hpp"

#include <thread>

#include "fft/Fft1dPlan.hpp"
#include "operators/backend/ConvPrimitive.hpp"
#include "operators/backend/Gemm.hpp"

namespace ufno::backend {

void set_threads(int n) {
  if (n < 1) n = 1;
  fft::set_fft_threads(n);
  set_gemm_threads(n);
  set_conv_threads(n);
}

int default_threads(int ranks_on_node) {
  const int cores = int(std::thread::hardware_concurrency());
  const int n = (cores > 0 ? cores : 1) / (ranks_on_node > 0 ? ranks_on_node : 1);
  return n < 1 ? 1 : n;
}

}  // namespace ufno::backend
