// Whether this CPU runs the AVX-512 PlaneConv3d whose numerics test_conv3d_plane checks. Exit 77
// (CTest's SKIP) without AVX-512, so that a machine where those checks cannot run shows a skipped
// test instead of a silent pass.
#include <cstdio>

#include "operators/backend/PlaneConv3d.hpp"

int main() {
  if (ufno::backend::PlaneConv3d::available()) {
    std::printf("PlaneConv3d: AVX-512 present; test_conv3d_plane checks its numerics\n");
    return 0;
  }
  std::printf("SKIP: no AVX-512 on this CPU: PlaneConv3d's numerics are not tested here\n");
  return 77;
}
