// jemalloc's start-up configuration, compiled into every executable that links jemalloc
// (ufno_use_allocator in cmake/Dependencies.cmake), so no executable depends on pulling some
// other object out of a static library to get it (operators/backend/HostMemory.hpp says why).
// No purging of freed pages, no separate arena for large blocks (which would return them at
// once). MALLOC_CONF in the environment overrides it.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
