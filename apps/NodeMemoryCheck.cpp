#include "apps/NodeMemoryCheck.hpp"

namespace ufno {

std::optional<NodeMemoryNeed> node_memory_shortfall(double rank_bytes, MPI_Comm comm,
                                                    const MemorySources& where) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  NodeMemoryNeed need;
  MPI_Allreduce(&rank_bytes, &need.bytes, 1, MPI_DOUBLE, MPI_SUM, node);
  MPI_Comm_size(node, &need.ranks_on_node);
  // One reading per node, so that every rank of it agrees.
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  double available = -1;
  if (node_rank == 0) available = available_host_memory(where).value_or(-1);
  MPI_Bcast(&available, 1, MPI_DOUBLE, 0, node);
  MPI_Comm_free(&node);
  if (available < 0 || need.bytes <= available) return std::nullopt;
  need.available = available;
  return need;
}

}  // namespace ufno
