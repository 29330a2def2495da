#include "operators/DistributedFno4d.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/Parallel.hpp"
#include "operators/FourierLayerUpdate.hpp"

namespace ufno {

using dist::Box4;
using dist::PencilLayout;
using Extents = std::array<int, 4>;

namespace {

// Each rank's box moved by d (empty boxes stay empty).
PencilLayout<4> shifted(const PencilLayout<4>& l, const Extents& global, const Extents& d) {
  std::vector<Box4> boxes;
  for (const Box4& b : l.boxes()) boxes.push_back(b.empty() ? Box4{} : b.shifted(d));
  return PencilLayout<4>(global, boxes);
}

// This rank's block of a grid-sized normaliser array, checked against the model's grid.
Kokkos::View<float*, DeviceSpace> normaliser_block(const WeightSource& w, const std::string& name,
                                                   const Extents& grid, const Box4& box,
                                                   float add) {
  const std::vector<std::size_t> expect(grid.begin(), grid.end());
  if (w.shape(name) != expect)
    throw InputError(w.origin(), name,
                     "shape " + shape_string(w.shape(name)) + " does not match the model grid " +
                         shape_string(expect));
  std::vector<std::size_t> start(4), count(4);
  for (int a = 0; a < 4; ++a) start[a] = box.lo[a], count[a] = box.extent(a);
  HostArray h = w.get_block(name, start, count);
  Kokkos::View<float*, DeviceSpace> d("fno4d.normaliser", h.data.size());
  auto m = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < h.data.size(); ++i) m(i) = h.data[i] + add;
  Kokkos::deep_copy(d, m);
  return d;
}

}  // namespace

DistributedFno4d::DistributedFno4d(const Fno4dSpec& s, const WeightSource& w,
                                   const dist::ProcessGrid& grid, dist::ExchangeAlgorithm alg,
                                   WeightResidency residency)
    : spec_(s),
      rank_(grid.rank()),
      per_layer_source_(residency == WeightResidency::PerLayer ? &w : nullptr) {
  const Extents parts = grid.parts_of<4>();
  if (parts[3] != 1) throw std::invalid_argument("DistributedFno4d: the grid must not split T");
  const Extents n = s.grid, np = s.padded_grid();
  Extents minus{}, plus{};
  for (int a = 0; a < 4; ++a) minus[a] = -s.padding[a], plus[a] = s.padding[a];
  unpadded_ = PencilLayout<4>::block(n, parts);
  padded_ = PencilLayout<4>::block(np, parts);
  // Padding: each rank gathers its padded block, seen in unpadded coordinates; what lies outside
  // the grid is zero. Crop: each rank gathers its unpadded block from the padded blocks.
  pad_ = std::make_unique<dist::Repartition<float, 4>>(grid.comm(), unpadded_,
                                                       shifted(padded_, n, minus), alg);
  crop_ = std::make_unique<dist::Repartition<float, 4>>(grid.comm(), padded_,
                                                        shifted(unpadded_, np, plus), alg);
  const int c = s.width;
  fc0_ = Linear::load(w, Fno4dSpec::key("fc0"), s.in_channels, c);
  for (int k = 0; k < s.layers; ++k) {
    conv_.push_back(DistributedSpectralConv<4>::without_weights(grid, np, c, c, s.modes, alg));
    // Read per layer: only the shapes now (a value that is not finite is refused when the layer
    // reads it, before any output exists).
    if (per_layer_source_)
      check_corner_shapes<4>(w, Fno4dSpec::key("conv", k), c, c, s.modes);
    else
      conv_.back().load_weights(w, Fno4dSpec::key("conv", k));
    w_.push_back(Linear::load(w, Fno4dSpec::key("w", k), c, c, /*conv1d=*/true));
    // w_k's bias rides on the spectral layer's constant mode (see DistributedNet3d).
    conv_.back().add_output_bias(w_.back().release_bias());
  }
  fc1_ = Linear::load(w, Fno4dSpec::key("fc1"), c, s.hidden);
  fc2_ = Linear::load(w, Fno4dSpec::key("fc2"), s.hidden, 1);
  const Box4& mine = unpadded_.box(rank_);
  const float eps = float(s.normalizer_eps);
  if (s.input_normalizer) {
    in_mean_ = normaliser_block(w, "input_normalizer.mean", n, mine, 0.f);
    in_scale_ = normaliser_block(w, "input_normalizer.std", n, mine, eps);
  }
  if (s.output_normalizer) {
    out_mean_ = normaliser_block(w, "output_normalizer.mean", n, mine, 0.f);
    out_scale_ = normaliser_block(w, "output_normalizer.std", n, mine, eps);
  }
}

