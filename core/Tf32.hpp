#pragma once
// Whether float32 products and convolutions may run on TF32 tensor cores (NVIDIA Ampere and
// later): the inputs of each multiply rounded to a 10-bit mantissa, sums kept in float32, several
// times the FP32 rate. Off by default, so that GPU results agree with the CPU's to ~1e-6; with it
// on they agree to about 1e-3 relative. A process-wide setting (RunOptions::tf32, UFNO_TF32=1 or
// --tf32), read by cuBLAS at every product and by cuDNN when a convolution is set up, so it is
// applied before any model is built. Host backends have no TF32 and ignore it.
namespace ufno::backend {

inline bool& tf32_storage() {
  static bool allowed = false;
  return allowed;
}
inline bool tf32_allowed() { return tf32_storage(); }
inline void allow_tf32(bool on) { tf32_storage() = on; }

}  // namespace ufno::backend
