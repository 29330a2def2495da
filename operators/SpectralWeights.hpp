#pragma once
// The spectral layer's four corner weights (weights1..4, each (in, out, mx, my, mt) complex)
// combined into one array over the kept-mode index space (2mx, 2my, mt) that the truncated
// spectrum uses: index kx < mx is a low X mode, kx >= mx a high one, the same for Y; weights1 is
// (low X, low Y), weights2 (high X, low Y), weights3 (low X, high Y), weights4 (both high).
// A distributed layer keeps only the modes its rank owns: `owned` is that box of mode indices.
#include <array>
#include <stdexcept>

#include "core/Parallel.hpp"
#include "core/Tensor.hpp"
#include "core/WeightSource.hpp"
#include "decomposition/Box3.hpp"

namespace ufno {

// (owned kx, owned ky, owned kt, in, out)
using SpectralWeightView = Kokkos::View<complexf*****, Kokkos::LayoutRight, DeviceSpace>;

inline std::array<HostArray, 4> load_corner_weights(const WeightSource& w,
                                                    const std::string& prefix, int in, int out,
                                                    std::array<int, 3> m) {
  const std::vector<std::size_t> s{std::size_t(in),   std::size_t(out),  std::size_t(m[0]),
                                   std::size_t(m[1]), std::size_t(m[2]), 2};
  std::array<HostArray, 4> c;
  for (int q = 0; q < 4; ++q) c[q] = w.take(prefix + ".weights" + std::to_string(q + 1), s);
  return c;
}

inline SpectralWeightView combine_corner_weights(int in, int out, std::array<int, 3> m,
                                                 const std::array<HostArray, 4>& corners,
                                                 const dist::Box3& owned) {
  const int mx = m[0], my = m[1], mt = m[2];
  for (const auto& c : corners)
    if (c.data.size() != std::size_t(in) * out * mx * my * mt * 2)
      throw std::invalid_argument("SpectralConv3d: corner weight size mismatch");
  SpectralWeightView w("spectral.w", owned.extent(0), owned.extent(1), owned.extent(2), in, out);
  auto h = Kokkos::create_mirror_view(w);
  for (int i = 0; i < owned.extent(0); ++i)
    for (int j = 0; j < owned.extent(1); ++j)
      for (int k = 0; k < owned.extent(2); ++k) {
        const int kx = owned.lo[0] + i, ky = owned.lo[1] + j, kt = owned.lo[2] + k;
        const int q = (kx >= mx ? 1 : 0) + (ky >= my ? 2 : 0);
        const int a = kx % mx, b = ky % my;
        for (int ci = 0; ci < in; ++ci)
          for (int co = 0; co < out; ++co) {
            const std::size_t idx =
                ((((std::size_t(ci) * out + co) * mx + a) * my + b) * mt + kt) * 2;
            h(i, j, k, ci, co) = complexf(corners[q].data[idx], corners[q].data[idx + 1]);
          }
      }
  Kokkos::deep_copy(w, h);
  return w;
}

// out[b, o, modes] = scale * sum_i a[b, i, modes] * w[modes, i, o] over a block of modes.
inline CTensor spectral_mix(const CTensor& a, const SpectralWeightView& w, float scale) {
  const int B = a.extent(0), I = w.extent(3), O = w.extent(4);
  if (int(a.extent(1)) != I || a.extent(2) != w.extent(0) || a.extent(3) != w.extent(1) ||
      a.extent(4) != w.extent(2))
    throw std::invalid_argument("spectral_mix: spectrum block " + to_string(shape_of(a)) +
                                " does not match the weights");
  CTensor out = empty_ctensor("spec.mixed", B, O, a.extent(2), a.extent(3), a.extent(4));
  ufno::parallel_for(
      "ufno::spectral_mix", range5(out), KOKKOS_LAMBDA(int b, int o, int x, int y, int t) {
        complexf acc(0.f, 0.f);
        for (int i = 0; i < I; ++i) acc += a(b, i, x, y, t) * w(x, y, t, i, o);
        out(b, o, x, y, t) = acc * scale;
      });
  return out;
}

}  // namespace ufno
