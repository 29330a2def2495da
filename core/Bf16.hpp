#pragma once
// bfloat16 on CPUs that multiply it natively (RunOptions::bf16, --bf16 / UFNO_BF16=1): the U-Net's
// convolutions take bf16 inputs and weights (8-bit mantissa) and accumulate and write float32.
// Only CPUs with AVX512_BF16 (Intel Cooper Lake and later, AMD Zen 4 and later) or AMX-BF16
// (Sapphire Rapids and later) run it; elsewhere it is refused. (The pointwise GEMMs stay float32:
// their activations are float32 in memory, and rounding them costs more than bf16 saves.)

namespace ufno::backend {

// Whether the CPU has AVX512_BF16 or AMX-BF16 (cpuid), whatever the test hook says.
inline bool cpu_has_bf16() {
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
}

inline bool& bf16_hidden_storage() {
  static bool hidden = false;
  return hidden;
}

// The test hook: with `hidden` true, bf16_supported() answers false as on a CPU without bf16, so
// that the refusal can be tested on a machine that has it.
inline void hide_bf16_for_testing(bool hidden) { bf16_hidden_storage() = hidden; }

// Whether bf16 layers may be built here.
inline bool bf16_supported() { return !bf16_hidden_storage() && cpu_has_bf16(); }

}  // namespace ufno::backend
