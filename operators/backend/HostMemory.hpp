#pragma once
// Host allocation policy of the executables: freed tensors stay with the process and are reused
// by the next layer, instead of going back to the kernel.
//
// Why: a forward pass allocates and frees 10-200 MB tensors in every layer. Memory that goes
// back to the kernel comes back as fresh pages that the kernel zero-fills on first touch; those
// page faults cost more than the pruned transforms and GEMMs that write the pages (paper-size
// FNO: 1.02 s per case against 0.64 s with reuse, when measured).
// - With jemalloc (linked into the executables when installed; cmake -DUFNO_JEMALLOC=OFF to
//   leave it out) the configuration in JemallocConfig.cpp, compiled into each of them, keeps
//   freed pages (no decay) and serves
//   large blocks from the ordinary arenas; its peak memory stays at the first pass's over
//   repeated passes. MALLOC_CONF overrides it (for example MALLOC_CONF=dirty_decay_ms:10000).
// - With glibc's malloc, reuse_freed_host_memory() serves every block from the heap and never
//   trims it: as fast, but the heap fragments, and peak memory grows by 5-20 % over repeated
//   passes. RunOptions::heap_reuse (UFNO_HEAP_REUSE=0 in the programs) turns that off.
namespace ufno::backend {

// Call once at start-up, before large allocations. Returns whether the glibc policy was set.
bool reuse_freed_host_memory(bool on = true);

// Hands the host memory freed so far back to the kernel (jemalloc: purges every arena; glibc:
// malloc_trim), for a tensor that is freed for good while a larger one is about to be touched
// for the first time: the 4-D FNO's unpadded lift, freed once the first layer has transformed
// it, before that layer writes the padded activation. Without it the freed pages stay resident
// and add to the peak. Returns whether an allocator was asked.
bool return_freed_host_memory();

}  // namespace ufno::backend