DistributedFno4d::Real DistributedFno4d::lift(const Real& x) const {
  // (B, a1, a2, a3, t, C) -> (B, C, a1, a2, a3, t), the last channel encoded on the way.
  const Extents e = unpadded_.box(rank_).extents();
  const int B = x.extent(0), C = spec_.in_channels;
  const long V = long(e[0]) * e[1] * e[2] * e[3];
  if (int(x.extent(1)) != e[0] || int(x.extent(2)) != e[1] || int(x.extent(3)) != e[2] ||
      int(x.extent(4)) != e[3] || int(x.extent(5)) != C)
    throw std::invalid_argument("DistributedFno4d: input block " + shape_string(x) +
                                " does not match this rank's block " +
                                unpadded_.box(rank_).str() + " x " + std::to_string(C) +
                                " channels");
  Real cf = make_grid_view<4>("fno4d.channels_first", B, C, e, false);
  const float* src = x.data();
  float* dst = cf.data();
  const bool encode = in_mean_.size() > 0;
  auto mean = in_mean_, scale = in_scale_;
  ufno::parallel_for(
      "ufno::fno4d_channels_first", Kokkos::RangePolicy<ExecSpace>(0, long(B) * V),
      KOKKOS_LAMBDA(const int64_t i) {
        const int64_t b = i / V, v = i % V;
        for (int ch = 0; ch < C; ++ch) {
          float val = src[i * C + ch];
          if (encode && ch == C - 1) val = (val - mean(v)) / scale(v);
          dst[(b * C + ch) * V + v] = val;
        }
      });
  Real h = make_grid_view<4>("fno4d.lifted", B, spec_.width, e, false);
  for (int b = 0; b < B; ++b)
    fc0_.apply_columns(cf.data() + long(b) * C * V, V, h.data() + long(b) * spec_.width * V, V, V,
                       false, Activation::None);
  return h;
}

void DistributedFno4d::normalise(const Real& y, const Kokkos::View<float*, DeviceSpace>& mean,
                                 const Kokkos::View<float*, DeviceSpace>& scale, bool encode,
                                 int) const {
  // y (B, 1, block): decode y * (std + eps) + mean voxel by voxel (encode is the inverse).
  const long V = long(mean.size());
  float* p = y.data();
  ufno::parallel_for(
      "ufno::fno4d_normalise", Kokkos::RangePolicy<ExecSpace>(0, long(y.size())),
      KOKKOS_LAMBDA(const int64_t i) {
        const int64_t v = i % V;
        p[i] = encode ? (p[i] - mean(v)) / scale(v) : p[i] * scale(v) + mean(v);
      });
}

template <class F>
auto DistributedFno4d::with_layer_weights(std::size_t k, F&& run) {
  if (per_layer_source_) {
    LayerTimer::Scope t("  spectral weights read");
    conv_[k].load_weights(*per_layer_source_, Fno4dSpec::key("conv", int(k)));
  }
  auto r = run();
  if (per_layer_source_) conv_[k].release_weights();
  return r;
}

void DistributedFno4d::fourier_layer(std::size_t k, const Real& x) {
  using Scope = LayerTimer::Scope;
  const Activation act = int(k) + 1 < spec_.layers ? Activation::GELU : Activation::None;
  GridView<4, complexf> t_modes;
  {
    Scope t("spectral conv");
    t_modes = with_layer_weights(k, [&] { return conv_[k].forward_t_modes(x); });
  }
  Scope t("T inverse + w + gelu, fused");
  fourier_layer_update<4>(x, t_modes, *conv_[k].fft().pruned_t(), w_[k], Real(), act);
}

void DistributedFno4d::fourier_layer_in_row_groups(std::size_t k, const Real& x) {
  using Scope = LayerTimer::Scope;
  const Activation act = int(k) + 1 < spec_.layers ? Activation::GELU : Activation::None;
  GridView<4, complexf> first;
  {
    Scope t("spectral conv");
    first = with_layer_weights(k, [&] { return conv_[k].forward_first_axis_modes(x); });
  }
  Scope t("T inverse + w + gelu, fused, in row groups");
  const auto& fft = conv_[k].fft();
  constexpr int kRows = 4;
  const int X = x.extent(2);
  for (int b = 0; b < int(x.extent(0)); ++b)
    for (int r0 = 0; r0 < X; r0 += kRows) {
      const int rows = std::min(kRows, X - r0);
      fourier_layer_update_rows<4>(x, b, r0, fft.t_modes_of_rows(first, b, r0, rows),
                                   *fft.pruned_t(), w_[k], Real(), act);
    }
}

DistributedFno4d::Real DistributedFno4d::forward_raw(const Real& input) {
  using Scope = LayerTimer::Scope;
  Real x;
  {
    Scope t("fc0 + pad");
    x = pad_->apply(lift(input));
  }
  for (std::size_t k = 0; k < conv_.size(); ++k) {
    if (conv_[k].fft().streams_rows())
      fourier_layer_in_row_groups(k, x);
    else
      fourier_layer(k, x);
  }
  Scope t("crop + fc1 + fc2");
  Real cropped = crop_->apply(x);
  x = Real();
  return pointwise_mlp(cropped, fc1_, Activation::GELU, fc2_);
}

DistributedFno4d::Real DistributedFno4d::forward(const Real& input) {
  Real y = forward_raw(input);
  if (out_mean_.size()) normalise(y, out_mean_, out_scale_, /*encode=*/false, 0);
  return y;
}

}  // namespace ufno
