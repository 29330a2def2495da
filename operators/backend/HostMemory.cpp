#include "operators/backend/HostMemory.hpp"

#include <malloc.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace ufno::backend {

bool reuse_freed_host_memory() {
  const char* e = std::getenv("UFNO_HEAP_REUSE");
  if (e && std::strcmp(e, "0") == 0) return false;
  // No mmap-backed blocks: every allocation comes from the heap, and a free heap top is kept.
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
}

}  // namespace ufno::backend
