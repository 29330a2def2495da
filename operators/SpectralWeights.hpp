#pragma once
// A spectral layer's corner weights combined into one array over the kept-mode index space of the
// truncated spectrum, (2 m_0, ..., 2 m_{D-2}, m_T): index k < m is a low mode, k >= m a high one,
// on every axis but T (always low). A layer over D axes has 2^(D-1) corners, weights1 .. in the
// reference models' order: by the number of high axes, then in lexicographic order of which axes
// are high. For the U-FNO (D = 3): weights1 (low X, low Y), weights2 (high, low), weights3 (low,
// high), weights4 (high, high); for the 4-D FNO: (lll), (hll), (lhl), (llh), (hhl), (hlh), (lhh),
// (hhh) over (A1, A2, A3). Each corner is (in, out, m_0, ..., m_T) complex. A distributed layer
// keeps only the modes its rank owns: `owned` is that box of mode indices.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "core/Parallel.hpp"
#include "core/Tensor.hpp"
#include "core/WeightSource.hpp"
#include "decomposition/Box.hpp"

namespace ufno {

// (owned modes, flattened row-major over the owned box; in; out)
using SpectralWeightView = Kokkos::View<complexf***, Kokkos::LayoutRight, DeviceSpace>;

// Which axes are high in corner q (weights q + 1), for a layer over D axes.
template <std::size_t D>
std::vector<std::array<bool, D - 1>> corner_order() {
  std::vector<std::array<bool, D - 1>> order;
  for (std::size_t highs = 0; highs < D; ++highs) {
    // Choices of `highs` axes among D - 1, lexicographic: walk the bit patterns from the one
    // with the high axes first.
    std::vector<std::array<bool, D - 1>> level;
    for (unsigned bits = 0; bits < (1u << (D - 1)); ++bits) {
      std::array<bool, D - 1> c{};
      std::size_t n = 0;
      for (std::size_t a = 0; a + 1 < D; ++a) n += (c[a] = (bits >> a) & 1u);
      if (n == highs) level.push_back(c);
    }
    // Lexicographic on the sorted list of high axes = high-first on axis 0, then axis 1, ...
    std::sort(level.begin(), level.end(), [](const auto& x, const auto& y) {
      for (std::size_t a = 0; a + 1 < D; ++a)
        if (x[a] != y[a]) return x[a];
      return false;
    });
    order.insert(order.end(), level.begin(), level.end());
  }
  return order;
}

template <std::size_t D>
std::vector<HostArray> load_corner_weights(const WeightSource& w, const std::string& prefix,
                                           int in, int out, const std::array<int, D>& m) {
  std::vector<std::size_t> s{std::size_t(in), std::size_t(out)};
  for (int v : m) s.push_back(std::size_t(v));
  s.push_back(2);
  std::vector<HostArray> c;
  for (std::size_t q = 0; q < (std::size_t(1) << (D - 1)); ++q)
    c.push_back(w.take(prefix + ".weights" + std::to_string(q + 1), s));
  return c;
}

template <std::size_t D>
SpectralWeightView combine_corner_weights(int in, int out, const std::array<int, D>& m,
                                          const std::vector<HostArray>& corners,
                                          const dist::Box<D>& owned) {
  const auto order = corner_order<D>();
  long per_corner = long(in) * out * 2;
  for (int v : m) per_corner *= v;
  if (corners.size() != order.size())
    throw std::invalid_argument("SpectralConv: " + std::to_string(corners.size()) +
                                " corner weights for " + std::to_string(order.size()));
  for (const auto& c : corners)
    if (long(c.data.size()) != per_corner)
      throw std::invalid_argument("SpectralConv: corner weight size mismatch");
  const long modes = owned.count();
  SpectralWeightView w("spectral.w", modes, in, out);
  auto h = Kokkos::create_mirror_view(w);
  const auto e = owned.extents();
  for (long f = 0; f < modes; ++f) {
    // The mode's global index, its corner and its position inside the corner.
    std::array<bool, D - 1> high{};
    long rest = f, pos = 0, stride = 1;
    for (std::size_t a = D; a-- > 0;) {
      const int k = owned.lo[a] + int(rest % e[a]);
      rest /= e[a];
      if (a + 1 < D) high[a] = k >= m[a];
      pos += long(k % m[a]) * stride;
      stride *= m[a];
    }
    const std::size_t q = std::find(order.begin(), order.end(), high) - order.begin();
    for (int ci = 0; ci < in; ++ci)
      for (int co = 0; co < out; ++co) {
        const std::size_t idx = std::size_t((long(ci) * out + co) * stride + pos) * 2;
        h(f, ci, co) = complexf(corners[q].data[idx], corners[q].data[idx + 1]);
      }
  }
  Kokkos::deep_copy(w, h);
  return w;
}

// out[b, o, modes] = scale * sum_i a[b, i, modes] * w[modes, i, o] over a block of modes.
template <std::size_t D>
GridView<D, complexf> spectral_mix(const GridView<D, complexf>& a, const SpectralWeightView& w,
                                   float scale) {
  const int B = a.extent(0), I = w.extent(1), O = w.extent(2);
  long M = 1;
  for (int v : grid_extents<D>(a)) M *= v;
  if (int(a.extent(1)) != I || M != long(w.extent(0)))
    throw std::invalid_argument("spectral_mix: spectrum block " + shape_string(a) +
                                " does not match the weights");
  auto out = make_grid_view<D, complexf>("spec.mixed", B, O, grid_extents<D>(a), false);
  const complexf* in = a.data();
  complexf* dst = out.data();
  ufno::parallel_for(
      "ufno::spectral_mix", Kokkos::RangePolicy<ExecSpace>(0, long(B) * O * M),
      KOKKOS_LAMBDA(const int64_t idx) {
        const int64_t mode = idx % M, bo = idx / M, o = bo % O, b = bo / O;
        complexf acc(0.f, 0.f);
        for (int i = 0; i < I; ++i) acc += in[(b * I + i) * M + mode] * w(mode, i, o);
        dst[idx] = acc * scale;
      });
  return out;
}

}  // namespace ufno
