#include "runtime/ThreadDefaults.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "core/InputError.hpp"

namespace ufno {

namespace {

int node_cpus() {
  const int n = int(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

int slurm_cpus_per_task() {
  const char* v = std::getenv("SLURM_CPUS_PER_TASK");
  if (!v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end != v && *end == '\0' && n > 0 && n <= 1 << 20 ? int(n) : 0;
}

}  // namespace

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return node_cpus();
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

int ranks_on_this_node(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = 1;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

ThreadChoice default_threads_for_rank(int ranks_on_node) {
  const int mask = usable_cpus(), node = node_cpus();
  if (mask < node) return {mask, "CPU affinity"};
  if (const int slurm = slurm_cpus_per_task())
    return {std::min(slurm, node), "SLURM_CPUS_PER_TASK"};
  const int n = node / (ranks_on_node > 0 ? ranks_on_node : 1);
  return {n < 1 ? 1 : n, "node CPUs / ranks"};
}

void check_thread_count(int threads) {
  if (threads < 1) throw InputError("--threads", "", "must be at least 1");
  if (threads > node_cpus())
    throw InputError("--threads", "",
                     std::to_string(threads) + " is more than this node's " +
                         std::to_string(node_cpus()) + " CPUs");
}

}  // namespace ufno
