// Whether this machine can run the checks that some tests can only make with a capability, one
// CTest test per capability. Exit 77 (CTest's SKIP) without it, so that a machine where those
// checks cannot run shows a skipped test instead of a silent pass:
//   bf16        AVX512_BF16 or AMX-BF16, for the bf16 numerics of test_conv3d and test_bf16
//   multi-cpu   more than one CPU, for test_predict_cli's SLURM_CPUS_PER_TASK / node-CPU defaults
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "core/Bf16.hpp"

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  bool have = false;
  const char* checks = "";
  if (std::strcmp(what, "bf16") == 0) {
    have = ufno::backend::bf16_supported();
    checks = "test_conv3d's bf16 convolution numerics, test_bf16's bf16 model";
  } else if (std::strcmp(what, "multi-cpu") == 0) {
    have = std::thread::hardware_concurrency() > 1;
    checks = "test_predict_cli's SLURM_CPUS_PER_TASK and node-CPU thread defaults";
  } else {
    std::fprintf(stderr, "capability_available: give bf16 or multi-cpu\n");
    return 2;
  }
  std::printf("%s%s: %s\n", have ? "" : "SKIP: ", what,
              have ? (std::string("present; tested: ") + checks).c_str()
                   : (std::string("absent; not tested here: ") + checks).c_str());
  return have ? 0 : 77;
}
