#pragma once
// The columns of T cells that a box covers in one first-axis row of a block: a block of extents
// (n_0, n_1, ..., n_{D-2}, n_T) is rows of the first axis, each row columns over the axes
// 1 .. D-2 (row-major), each column n_T cells. A box's columns in a row are runs of consecutive
// columns along axis D-2. Why: the 4-D FNO's zero padding makes its first layer's input zero,
// and its last layer's output unused, outside the interior box; the transforms and the layer
// update then work on these runs alone.
#include <array>
#include <cstddef>
#include <vector>

#include "decomposition/Box.hpp"

namespace ufno::dist {

struct ColumnRuns {
  std::vector<long> start;  // each run's first column, counted from the row's first
  long length = 0;          // columns per run (the box's extent on axis D-2)
  long columns() const { return long(start.size()) * length; }
};

// The runs of `box` (block coordinates; its first-axis and T ranges are not used) in a row of a
// block of extents e. An empty box has no runs.
template <std::size_t D>
ColumnRuns column_runs(const std::array<int, D>& e, const Box<D>& box) {
  static_assert(D >= 3, "column_runs: a row needs axes between the first and T");
  ColumnRuns r;
  if (box.empty()) return r;
  r.length = box.extent(D - 2);
  // Runs enumerate the box's cells on axes 1 .. D-3, the last of them fastest.
  long runs = 1;
  for (std::size_t a = 1; a + 2 < D; ++a) runs *= box.extent(a);
  for (long i = 0; i < runs; ++i) {
    long rest = i, col = 0, stride = 1;
    for (std::size_t a = D - 2; a >= 1; --a) {  // axis D-2 contributes the run's start only
      const long idx = a == D - 2 ? 0 : rest % box.extent(a);
      if (a != D - 2) rest /= box.extent(a);
      col += (box.lo[a] + idx) * stride;
      stride *= e[a];
    }
    r.start.push_back(col);
  }
  return r;
}

}  // namespace ufno::dist
