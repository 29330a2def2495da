#pragma once
// Halo exchange for the convolution layers: each rank gathers exactly the input cells its own
// output block depends on, neighbours' boundary layers included and cells outside the domain set
// to zero (the convolution's zero padding), so the local convolution then runs without padding.
// Works for any stride, so the stride-2 encoder and the transposed decoder stay aligned with the
// global grid across block boundaries. It is a Repartition into the gather layout: data a rank
// already holds is copied locally, only the halos cross the network.
#include <memory>

#include "decomposition/Repartition.hpp"

namespace ufno::dist {

struct ConvGeometry {
  int kernel = 3, stride = 1, padding = 1;
  bool transposed = false;
};

// The input range [lo, hi) that output range [o_lo, o_hi) needs along one axis (may reach
// outside [0, n)). Empty output -> empty range.
std::array<int, 2> conv_input_range(const ConvGeometry& g, int o_lo, int o_hi);

// The same geometry on every axis of a grid of D axes.
template <std::size_t D = 3>
class HaloExchange {
 public:
  using Layout = PencilLayout<D>;
  HaloExchange(MPI_Comm comm, const Layout& in, const Layout& out, ConvGeometry g,
               ExchangeAlgorithm alg = ExchangeAlgorithm::Alltoallv);

  // The gathered input block of this rank: (B, C, gather box extents).
  GridView<D> gather(const GridView<D>& in) const { return r_->apply(in); }
  const Box<D>& gather_box() const { return gather_.box(rank_); }
  const Layout& gather_layout() const { return gather_; }
  long cells_sent() const { return r_->cells_sent(); }

 private:
  int rank_ = 0;
  Layout gather_;
  std::unique_ptr<Repartition<float, D>> r_;
};

}  // namespace ufno::dist
