#pragma once
// Host allocation policy of the executables: freed tensors stay in the process heap and are
// reused by the next layer, instead of going back to the kernel.
//
// Why: a forward pass allocates and frees 60-200 MB tensors in every layer. glibc serves each
// allocation above 32 MB with a fresh mmap, whose pages the kernel zero-fills on first touch, and
// unmaps it on free; page faults then cost more than the pruned transforms and GEMMs that wrote
// those pages (paper-size FNO: 1.02 s per case against 0.64 s with reuse). Serving large blocks
// from the heap and never trimming it makes every layer after the first reuse faulted-in memory.
// The price is fragmentation: peak RSS grows by about 10-15 %. UFNO_HEAP_REUSE=0 turns it off.
namespace ufno::backend {

// Call once at start-up, before large allocations. Returns whether the policy is in force.
bool reuse_freed_host_memory();

}  // namespace ufno::backend
