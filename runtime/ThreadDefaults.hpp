#pragma once
// How many threads a rank uses when --threads is not given, from what the process may use, in
// this order: its CPU affinity mask when that is narrower than the node (Slurm's task binding,
// mpirun --bind-to core), else SLURM_CPUS_PER_TASK (srun -c without binding), else the node's
// CPUs over the ranks on the node. Summary lines say which one decided (docs/distributed.md).
#include <mpi.h>

#include <string>

namespace ufno {

struct ThreadChoice {
  int threads = 1;
  std::string source;  // "--threads", "CPU affinity", "SLURM_CPUS_PER_TASK", "node CPUs / ranks"
};

ThreadChoice default_threads_for_rank(int ranks_on_node);

// The ranks of `comm` on this rank's node (collective).
int ranks_on_this_node(MPI_Comm comm);

// The CPUs this process may run on (its affinity mask), at least 1.
int usable_cpus();

// Throws InputError("--threads", ...) for a count this process cannot use: below 1, or above
// the node's CPUs (more threads than CPUs only slows every pool down; 100000 crashed OpenMP).
void check_thread_count(int threads);

}  // namespace ufno
