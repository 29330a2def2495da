#pragma once
// Refuses a run whose ranks on one node would together need more host memory than the node has
// for them (core/MemoryBudget.hpp), before anything large is allocated: Linux overcommits, so
// such a run would otherwise be ended by the kernel's OOM killer, without a message, part-way.
#include <mpi.h>

#include <optional>

#include "core/MemoryBudget.hpp"

namespace ufno {

struct NodeMemoryNeed {
  double bytes = 0;      // this node's ranks together (on a GPU: the ranks sharing its device)
  double available = 0;  // what the node (the device) has for them
  int ranks_on_node = 1;
  int device = -1;  // the GPU, for a device shortfall; -1 for host memory
};

// Collective over `comm`: sums `rank_bytes` over the ranks that share this rank's node and
// compares it with this node's available host memory. Returns the shortfall's figures when the
// node cannot hold the need, nothing when it can or when the budget cannot be read.
std::optional<NodeMemoryNeed> node_memory_shortfall(double rank_bytes, MPI_Comm comm,
                                                    const MemorySources& where = {});

// The same for the GPU each rank runs on (core/MemoryBudget.hpp, available_device_memory): the
// ranks of a node that share a device add up their needs against its free memory. Every rank of
// `comm` gets the verdict of the worst device (collective). Nothing when the tensors live in
// host memory and `where` gives no reading.
std::optional<NodeMemoryNeed> device_memory_shortfall(double rank_bytes, MPI_Comm comm,
                                                      const MemorySources& where = {});

// The device memory each rank may still take beside `rank_bytes` (its pass's need): the free
// memory of its device less its ranks' needs, shared evenly among them, the least over all
// devices, the same on every rank (collective); nothing when some rank cannot read its device
// (host tensors and no reading in `where`). Negative when a device cannot hold the passes.
std::optional<double> device_memory_spare(double rank_bytes, MPI_Comm comm,
                                          const MemorySources& where = {});

}  // namespace ufno
