#include "operators/DistributedFno4d.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/LayerTimer.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"
#include "operators/FourierLayerUpdate.hpp"
#include "operators/backend/HostMemory.hpp"

namespace ufno {

using dist::Box4;
using dist::PencilLayout;
using Extents = std::array<int, 4>;

namespace {

// This rank's block of a normaliser array, checked against the model's grid: pointwise, of the
// grid's shape, `add` (eps) added; or per report time (`time_axis` >= 0), of shape (T), spread
// over the block along the time axis, nothing added (a TimeGaussianNormalizer has no eps), every
// std (`positive`) checked > 0.
Kokkos::View<float*, DeviceSpace> normaliser_block(const WeightSource& w, const std::string& name,
                                                   const Extents& grid, const Box4& box, float add,
                                                   int time_axis, bool positive) {
  const std::vector<std::size_t> expect =
      time_axis < 0 ? std::vector<std::size_t>(grid.begin(), grid.end())
                    : std::vector<std::size_t>{std::size_t(grid[std::max(time_axis, 0)])};
  if (w.shape(name) != expect)
    throw InputError(w.origin(), name,
                     "shape " + shape_string(w.shape(name)) + " does not match " +
                         (time_axis < 0 ? "the model grid " : "one value per report time ") +
                         shape_string(expect));
  std::vector<float> v;
  if (time_axis < 0) {
    std::vector<std::size_t> start(4), count(4);
    for (int a = 0; a < 4; ++a) start[a] = box.lo[a], count[a] = box.extent(a);
    v = w.get_block(name, start, count).data;
  } else {
    const std::vector<float> per_time = w.get(name).data;
    for (float s : per_time)
      if (positive && !(s > 0))
        throw InputError(w.origin(), name,
                         "a per-time std must be positive at every report time (no eps)");
    const Extents e = box.extents();
    v.resize(std::size_t(e[0]) * e[1] * e[2] * e[3]);
    std::size_t n = 0;
    for (int a = 0; a < e[0]; ++a)
      for (int b = 0; b < e[1]; ++b)
        for (int c = 0; c < e[2]; ++c)
          for (int d = 0; d < e[3]; ++d, ++n) {
            const std::array<int, 4> at{a, b, c, d};
            v[n] = per_time[box.lo[time_axis] + at[time_axis]];
          }
  }
  Kokkos::View<float*, DeviceSpace> d("fno4d.normaliser", v.size());
  auto m = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) m(i) = v[i] + add;
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
  // Each rank's padded block holds the grid's cells in its interior (the block's part of
  // [P, P + n)); the interiors, moved back by P, tile the grid. Padding gathers each rank's
  // interior of the channels-last input (T x C flattened into one axis: T is never split), and
  // the lift writes the interior of the padded block (nothing outside the interior's columns is
  // zeroed: the first layer's update reads only them); the head runs on the interior
  // and the crop moves its one-channel output to the unpadded blocks.
  std::vector<Box4> interiors, interiors_cl;
  for (const Box4& b : padded_.boxes()) {
    Box4 i = b.shifted(minus).intersect(dist::domain_box(n));
    if (i.empty()) i = Box4{};
    interiors.push_back(i);
    Box4 cl = i;
    cl.hi[3] = i.empty() ? 0 : i.hi[3] * s.in_channels;  // [0, T C) when not empty
    interiors_cl.push_back(cl);
  }
  interiors_ = PencilLayout<4>(n, interiors);
  Extents n_cl = n;
  n_cl[3] *= s.in_channels;
  std::vector<Box4> blocks_cl;
  for (const Box4& b : unpadded_.boxes()) {
    Box4 cl = b;
    cl.lo[3] *= s.in_channels;
    cl.hi[3] *= s.in_channels;
    blocks_cl.push_back(cl);
  }
  gather_input_ = std::make_unique<dist::Repartition<float, 4>>(
      grid.comm(), PencilLayout<4>(n_cl, blocks_cl), PencilLayout<4>(n_cl, interiors_cl), alg);
  crop_ = std::make_unique<dist::Repartition<float, 4>>(grid.comm(), interiors_, unpadded_, alg);
  const int c = s.width;
  fc0_ = Linear::load(w, Fno4dSpec::key("fc0"), s.in_channels, c);
  for (int k = 0; k < s.layers; ++k) {
    conv_.push_back(DistributedSpectralConv<4>::without_weights(grid, np, c, c, s.modes, alg));
    // Read per layer: only the shapes now (a value that is not finite is refused when the layer
    // reads it, before any output exists).
    if (per_layer_source_)
      conv_.back().stream_weights_from(w, Fno4dSpec::key("conv", k));
    else
      conv_.back().load_weights(w, Fno4dSpec::key("conv", k));
    w_.push_back(Linear::load(w, Fno4dSpec::key("w", k), c, c, /*conv1d=*/true));
    // w_k's bias rides on the spectral layer's constant mode (see DistributedNet3d).
    conv_.back().add_output_bias(w_.back().release_bias());
  }
  if (std::any_of(s.padding.begin(), s.padding.end(), [](int p) { return p > 0; })) {
    conv_[0].add_box_plan(grid, s.padding, n, alg);
    // The last layer computes only the interior when its box plan's blocks are the interiors
    // x holds (always on one rank; the symmetric padding makes them so on many grids).
    const int last = s.layers - 1;
    if (last > 0 && interiors_.boxes() == unpadded_.boxes())
      conv_[last].add_box_plan(grid, s.padding, n, alg);
    to_box_ =
        std::make_unique<dist::Repartition<float, 4>>(grid.comm(), interiors_, unpadded_, alg);
  }
  fc1_ = Linear::load(w, Fno4dSpec::key("fc1"), c, s.hidden);
  fc2_ = Linear::load(w, Fno4dSpec::key("fc2"), s.hidden, 1);
  const Box4& mine = unpadded_.box(rank_);
  const float eps = float(s.normalizer_eps);
  // Pointwise normalisers add eps to std; per-time ones (TimeGaussianNormalizer) add nothing.
  const int in_t = s.input_per_time ? s.time_axis() : -1;
  const int out_t = s.output_per_time ? s.time_axis() : -1;
  if (s.input_normalizer) {  // encoded as the lift reads it: over this rank's interior
    const Box4& ib = interiors_.box(rank_);
    in_mean_ = normaliser_block(w, "input_normalizer.mean", n, ib, 0.f, in_t, false);
    in_scale_ =
        normaliser_block(w, "input_normalizer.std", n, ib, in_t < 0 ? eps : 0.f, in_t, true);
  }
  if (s.output_normalizer) {
    out_mean_ = normaliser_block(w, "output_normalizer.mean", n, mine, 0.f, out_t, false);
    out_scale_ =
        normaliser_block(w, "output_normalizer.std", n, mine, out_t < 0 ? eps : 0.f, out_t, true);
  }
  // The lift and the head copy the interior's column runs of every row: on the device once.
  if (const Box4 ib = interior_in_block(); !ib.empty())
    interior_runs_ = dist::device_column_runs<4>(padded_.box(rank_).extents(), ib);
}

// The interior of this rank's padded block, in the block's own coordinates.
Box4 DistributedFno4d::interior_in_block() const {
  Box4 i = interiors_.box(rank_);
  if (i.empty()) return Box4{};
  Extents to_block{};
  for (int a = 0; a < 4; ++a) to_block[a] = spec_.padding[a] - padded_.box(rank_).lo[a];
  return i.shifted(to_block);
}

DistributedFno4d::Real DistributedFno4d::gather_interior(const Real& x) const {
  const Extents e = unpadded_.box(rank_).extents();
  const int B = x.extent(0), C = spec_.in_channels;
  if (int(x.extent(1)) != e[0] || int(x.extent(2)) != e[1] || int(x.extent(3)) != e[2] ||
      int(x.extent(4)) != e[3] || int(x.extent(5)) != C)
    throw std::invalid_argument("DistributedFno4d: input block " + shape_string(x) +
                                " does not match this rank's block " + unpadded_.box(rank_).str() +
                                " x " + std::to_string(C) + " channels");
  // This rank's interior of the channels-last input, (B, 1, i0, i1, i2, T C): the input
  // itself when the interior is the rank's own block (always on one rank).
  Extents ecl = e;
  ecl[3] *= C;
  Real flat(x.data(), B, 1, ecl[0], ecl[1], ecl[2], ecl[3]);
  return gather_input_->apply(flat);
}

DistributedFno4d::Real DistributedFno4d::lift(const Real& x, Real* box_out) const {
  // x: (B, a1, a2, a3, t, C) on this rank's unpadded block. Returns the padded block
  // (B, W, padded extents) whose interior holds fc0 of the (encoded) input and whose interior
  // columns are zero in the T padding; the rest of the block is left unset.
  const int B = x.extent(0), C = spec_.in_channels, W = spec_.width;
  Real in = gather_interior(x);
  const Extents pe = padded_.box(rank_).extents();
  Real h = temporary_grid_view<4>("fno4d.padded", B, W, pe);
  const Box4 ib = interior_in_block();
  const Extents ie = ib.extents();
  if (box_out) *box_out = temporary_grid_view<4>("fno4d.interior", B, W, ie);
  if (ib.empty()) return h;
  const long row = long(ie[1]) * ie[2] * ie[3];  // voxels of one interior A1 row
  const int R = rows_per_step(ie[0]);
  const long step = long(R) * row;  // voxels of the rows taken at a time
  auto cf = temporary<Kokkos::View<float*, DeviceSpace>>("fno4d.cf", long(C) * step);
  auto lifted = temporary<Kokkos::View<float*, DeviceSpace>>("fno4d.lifted", long(W) * step);
  const dist::DeviceColumnRuns& runs = interior_runs_;
  const bool encode = in_mean_.size() > 0;
  auto mean = in_mean_, scale = in_scale_;
  // The T padding of the interior's columns, which the first layer's w_k reads with them.
  const int T0 = ib.lo[3], TI = ie[3], TP = pe[3] - ie[3];
  const long block_row = long(pe[1]) * pe[2] * pe[3], plane = long(pe[0]) * block_row;
  const auto start = runs.start;
  const long len = runs.length, nruns = long(start.size()), P3 = pe[3];
  for (int b = 0; b < B; ++b)
    for (int r = 0; r < ie[0]; r += R) {
      // Rows [r, r + n): channels first (the last channel encoded), fc0, into the block.
      const int n = std::min(R, ie[0] - r);
      const long vox = long(n) * row;
      const float* src = in.data() + (long(b) * ie[0] + r) * row * C;
      float* c = cf.data();
      const long v0 = long(r) * row;  // the rows' first voxel in the interior (= normaliser) block
      ufno::parallel_runs(
          "ufno::fno4d_channels_first", vox, C,
          KOKKOS_LAMBDA(const int64_t v, int64_t c0, int64_t c1) {
            for (int64_t ch = c0; ch < c1; ++ch) {
              float val = src[v * C + ch];
              if (encode && ch == C - 1) val = (val - mean(v0 + v)) / scale(v0 + v);
              c[ch * vox + v] = val;
            }
          });
      fc0_.apply_columns(cf.data(), vox, lifted.data(), vox, vox, false, Activation::None);
      if (box_out) {  // the rows into the interior tensor too
        const long box_plane = long(ie[0]) * row;
        float* dst = box_out->data() + long(b) * W * box_plane + long(r) * row;
        const float* l = lifted.data();
        ufno::parallel_for(
            "ufno::fno4d_interior_row", Kokkos::RangePolicy<ExecSpace>(0, long(W) * vox),
            KOKKOS_LAMBDA(const int64_t i) { dst[(i / vox) * box_plane + i % vox] = l[i]; });
      }
      copy_interior_rows(lifted.data(), h, b, ib, runs, r, n, /*into_block=*/true);
      if (TP == 0) continue;
      float* first = h.data() + long(b) * W * plane + long(ib.lo[0] + r) * block_row;
      ufno::parallel_runs(
          "ufno::fno4d_t_padding", long(W) * n * nruns * len, TP,
          KOKKOS_LAMBDA(const int64_t i, int64_t t0, int64_t t1) {
            const int64_t k = i % len, q = i / len, run = q % nruns, cr = q / nruns;  // c n + row
            float* col = first + (cr / n) * plane + (cr % n) * block_row + (start(run) + k) * P3;
            for (int64_t t = t0; t < t1; ++t) col[t < T0 ? t : t + TI] = 0.f;
          });
    }
  return h;
}

int DistributedFno4d::rows_per_step(int rows) const {
  return execution_plan().streams_rows ? 1 : std::max(rows, 1);
}

void DistributedFno4d::copy_interior_rows(float* compact, const Real& h, int b, const Box4& ib,
                                          const dist::DeviceColumnRuns& runs, int r, int R,
                                          bool into_block) const {
  // compact: (channels, R, i1, i2, T) of interior rows [r, r + R); h: (B, channels, padded block).
  const int Wc = h.extent(1);
  const long P0 = h.extent(2), P1 = h.extent(3), P2 = h.extent(4), P3 = h.extent(5);
  const long plane = P0 * P1 * P2 * P3;  // one channel of one case
  float* row = h.data() + long(b) * Wc * plane + (ib.lo[0] + r) * P1 * P2 * P3;
  dist::copy_column_runs<float>(row, plane, P1 * P2 * P3, P3, ib.lo[3], compact, runs, Wc, R,
                                ib.extent(3), /*to_compact=*/!into_block);
}

DistributedFno4d::Real DistributedFno4d::head(const Real& h) const {
  // fc1, GELU, fc2 on the interior of the padded block, rows_per_step() A1 rows at a time, into
  // the interior's one-channel output (B, 1, interior extents).
  const Box4 ib = interior_in_block();
  const int B = h.extent(0), W = spec_.width;
  Real y = temporary_grid_view<4>("fno4d.head", B, 1, interiors_.box(rank_).extents());
  if (ib.empty()) return y;
  const Extents ie = ib.extents();
  const long row = long(ie[1]) * ie[2] * ie[3];
  const int R = rows_per_step(ie[0]);
  // The hidden activations a chunk at a time: cache-sized on the streaming plan, every voxel of
  // the rows at once on the whole-tensor plan.
  const long chunk = execution_plan().cache_blocked ? 8192 : long(R) * row;
  auto rows = temporary<Kokkos::View<float*, DeviceSpace>>("fno4d.head_rows", long(W) * R * row);
  if (grid_extents<4>(h) != padded_.box(rank_).extents())
    throw std::invalid_argument("DistributedFno4d::head: the block " + shape_string(h) +
                                " is not this rank's padded block");
  const dist::DeviceColumnRuns& runs = interior_runs_;
  auto hidden =
      temporary<Kokkos::View<float*, DeviceSpace>>("fno4d.hidden", long(spec_.hidden) * chunk);
  for (int b = 0; b < B; ++b)
    for (int r = 0; r < ie[0]; r += R) {
      const int n = std::min(R, ie[0] - r);
      const long vox = long(n) * row;
      copy_interior_rows(rows.data(), h, b, ib, runs, r, n, /*into_block=*/false);
      float* out = y.data() + (long(b) * ie[0] + r) * row;
      for (long v = 0; v < vox; v += chunk) {
        const long cols = std::min(chunk, vox - v);
        fc1_.apply_columns(rows.data() + v, vox, hidden.data(), chunk, cols, false,
                           Activation::GELU);
        fc2_.apply_columns(hidden.data(), chunk, out + v, vox, cols, false, Activation::None);
      }
    }
  return y;
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

void DistributedFno4d::fourier_layer(std::size_t k, const Real& x, Real box) {
  using Scope = LayerTimer::Scope;
  const bool last = int(k) + 1 == spec_.layers;
  const Activation act = last ? Activation::None : Activation::GELU;
  // As in the row groups: the first layer's x is unset outside the interior, and only the
  // interior of the last layer's output is kept.
  const Box4 inside = interior_in_block();
  GridView<4, complexf> t_modes;
  if (last && k > 0 && conv_[k].box_fft()) {  // the interior alone, transformed and updated
    {
      Scope t("spectral conv");
      t_modes = conv_[k].forward_t_modes_to_box(x);
    }
    Scope t("T inverse + w, fused, interior only");
    fourier_layer_update_box<4>(x, t_modes, *conv_[k].box_fft()->pruned_t(), w_[k], act, inside,
                                interior_runs_);
    return;
  }
  {
    Scope t("spectral conv");
    t_modes = box.data() ? conv_[k].forward_t_modes_of_box(box) : conv_[k].forward_t_modes(x);
    if (box.data()) {
      box = Real();
      backend::return_freed_host_memory();
    }
  }
  Scope t("T inverse + w + gelu, fused");
  const Support support = !to_box_ ? Support::All
                          : k == 0 ? Support::InputInside
                          : last   ? Support::OutputInside
                                   : Support::All;
  fourier_layer_update<4>(x, t_modes, *conv_[k].fft().pruned_t(), w_[k], act, support, inside,
                          interior_runs_);
}

void DistributedFno4d::fourier_layer_in_row_groups(std::size_t k, const Real& x, Real box) {
  using Scope = LayerTimer::Scope;
  const bool last = int(k) + 1 == spec_.layers;
  const Activation act = last ? Activation::None : Activation::GELU;
  // The padding is known: the first layer's input is zero outside the interior (its spectral
  // branch transforms the interior alone; x is not even zeroed there), and the last layer's
  // output is cropped to it. Its first-axis rows are the same on every rank (the grid leaves A1
  // whole), so every rank asks for the same row groups.
  const Box4 inside = interior_in_block();
  GridView<4, complexf> first;
  if (last && k > 0 && conv_[k].box_fft()) {  // the interior alone, its rows counted from 0
    {
      Scope t("spectral conv");
      first = conv_[k].forward_first_axis_modes_to_box(x);
    }
    Scope t("T inverse + w + gelu, fused, in row groups");
    const auto& fft = *conv_[k].box_fft();
    constexpr int kRows = 4;
    for (int b = 0; b < int(x.extent(0)); ++b)
      for (int r0 = 0; r0 < spec_.grid[0]; r0 += kRows) {
        const int rows = std::min(kRows, spec_.grid[0] - r0);
        fourier_layer_update_box_rows<4>(x, b, r0, fft.t_modes_of_rows(first, b, r0, rows),
                                         *fft.pruned_t(), w_[k], act, inside);
      }
    return;
  }
  {
    Scope t("spectral conv");
    first = box.data() ? conv_[k].forward_first_axis_modes_of_box(box)
                       : conv_[k].forward_first_axis_modes(x);
    if (box.data()) {  // back to the kernel before the update touches all of x
      box = Real();
      backend::return_freed_host_memory();
    }
  }
  Scope t("T inverse + w + gelu, fused, in row groups");
  const Support support = k == 0 ? Support::InputInside
                          : last ? Support::OutputInside
                                 : Support::All;
  const int X = x.extent(2);
  const int row_lo = last ? spec_.padding[0] : 0;
  const int row_hi = last ? spec_.padding[0] + spec_.grid[0] : X;
  const auto& fft = conv_[k].fft();
  constexpr int kRows = 4;
  for (int b = 0; b < int(x.extent(0)); ++b)
    for (int r0 = row_lo; r0 < row_hi; r0 += kRows) {
      const int rows = std::min(kRows, row_hi - r0);
      fourier_layer_update_rows<4>(x, b, r0, fft.t_modes_of_rows(first, b, r0, rows),
                                   *fft.pruned_t(), w_[k], act, support, inside);
    }
}

DistributedFno4d::Real DistributedFno4d::forward_raw(const Real& input) {
  Real y = make_grid_view<4>("fno4d.out", input.extent(0), 1, unpadded_.box(rank_).extents(),
                             /*zero=*/false);
  forward_raw(input, y);
  return y;
}

void DistributedFno4d::forward_raw(const Real& input, const Real& output) {
  if (output.extent(0) != input.extent(0) || output.extent(1) != 1 ||
      grid_extents<4>(output) != unpadded_.box(rank_).extents())
    throw std::invalid_argument("DistributedFno4d: output " + shape_string(output) +
                                " is not (B, 1) and this rank's block " +
                                unpadded_.box(rank_).str());
  Workspace::Pass pass(*workspace_, workspace_key_ + shape_string(input));
  using Scope = LayerTimer::Scope;
  // The first layer's input padded, set in the interior's columns only (the first layer's
  // update reads nothing else: Support::InputInside), and its interior alone, moved to the first
  // layer's box plan, when the model pads.
  Real x, box;
  {
    Scope t("fc0 + pad");
    Real interior;
    x = lift(input, to_box_ ? &interior : nullptr);
    if (to_box_) box = to_box_->apply(interior);
  }
  for (std::size_t k = 0; k < conv_.size(); ++k) {
    // The first layer takes the interior over (and frees it once transformed).
    if (conv_[k].fft().streams_rows())
      fourier_layer_in_row_groups(k, x, std::move(box));
    else
      fourier_layer(k, x, std::move(box));
    box = Real();
  }
  Scope t("fc1 + fc2 + crop");
  Real y = head(x);
  x = Real();
  crop_->apply(y, output);
}

DistributedFno4d::Real DistributedFno4d::forward(const Real& input) {
  Real y = forward_raw(input);
  if (out_mean_.size()) normalise(y, out_mean_, out_scale_, /*encode=*/false, 0);
  return y;
}

void DistributedFno4d::forward(const Real& input, const Real& output) {
  forward_raw(input, output);
  if (out_mean_.size()) normalise(output, out_mean_, out_scale_, /*encode=*/false, 0);
}

}  // namespace ufno
