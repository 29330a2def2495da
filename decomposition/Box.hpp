#pragma once
// A half-open box [lo, hi) of global indices over the D grid axes of a tensor: (X, Y, T) for the
// U-FNO, (A1, A2, A3, T) for the 4-D FNO. Boxes may be empty, and a box that a rank gathers for a
// convolution or a padding may reach outside the domain (those cells are zero).
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

namespace ufno::dist {

template <std::size_t D>
struct Box {
  static constexpr std::size_t dims = D;
  std::array<int, D> lo{}, hi{};

  int extent(std::size_t a) const { return std::max(0, hi[a] - lo[a]); }
  std::array<int, D> extents() const {
    std::array<int, D> e{};
    for (std::size_t a = 0; a < D; ++a) e[a] = extent(a);
    return e;
  }
  long count() const {
    long c = 1;
    for (std::size_t a = 0; a < D; ++a) c *= extent(a);
    return c;
  }
  bool empty() const { return count() == 0; }
  bool operator==(const Box& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const Box& o) const { return !(*this == o); }

  Box intersect(const Box& o) const {
    Box r;
    for (std::size_t a = 0; a < D; ++a) {
      r.lo[a] = std::max(lo[a], o.lo[a]);
      r.hi[a] = std::max(r.lo[a], std::min(hi[a], o.hi[a]));
    }
    return r;
  }
  bool contains(const Box& o) const {
    if (o.empty()) return true;
    for (std::size_t a = 0; a < D; ++a)
      if (o.lo[a] < lo[a] || o.hi[a] > hi[a]) return false;
    return true;
  }
  // The box moved by `d` along every axis.
  Box shifted(const std::array<int, D>& d) const {
    Box r = *this;
    for (std::size_t a = 0; a < D; ++a) r.lo[a] += d[a], r.hi[a] += d[a];
    return r;
  }
  std::string str() const {
    std::string s;
    for (std::size_t a = 0; a < D; ++a)
      s += (a ? "x[" : "[") + std::to_string(lo[a]) + "," + std::to_string(hi[a]) + ")";
    return s;
  }
};

using Box3 = Box<3>;
using Box4 = Box<4>;

// The whole domain of the given extents.
template <std::size_t D>
Box<D> domain_box(const std::array<int, D>& n) {
  return Box<D>{{}, n};
}

}  // namespace ufno::dist
