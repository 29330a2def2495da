#include "runtime/RunOptionsFromEnvironment.hpp"

#include <cstdlib>
#include <string>

#include "core/Bf16.hpp"
#include "core/InputError.hpp"
#include "core/LayerTimer.hpp"
#include "core/Tf32.hpp"
#include "fft/Fft1dPlan.hpp"
#include "operators/backend/ConvPrimitive.hpp"
#include "operators/backend/Threads.hpp"

namespace ufno {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// An on/off switch: unset or empty gives `unset`, "1" on, "0" off; anything else is refused (a
// typo such as UFNO_TF32=yes would otherwise silently mean off).
bool env_switch(const char* name, bool unset) {
  const std::string v = env(name);
  if (v.empty()) return unset;
  if (v != "0" && v != "1") throw InputError(name, v, "is neither 0 (off) nor 1 (on)");
  return v == "1";
}

// UFNO_WINOGRAD: unset, empty or "1" the default tiles (X and Y), "x" X tiles only, "0" none.
WinogradTiles winograd_tiles(const std::string& v) {
  if (v.empty() || v == "1") return WinogradTiles::xy;
  if (v == "x") return WinogradTiles::x;
  if (v == "0") return WinogradTiles::off;
  throw InputError("UFNO_WINOGRAD", v, "is neither 1 (X and Y tiles), x (X tiles) nor 0 (none)");
}
}  // namespace

RunOptions run_options_from_environment(int threads, bool bf16) {
  RunOptions o;
  o.threads = threads;
  o.bf16 = env_switch("UFNO_BF16", false) || bf16;
  if (o.bf16) {
    const char* name = bf16 ? "--bf16" : "UFNO_BF16";
    if (!backend::ConvPrimitives<backend::Default>::kBf16)
      throw InputError(name, "",
                       "bfloat16 is a CPU option; this build runs the models on a GPU (its "
                       "faster mode is --tf32)");
    if (!backend::bf16_supported())
      throw InputError(name, "",
                       "this CPU has neither AVX512_BF16 nor AMX-BF16, which bfloat16 needs; run "
                       "without it");
  }
  o.plane_conv = env_switch("UFNO_PLANE_CONV", true);
  o.winograd = winograd_tiles(env("UFNO_WINOGRAD"));
  o.fftw_wisdom = env("UFNO_FFTW_WISDOM");
  o.profile = env_switch("UFNO_PROFILE", false);
  o.heap_reuse = env_switch("UFNO_HEAP_REUSE", true);
  o.tf32 = env_switch("UFNO_TF32", false);
  const std::string plan = env("UFNO_PLAN");
  if (!plan.empty() && !parse_plan_kind(plan, o.plan))
    throw InputError("UFNO_PLAN", plan, "is neither streaming nor whole-tensor");
  return o;
}

bool heap_reuse_from_environment() { return env("UFNO_HEAP_REUSE") != "0"; }

void apply_process_options(const RunOptions& o) {
  backend::set_threads(o.threads);
  if (!o.fftw_wisdom.empty()) fft::set_fft_wisdom_file(o.fftw_wisdom);
  LayerTimer::instance().set_enabled(o.profile);
  set_execution_plan(o.plan);
  backend::allow_tf32(o.tf32);
}

}  // namespace ufno
