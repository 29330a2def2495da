#pragma once
// A half-open box [lo, hi) of global indices over the three spatial axes (X, Y, T). Boxes may be
// empty, and a box that a rank gathers for a convolution may reach outside the domain (those
// cells are zero).
#include <algorithm>
#include <array>
#include <string>

namespace ufno::dist {

struct Box3 {
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};

  int extent(int a) const { return std::max(0, hi[a] - lo[a]); }
  std::array<int, 3> extents() const { return {extent(0), extent(1), extent(2)}; }
  long count() const { return long(extent(0)) * extent(1) * extent(2); }
  bool empty() const { return count() == 0; }
  bool operator==(const Box3& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const Box3& o) const { return !(*this == o); }

  Box3 intersect(const Box3& o) const {
    Box3 r;
    for (int a = 0; a < 3; ++a) {
      r.lo[a] = std::max(lo[a], o.lo[a]);
      r.hi[a] = std::max(r.lo[a], std::min(hi[a], o.hi[a]));
    }
    return r;
  }
  bool contains(const Box3& o) const {
    if (o.empty()) return true;
    for (int a = 0; a < 3; ++a)
      if (o.lo[a] < lo[a] || o.hi[a] > hi[a]) return false;
    return true;
  }
  std::string str() const {
    return "[" + std::to_string(lo[0]) + "," + std::to_string(hi[0]) + ")x[" +
           std::to_string(lo[1]) + "," + std::to_string(hi[1]) + ")x[" + std::to_string(lo[2]) +
           "," + std::to_string(hi[2]) + ")";
  }
};

// The whole domain of the given extents.
inline Box3 domain_box(const std::array<int, 3>& n) { return Box3{{0, 0, 0}, n}; }

}  // namespace ufno::dist
