#include "operators/backend/HostMemory.hpp"

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

}  // namespace ufno::backend
