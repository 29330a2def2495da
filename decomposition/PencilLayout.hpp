#pragma once
// Which box of a global grid of D axes every rank owns. The block layout splits each axis into
// `parts` contiguous blocks, the first (n mod parts) one cell larger, so extents need not divide
// and ranks may own nothing; ranks are numbered row-major over the grid of parts (the last axis
// fastest), so inserting or moving a part of 1 keeps every rank's coordinates. A pencil is a block
// layout with parts = 1 along the axis that must be local (an FFT axis). General layouts (any box
// per rank, overlapping or reaching outside the domain) describe what a rank gathers for a
// convolution halo or a padding.
#include <array>
#include <string>
#include <vector>

#include "decomposition/Box.hpp"

namespace ufno::dist {

template <std::size_t D>
class PencilLayout {
 public:
  using Extents = std::array<int, D>;
  PencilLayout() = default;
  PencilLayout(Extents global, std::vector<Box<D>> boxes)
      : global_(global), boxes_(std::move(boxes)) {}

  // Block layout of `global` over a grid of parts[0] x ... x parts[D-1] ranks.
  static PencilLayout block(Extents global, Extents parts);

  int ranks() const { return int(boxes_.size()); }
  const Box<D>& box(int rank) const { return boxes_.at(rank); }
  const std::vector<Box<D>>& boxes() const { return boxes_; }
  const Extents& global() const { return global_; }
  // True when the boxes tile the domain exactly once (a partition, as block layouts do).
  bool is_partition() const;
  std::string str() const;

 private:
  Extents global_{};
  std::vector<Box<D>> boxes_;
};

// [lo, hi) of block `i` when n cells are split into `parts` blocks.
inline std::array<int, 2> block_range(int n, int parts, int i) {
  const int base = n / parts, extra = n % parts;
  const int lo = i * base + std::min(i, extra);
  return {lo, lo + base + (i < extra ? 1 : 0)};
}

}  // namespace ufno::dist
