#pragma once
// Which box of a global (X, Y, T) grid every rank owns. The block layout splits each axis into
// `parts` contiguous blocks, the first (n mod parts) one cell larger, so extents need not divide
// and ranks may own nothing; rank r sits at grid coordinate (r / (py*pt), (r / pt) % py, r % pt).
// A pencil is a block layout with parts = 1 along the axis that must be local (an FFT axis).
// General layouts (any box per rank, overlapping or reaching outside the domain) describe what a
// rank gathers for a convolution halo or a padding.
#include <array>
#include <string>
#include <vector>

#include "decomposition/Box3.hpp"

namespace ufno::dist {

class PencilLayout {
 public:
  PencilLayout() = default;
  PencilLayout(std::array<int, 3> global, std::vector<Box3> boxes)
      : global_(global), boxes_(std::move(boxes)) {}

  // Block layout of `global` over a grid of parts[0] x parts[1] x parts[2] ranks.
  static PencilLayout block(std::array<int, 3> global, std::array<int, 3> parts);

  int ranks() const { return int(boxes_.size()); }
  const Box3& box(int rank) const { return boxes_.at(rank); }
  const std::vector<Box3>& boxes() const { return boxes_; }
  const std::array<int, 3>& global() const { return global_; }
  // True when the boxes tile the domain exactly once (a partition, as block layouts do).
  bool is_partition() const;
  std::string str() const;

 private:
  std::array<int, 3> global_{0, 0, 0};
  std::vector<Box3> boxes_;
};

// [lo, hi) of block `i` when n cells are split into `parts` blocks.
inline std::array<int, 2> block_range(int n, int parts, int i) {
  const int base = n / parts, extra = n % parts;
  const int lo = i * base + std::min(i, extra);
  return {lo, lo + base + (i < extra ? 1 : 0)};
}

}  // namespace ufno::dist
