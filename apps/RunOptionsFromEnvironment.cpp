#include "apps/RunOptionsFromEnvironment.hpp"

#include <cstdlib>
#include <string>

#include "core/LayerTimer.hpp"
#include "fft/Fft1dPlan.hpp"
#include "operators/backend/ConvPrimitive.hpp"
#include "operators/backend/Threads.hpp"

namespace ufno {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
}  // namespace

RunOptions run_options_from_environment(int threads, bool bf16_convolutions) {
  RunOptions o;
  o.threads = threads;
  o.bf16_convolutions = bf16_convolutions;
  o.plane_conv = env("UFNO_PLANE_CONV") != "0";
  o.fftw_wisdom = env("UFNO_FFTW_WISDOM");
  o.profile = env("UFNO_PROFILE") == "1";
  o.heap_reuse = env("UFNO_HEAP_REUSE") != "0";
  return o;
}

void apply_process_options(const RunOptions& o) {
  backend::set_threads(o.threads);
  if (!o.fftw_wisdom.empty()) fft::set_fft_wisdom_file(o.fftw_wisdom);
  LayerTimer::instance().set_enabled(o.profile);
}

}  // namespace ufno
