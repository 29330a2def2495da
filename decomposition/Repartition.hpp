#pragma once
// Repartition: moves a distributed (B, C, grid...) tensor of D grid axes from one layout to another
// with a single exchange. Leading dimensions (B, C) are always local; each rank holds the box its
// layout gives it. Planned once from the two layouts (which overlaps go to which rank, buffer
// offsets), executed many times. The destination boxes need not tile the domain: they may overlap
// (halos) or reach outside it, and every destination cell no source box covers is set to zero (zero
// padding). The exchange algorithm is a runtime choice: one MPI_Alltoallv, or point-to-point
// messages to the ranks that actually share data. Pack and unpack are Kokkos kernels.
#include <mpi.h>

#include <string>
#include <vector>

#include "core/Tensor.hpp"
#include "decomposition/PencilLayout.hpp"

namespace ufno::dist {

enum class ExchangeAlgorithm { Alltoallv, PointToPoint };

ExchangeAlgorithm parse_exchange_algorithm(const std::string& s);  // "alltoallv" | "p2p"

// Where exchanged data lives when it goes through MPI: the tensors' own memory (host tensors, or
// GPU tensors with a CUDA-aware MPI), or host buffers staged from and to the GPU when the MPI is
// not CUDA-aware. One rank exchanges nothing either way.
enum class ExchangeMemory { Host, Device, HostStaged };
ExchangeMemory exchange_memory();
std::string describe(ExchangeMemory m);  // for run summaries

template <class T, std::size_t D = 3>
class Repartition {
 public:
  using View = GridView<D, T>;
  using Layout = PencilLayout<D>;

  Repartition(MPI_Comm comm, Layout in, Layout out,
              ExchangeAlgorithm alg = ExchangeAlgorithm::Alltoallv);

  // in: (B, C, in box extents) of this rank; returns (B, C, out box extents). When no rank
  // exchanges anything and this rank's box is unchanged, returns `in` itself (no copy).
  View apply(const View& in) const;
  void apply(const View& in, const View& out) const;

  const Layout& in_layout() const { return in_; }
  const Layout& out_layout() const { return out_; }
  // Cells of one (B, C) slice this rank sends to other ranks (what it keeps excluded).
  long cells_sent() const { return cells_sent_; }

 private:
  void exchange(const View& in, const View& out, long nl) const;
  // The MPI part of exchange(), on send and receive buffers of nl * send_cells_ and
  // nl * recv_cells_ elements in memory MPI may read.
  void transfer(const T* send, T* recv, long nl) const;

  struct Peer {
    int rank;
    Box<D> overlap;  // global indices
    long offset;     // in cells of one (B, C) slice, within the send or receive buffer
  };
  MPI_Comm comm_;
  int rank_ = 0;
  Layout in_, out_;
  ExchangeAlgorithm alg_;
  std::vector<Peer> sends_, recvs_;  // other ranks only
  Box<D> self_;                      // what this rank keeps
  bool exchange_ = false;            // any rank sends anything to another rank
  bool identity_ = false;            // nothing moves and this rank's box is unchanged
  long send_cells_ = 0, recv_cells_ = 0, cells_sent_ = 0;
  bool needs_zero_fill_ = false;
  bool host_staged_ = false;  // exchange_memory() == HostStaged
};

}  // namespace ufno::dist
