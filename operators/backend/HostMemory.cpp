#include "operators/backend/HostMemory.hpp"

#include <dlfcn.h>
#include <malloc.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace ufno::backend {

bool reuse_freed_host_memory(bool on) {
  if (!on) return false;
  // glibc: no mmap-backed blocks, every allocation comes from the heap, a free heap top is
  // kept. (Under jemalloc these settings reach glibc's unused allocator and change nothing.)
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
}

bool return_freed_host_memory() {
  // jemalloc, when the executable links it, looked up at run time: the library does not depend
  // on it. "arena.4096" is MALLCTL_ARENAS_ALL.
  using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
  static const auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  if (mallctl) return mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0) == 0;
  return malloc_trim(0) >= 0;
}

}  // namespace ufno::backend
