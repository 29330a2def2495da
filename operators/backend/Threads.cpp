#include "operators/backend/Threads.hpp"

#include "fft/Fft1dPlan.hpp"
#include "operators/backend/ConvPrimitive.hpp"

namespace ufno::backend {

void set_threads(int n) {
  if (n < 1) n = 1;
  fft::set_fft_threads(n);
  set_conv_threads(n);
}

}  // namespace ufno::backend
