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
#include <string>
#include <vector>

#include "core/Backend.hpp"
#include "core/Parallel.hpp"
#include "core/Tensor.hpp"
#include "core/WeightSource.hpp"
#include "core/Workspace.hpp"
#include "decomposition/Box.hpp"

namespace ufno {

// (in; out; owned modes, flattened row-major over the owned box): the model file's order, so
// loading streams and the mode multiply reads every weight once, contiguously.
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
std::vector<std::size_t> corner_shape(int in, int out, const std::array<int, D>& m) {
  std::vector<std::size_t> s{std::size_t(in), std::size_t(out)};
  for (int v : m) s.push_back(std::size_t(v));
  s.push_back(2);
  return s;
}

inline std::string corner_name(const std::string& prefix, std::size_t q) {
  return prefix + ".weights" + std::to_string(q + 1);
}

template <std::size_t D>
std::vector<HostArray> load_corner_weights(const WeightSource& w, const std::string& prefix, int in,
                                           int out, const std::array<int, D>& m) {
  std::vector<HostArray> c;
  for (std::size_t q = 0; q < (std::size_t(1) << (D - 1)); ++q)
    c.push_back(w.take(corner_name(prefix, q), corner_shape<D>(in, out, m)));
  return c;
}

// Every corner of layer `prefix` has the (in, out, m..., 2) shape (InputError otherwise).
template <std::size_t D>
void check_corner_shapes(const WeightSource& w, const std::string& prefix, int in, int out,
                         const std::array<int, D>& m) {
  const auto shape = corner_shape<D>(in, out, m);
  for (std::size_t q = 0; q < (std::size_t(1) << (D - 1)); ++q)
    if (w.shape(corner_name(prefix, q)) != shape)
      throw InputError(w.origin(), corner_name(prefix, q),
                       "shape " + shape_string(w.shape(corner_name(prefix, q))) +
                           " does not match the " + shape_string(shape) +
                           " implied by the model attributes");
}

// Corner q's part of the owned modes: the box `part` (kept-mode indices, inside the corner and
// the owned box), the hyperslab of the corner's (in, out, m..., 2) array that holds it, and where
// each run of the part along the last axis starts in the owned box (flattened row-major), so a
// part read as (in, out, part cells) maps onto the owned layout run by run.
template <std::size_t D>
struct CornerPart {
  std::size_t corner = 0;
  dist::Box<D> part;
  std::vector<std::size_t> start, count;
  std::vector<long> run_at;
  long run() const { return part.extent(D - 1); }
};

// The non-empty parts of every corner in `owned`, corner by corner. The corners tile the kept-mode
// index box, so the parts tile `owned`: every owned mode is in exactly one part.
template <std::size_t D>
std::vector<CornerPart<D>> owned_corner_parts(int in, int out, const std::array<int, D>& m,
                                              const dist::Box<D>& owned) {
  const auto order = corner_order<D>();
  const auto oe = owned.extents();
  std::vector<CornerPart<D>> parts;
  for (std::size_t q = 0; q < order.size(); ++q) {
    dist::Box<D> corner;
    for (std::size_t a = 0; a < D; ++a) {
      const bool high = a + 1 < D && order[q][a];
      corner.lo[a] = high ? m[a] : 0;
      corner.hi[a] = corner.lo[a] + m[a];
    }
    CornerPart<D> p;
    p.corner = q;
    p.part = corner.intersect(owned);
    if (p.part.empty()) continue;
    p.start = {0, 0};
    p.count = {std::size_t(in), std::size_t(out)};
    for (std::size_t a = 0; a < D; ++a) {
      p.start.push_back(std::size_t(p.part.lo[a] - corner.lo[a]));
      p.count.push_back(std::size_t(p.part.extent(a)));
    }
    p.start.push_back(0);
    p.count.push_back(2);
    const auto pe = p.part.extents();
    const long runs = p.part.count() / p.run();
    p.run_at.resize(runs);
    for (long r = 0; r < runs; ++r) {
      long rest = r, stride = oe[D - 1];
      p.run_at[r] = p.part.lo[D - 1] - owned.lo[D - 1];
      for (std::size_t a = D - 1; a-- > 0;) {
        const int i = int(rest % pe[a]);
        rest /= pe[a];
        p.run_at[r] += long(p.part.lo[a] - owned.lo[a] + i) * stride;
        stride *= oe[a];
      }
    }
    parts.push_back(std::move(p));
  }
  return parts;
}

// The weights of the modes in `owned` (a box of kept-mode indices), read corner by corner and
// only the part of each corner that falls in `owned` (WeightSource::get_block): a rank never
// holds another rank's modes, not even while loading, and a file-backed source reads only them.
template <std::size_t D>
SpectralWeightView load_owned_weights(const WeightSource& w, const std::string& prefix, int in,
                                      int out, const std::array<int, D>& m,
                                      const dist::Box<D>& owned) {
  check_corner_shapes<D>(w, prefix, in, out, m);  // every corner's, before any reading
  // No initialisation: the parts tile the owned box.
  SpectralWeightView wv(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spectral.w"), in, out,
                        owned.count());
  auto h = Kokkos::create_mirror_view(wv);  // wv itself on the host
  HostArray c;  // one buffer for every corner's part (a file-backed source reuses it)
  for (const CornerPart<D>& p : owned_corner_parts<D>(in, out, m, owned)) {
    w.get_block_into(corner_name(prefix, p.corner), p.start, p.count, c);
    // The part is (in, out, cells, 2): one (ci, co) plane at a time, run by run.
    const long run = p.run(), cells = p.part.count();
    // On the host threads, a (ci, co) plane each: the load waits on this copy.
    ufno::host_parallel_for("ufno::spectral_weights_in_place", long(in) * out, [&](int64_t plane) {
      const float* src = c.data.data() + plane * cells * 2;
      complexf* dst = &h(int(plane / out), int(plane % out), 0);
      for (std::size_t r = 0; r < p.run_at.size(); ++r, src += 2 * run)
        for (long v = 0; v < run; ++v) dst[p.run_at[r] + v] = complexf(src[2 * v], src[2 * v + 1]);
    });
  }
  Kokkos::deep_copy(wv, h);
  return wv;
}

// The same from corner arrays already in memory (weights1.. in order).
template <std::size_t D>
SpectralWeightView combine_corner_weights(int in, int out, const std::array<int, D>& m,
                                          const std::vector<HostArray>& corners,
                                          const dist::Box<D>& owned) {
  struct Corners : WeightSource {
    const std::vector<HostArray>& c;
    explicit Corners(const std::vector<HostArray>& v) : c(v) {}
    std::size_t index(const std::string& n) const {
      const std::size_t q = std::stoul(n.substr(n.rfind("weights") + 7)) - 1;
      if (q >= c.size()) throw InputError(origin(), n, "no such corner");
      return q;
    }
    bool has(const std::string& n) const override { return index(n) < c.size(); }
    HostArray get(const std::string& n) const override { return c[index(n)]; }
    std::vector<std::size_t> shape(const std::string& n) const override {
      return c[index(n)].shape;
    }
    std::string origin() const override { return "SpectralConv corner weights"; }
  };
  if (corners.size() != (std::size_t(1) << (D - 1)))
    throw std::invalid_argument("SpectralConv: " + std::to_string(corners.size()) +
                                " corner weights for " + std::to_string(1 << (D - 1)));
  return load_owned_weights<D>(Corners(corners), "c", in, out, m, owned);
}

// r[t] += x[t] w[t] over n interleaved complex values: one case's share of a block of modes,
// the mode mix's inner loop.
KOKKOS_INLINE_FUNCTION void accumulate_mode_products(float* r, const float* x, const float* wv,
                                                     long n) {
  UFNO_OMP(omp simd)
  for (long t = 0; t < n; ++t) {
    const float xr = x[2 * t], xi = x[2 * t + 1], wr = wv[2 * t], wi = wv[2 * t + 1];
    r[2 * t] += xr * wr - xi * wi;
    r[2 * t + 1] += xr * wi + xi * wr;
  }
}

// How the mode multiplies below cut their work. One iteration takes one output channel, a block
// of consecutive modes and up to `cases` cases, and reads each of its weights once for all of
// them (a pass of 8 cases reads the weights once, not 8 times): the weights are the large
// operand (in x out per mode), each case's modes a small one that stays in cache. On the host
// the mode block is several vectors long, so the loop over it vectorises; on a GPU an iteration
// is one mode (threads on neighbouring modes read the weights coalesced) with its cases'
// sums in registers.
template <class Tag>
struct ModeBlock {
  static constexpr long value = 128;  // modes per iteration
  static constexpr int cases = 8;     // cases per iteration, at most
};
template <>
struct ModeBlock<backend::Cuda> {
  static constexpr long value = 1;
  static constexpr int cases = 8;
};

// out[b, o, modes] = scale * sum_i a[b, i, modes] * w[i, o, modes] over a block of modes, each
// weight read once per ModeBlock::cases cases.
// dc_bias (out), when given, is added to mode index 0 of the block after scaling: a constant
// output field (DistributedSpectralConv::add_output_bias), in the same pass.
template <std::size_t D>
GridView<D, complexf> spectral_mix(const GridView<D, complexf>& a, const SpectralWeightView& w,
                                   float scale,
                                   const Kokkos::View<float*, DeviceSpace>& dc_bias = {}) {
  const int B = a.extent(0), I = w.extent(0), O = w.extent(1);
  long M = 1;
  for (int v : grid_extents<D>(a)) M *= v;
  if (int(a.extent(1)) != I || M != long(w.extent(2)))
    throw std::invalid_argument("spectral_mix: spectrum block " + shape_string(a) +
                                " does not match the weights");
  auto out = temporary_grid_view<D, complexf>("spec.mixed", B, O, grid_extents<D>(a));
  if (B == 0 || M == 0) return out;
  const float* xf = reinterpret_cast<const float*>(a.data());
  const float* wf = reinterpret_cast<const float*>(w.data());
  complexf* dst = out.data();
  const bool has_dc = dc_bias.size() > 0;
  auto dc = dc_bias;
  using Block = ModeBlock<backend::Default>;
  constexpr long V = Block::value;
  constexpr int NB = Block::cases;
  const long blocks = (M + V - 1) / V;
  const long groups = (B + NB - 1) / NB;
  // Modes fastest: the spectrum and the weights are both read in order.
  ufno::parallel_for(
      "ufno::spectral_mix", Kokkos::RangePolicy<ExecSpace>(0, groups * O * blocks),
      KOKKOS_LAMBDA(const int64_t idx) {
        const int64_t blk = idx % blocks, go = idx / blocks, o = go % O, b0 = (go / O) * NB;
        const long q0 = blk * V, n = M - q0 < V ? M - q0 : V;
        const int nb = B - b0 < NB ? int(B - b0) : NB;
        float acc[NB][2 * V];
        for (int c = 0; c < nb; ++c)
          for (long t = 0; t < 2 * n; ++t) acc[c][t] = 0.f;
        for (int i = 0; i < I; ++i) {
          const float* wv = wf + 2 * ((i * O + o) * M + q0);
          for (int c = 0; c < nb; ++c) {
            const float* x = xf + 2 * (((b0 + c) * I + i) * M + q0);
            accumulate_mode_products(acc[c], x, wv, n);
          }
        }
        for (int c = 0; c < nb; ++c) {
          complexf* d = dst + ((b0 + c) * O + o) * M + q0;
          for (long t = 0; t < n; ++t)
            d[t] = complexf(acc[c][2 * t] * scale, acc[c][2 * t + 1] * scale);
          if (has_dc && q0 == 0) d[0] += complexf(dc(o), 0.f);
        }
      });
  return out;
}

// n values of host memory where the device reads them: the memory itself where the device reads
// host memory, else a workspace temporary they are copied into.
template <class T>
Kokkos::View<const T*, DeviceSpace> device_view_of(const T* host, std::size_t n,
                                                   const std::string& label) {
  if constexpr (kHostTensors) {
    return Kokkos::View<const T*, DeviceSpace>(host, n);
  } else {
    auto d = temporary<Kokkos::View<T*, DeviceSpace>>(label, n);
    Kokkos::deep_copy(d,
                      Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(host, n));
    return d;
  }
}

// out[b, o, modes of one corner part] = scale * sum_i a[b, i, ...] * w[i, o, ...], with the
// part's weights as read from the file, (in, out, part cells) complex: the mode multiply of a
// layer whose weights are streamed from their source a corner at a time (no owned-box copy of
// all corners exists). `out` is (B, O, owned modes) like `a`. Returns how many weights were not
// finite or beyond `suspect` in magnitude (counted while they are read for the multiply), so a
// caller can take unchecked reads and have a suspect block checked by its source.
template <std::size_t D>
long spectral_mix_part(const GridView<D, complexf>& a, const HostArray& part_weights,
                       const CornerPart<D>& p, const GridView<D, complexf>& out, float scale,
                       float suspect) {
  const int B = a.extent(0), I = a.extent(1), O = out.extent(1);
  long M = 1;
  for (int v : grid_extents<D>(a)) M *= v;
  const long P = p.part.count(), run = p.run(), runs = long(p.run_at.size());
  if (part_weights.data.size() != std::size_t(I) * O * P * 2)
    throw std::invalid_argument("spectral_mix_part: weights of the wrong size");
  // The part's weights and run starts: on the host the read buffers themselves; on a GPU copied
  // into workspace temporaries (no device allocation on a warm pass).
  const auto w = device_view_of(reinterpret_cast<const complexf*>(part_weights.data.data()),
                                std::size_t(I) * O * P, "spectral.part_weights");
  const auto at = device_view_of(p.run_at.data(), p.run_at.size(), "spectral.part_runs");
  // The part's spectrum, compact like its weights, (B, I, part cells): the multiply below then
  // reads both in order. It is small (the weights are O times larger) and stays in cache.
  auto xs = temporary<Kokkos::View<complexf*, DeviceSpace>>("spectral.part_in", long(B) * I * P);
  const complexf* in = a.data();
  complexf* xp = xs.data();
  ufno::parallel_for(
      "ufno::spectral_part_gather", Kokkos::RangePolicy<ExecSpace>(0, long(B) * I * runs),
      KOKKOS_LAMBDA(const int64_t idx) {
        const int64_t r = idx % runs, bi = idx / runs;
        for (long t = 0; t < run; ++t) xp[bi * P + r * run + t] = in[bi * M + at(r) + t];
      });
  const float* xf = reinterpret_cast<const float*>(xp);
  const float* wf = reinterpret_cast<const float*>(w.data());
  complexf* dst = out.data();
  using Block = ModeBlock<backend::Default>;
  constexpr long V = Block::value;
  constexpr int NB = Block::cases;
  const long blocks = (P + V - 1) / V;
  const long groups = (B + NB - 1) / NB;
  return parallel_count(
      "ufno::spectral_mix_part", Kokkos::RangePolicy<ExecSpace>(0, groups * O * blocks),
      KOKKOS_LAMBDA(const int64_t idx) {
        const int64_t blk = idx % blocks, go = idx / blocks, o = go % O, b0 = (go / O) * NB;
        const long q0 = blk * V, n = P - q0 < V ? P - q0 : V;
        const int nb = B - b0 < NB ? int(B - b0) : NB;
        float acc[NB][2 * V];
        for (int c = 0; c < nb; ++c)
          for (long t = 0; t < 2 * n; ++t) acc[c][t] = 0.f;
        long bad = 0;
        for (int i = 0; i < I; ++i) {
          const float* wv = wf + 2 * ((i * O + o) * P + q0);
          if (b0 == 0) {  // the first group alone counts: every group reads the same weights
            UFNO_OMP(omp simd reduction(+ : bad))
            for (long t = 0; t < n; ++t) {
              const float wr = wv[2 * t], wi = wv[2 * t + 1];
              // Without branches, so the loop vectorises; a NaN is the value unequal to itself.
              bad += long((wr > suspect) | (-wr > suspect) | (wi > suspect) | (-wi > suspect) |
                          (wr != wr) | (wi != wi));
            }
          }
          for (int c = 0; c < nb; ++c) {
            const float* x = xf + 2 * (((b0 + c) * I + i) * P + q0);
            accumulate_mode_products(acc[c], x, wv, n);
          }
        }
        for (int c = 0; c < nb; ++c)
          for (long t = 0; t < n; ++t) {
            const long q = q0 + t;
            dst[((b0 + c) * O + o) * M + at(q / run) + q % run] =
                complexf(acc[c][2 * t] * scale, acc[c][2 * t + 1] * scale);
          }
        return bad;
      });
}

}  // namespace ufno
