// The executables' host allocation policy (operators/backend/HostMemory.hpp): freed memory stays
// with the process under reuse_freed_host_memory(), and return_freed_host_memory() hands it back
// to the kernel (resident memory falls).
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "operators/backend/HostMemory.hpp"
#include "support/Skip.hpp"

namespace {

// Resident memory of this process now, in MB (/proc/self/statm). Unused in the sanitizer build,
// which skips the test below.
[[maybe_unused]] double resident_mb() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  const int got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return got == 2 ? resident * 4096.0 / 1e6 : -1;
}

}  // namespace

// CTest: host_memory_kept (skipped under AddressSanitizer).
TEST_CASE("freed host memory stays until it is handed back", "[memory][.host_memory_kept]") {
#if defined(__SANITIZE_ADDRESS__)
  ufno::test::skip("AddressSanitizer's allocator keeps freed blocks in its own quarantine");
#else
  ufno::backend::reuse_freed_host_memory(true);  // glibc here: keep freed heap pages
  std::vector<char*> blocks;
  for (int i = 0; i < 96; ++i) {  // 96 MB in 1 MB blocks, every page touched
    char* p = static_cast<char*>(std::malloc(1 << 20));
    REQUIRE(p);
    std::memset(p, 1, 1 << 20);
    blocks.push_back(p);
  }
  const double touched = resident_mb();
  for (char* p : blocks) std::free(p);
  const double kept = resident_mb();
  CHECK(ufno::backend::return_freed_host_memory());
  const double after = resident_mb();
  INFO("resident MB: touched " << touched << ", freed " << kept << ", handed back " << after);
  CHECK(kept > touched - 16);  // the policy kept the freed pages
  CHECK(after < kept - 64);    // and they went back to the kernel
#endif
}
