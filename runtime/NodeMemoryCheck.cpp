#include "runtime/NodeMemoryCheck.hpp"

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

namespace {

// This rank's device: its ranks' needs summed and its free memory as its first rank reads it;
// nothing on every rank when some rank cannot read its device. Collective over comm.
std::optional<NodeMemoryNeed> device_need(double rank_bytes, MPI_Comm comm,
                                          const MemorySources& where) {
  const auto reading = available_device_memory(where);
  int have = reading ? 1 : 0, all_have = 0;
  MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, comm);
  if (!all_have) return std::nullopt;  // some rank cannot tell: no check anywhere
  MPI_Comm node, device;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_split(node, reading->device, 0, &device);
  NodeMemoryNeed need;
  need.device = reading->device;
  MPI_Allreduce(&rank_bytes, &need.bytes, 1, MPI_DOUBLE, MPI_SUM, device);
  MPI_Comm_size(device, &need.ranks_on_node);
  // The device's free memory as its first rank reads it, so that its ranks agree.
  need.available = reading->free_bytes;
  MPI_Bcast(&need.available, 1, MPI_DOUBLE, 0, device);
  MPI_Comm_free(&device);
  MPI_Comm_free(&node);
  return need;
}

}  // namespace

std::optional<double> device_memory_spare(double rank_bytes, MPI_Comm comm,
                                          const MemorySources& where) {
  const auto need = device_need(rank_bytes, comm, where);
  if (!need) return std::nullopt;
  double mine = (need->available - need->bytes) / need->ranks_on_node, least = 0;
  MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE, MPI_MIN, comm);
  return least;
}

std::optional<NodeMemoryNeed> device_memory_shortfall(double rank_bytes, MPI_Comm comm,
                                                      const MemorySources& where) {
  const auto found = device_need(rank_bytes, comm, where);
  if (!found) return std::nullopt;
  const NodeMemoryNeed& need = *found;
  // The worst device's verdict for everyone: the largest shortfall, and its figures.
  struct {
    double lack;
    int rank;
  } mine{need.bytes - need.available, 0}, worst{};
  MPI_Comm_rank(comm, &mine.rank);
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  if (worst.lack <= 0) return std::nullopt;
  double figures[3] = {need.bytes, need.available, double(need.ranks_on_node)};
  int dev = need.device;
  MPI_Bcast(figures, 3, MPI_DOUBLE, worst.rank, comm);
  MPI_Bcast(&dev, 1, MPI_INT, worst.rank, comm);
  return NodeMemoryNeed{figures[0], figures[1], int(figures[2]), dev};
}

}  // namespace ufno
