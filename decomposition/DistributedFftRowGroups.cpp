// DistributedFft on a grid that leaves the first axis whole (one rank, or PA = 1), truncated
// R2C: every stage but the first axis's in groups of first-axis rows. The first axis's transform
// needs every row, but only after the other axes have shrunk a row from its real cells to its
// kept modes (208 x 32 -> 20 x 10 at the U-FNO's paper size), so the forward transform never
// holds the T-mode tensor of the whole block, and the inverse can hand out the T modes of a few
// rows at a time to a caller that finishes those rows (FourierLayerUpdate). The repartitions
// between the T, ..., second-axis stages move whole rows, so they run per row group too, on
// layouts whose first axis is the group's R rows; the one into the first axis's stage is the
// identity when the first axis is not split.
#include <algorithm>
#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"
#include "decomposition/DistributedFft.hpp"

namespace ufno::dist {

namespace {
// Rows per group: up to 8, fewer when a row's T-mode form is large, so that the two group
// buffers stay a small part of the activation (a 4-D FNO's padded LGR1 row is 9 MB at width 28)
// and fewer fresh pages are touched; the U-FNO's rows are far smaller.
constexpr int kMaxRowsPerGroup = 8;
constexpr long kGroupBytes = 24L << 20;

template <std::size_t D>
long product(const std::array<int, D>& e, std::size_t from, std::size_t to) {
  long p = 1;
  for (std::size_t a = from; a < to; ++a) p *= e[a];
  return p;
}

// Copies `rows` runs of `run` values per channel: run (c, r) from src + (c * src_rows + src_r0 +
// r) * run to dst + (c * dst_rows + dst_r0 + r) * run.
void copy_rows(const complexf* src, long src_rows, long src_r0, complexf* dst, long dst_rows,
               long dst_r0, long channels, long rows, long run, const char* label) {
  ufno::parallel_runs(
      label, channels * rows, run, KOKKOS_LAMBDA(const int64_t i, int64_t v0, int64_t v1) {
        const int64_t c = i / rows, r = i % rows;
        const complexf* s = src + (c * src_rows + src_r0 + r) * run;
        complexf* d = dst + (c * dst_rows + dst_r0 + r) * run;
        for (int64_t v = v0; v < v1; ++v) d[v] = s[v];
      });
}
}  // namespace

template <std::size_t D>
const typename DistributedFft<D>::RowGroupPlan& DistributedFft<D>::row_plan(int R) const {
  auto it = row_plans_.find(R);
  if (it != row_plans_.end()) return it->second;
  RowGroupPlan p;
  for (std::size_t a = 1; a < D; ++a) {
    Extents before = stage_[a].before.global(), after = stage_[a].after.global(), parts{};
    before[0] = after[0] = R;
    for (std::size_t b = 0, g = 0; b < D; ++b) parts[b] = b == a ? 1 : parts_[g++];
    p.before[a] = Layout::block(before, parts);
    p.after[a] = Layout::block(after, parts);
  }
  for (std::size_t a = 2; a < D; ++a) {
    p.to_next[a] =
        std::make_unique<Repartition<complexf, D>>(comm_, p.after[a], p.before[a - 1], alg_);
    p.from_next[a] =
        std::make_unique<Repartition<complexf, D>>(comm_, p.before[a - 1], p.after[a], alg_);
  }
  return row_plans_.emplace(R, std::move(p)).first->second;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::forward_in_row_groups(const Real& x) {
  const int nb = x.extent(0), nc = x.extent(1), X = n_[0], KT = kn_[D - 1];
  const Extents e = real_layout().box(rank_).extents();  // (n_0, local extents, n_T)
  const long row_cells = product(e, 1, D), mid = product(e, 1, D - 1);
  const Extents ef = stage_[0].before.box(rank_).extents();  // (n_0, local kept modes)
  const long row_modes = product(ef, 1, D);
  Complex first = temporary_grid_view<D, complexf>("dfft.rows", nb, nc, ef);
  {
    LayerTimer::Scope t("  fft pruned axes in row groups (gemm)");
    const long row_bytes =
        long(nc) * row_plan(1).after[D - 1].box(rank_).count() * long(sizeof(complexf));
    const int G = int(
        std::clamp(kGroupBytes / std::max(1L, row_bytes), 1L, long(std::min(kMaxRowsPerGroup, X))));
    // Two group buffers for the whole call, used in turn: pruned axes only shrink a group, so its
    // T-mode form is the largest. (A repartition that moves data returns a tensor of its own.)
    long group_size = 0;  // the largest local group block of any stage
    for (std::size_t a = 1; a < D; ++a)
      for (const Layout* l : {&row_plan(G).before[a], &row_plan(G).after[a]})
        group_size = std::max(group_size, long(nc) * l->box(rank_).count());
    using Buffer = Kokkos::View<complexf*, DeviceSpace>;
    Buffer buf[2] = {temporary<Buffer>("dfft.group_a", group_size),
                     temporary<Buffer>("dfft.group_b", group_size)};
    auto in_buffer = [&](int which, const Extents& e) {
      return grid_view_on<D>(buf[which].data(), 1, nc, e);
    };
    for (int b = 0; b < nb; ++b)
      for (int r0 = 0; r0 < X; r0 += G) {
        const int R = std::min(G, X - r0);
        complexf* dst = first.data() + long(b) * nc * X * row_modes;
        const RowGroupPlan& plan = row_plan(R);
        // T, every channel's rows [r0, r0 + R) at once -> (1, nc, R, local extents, KT).
        Complex g = in_buffer(0, plan.after[D - 1].box(rank_).extents());
        t_pruned_->forward_batched(x.data() + (long(b) * nc * X + r0) * row_cells,
                                   long(X) * row_cells, g.data(), long(R) * mid * KT, nc,
                                   long(R) * mid);
        int which = 0;
        for (std::size_t a = D - 2; a >= 1; --a) {  // the middle axes, last to second
          g = plan.to_next[a + 1]->apply(g);
          const Extents eb = grid_extents<D>(g);
          which = g.data() == buf[0].data() ? 1 : 0;  // the buffer g does not use
          Complex next = in_buffer(which, plan.after[a].box(rank_).extents());
          stage_[a].pruned->forward(g.data(), next.data(), long(nc) * product(eb, 0, a),
                                    product(eb, a + 1, D));
          g = next;
        }
        copy_rows(g.data(), R, 0, dst, X, r0, nc, R, row_modes, "ufno::dfft_rows_scatter");
      }
  }
  LayerTimer::Scope t("  fft pruned axes (gemm)");
  Complex out = temporary_grid_view<D, complexf>("dfft.spectrum", nb, nc,
                                                 spectral_layout().box(rank_).extents());
  stage_[0].pruned->forward(first.data(), out.data(), long(nb) * nc, row_modes);
  return out;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::backward_first_axis(const Complex& s) {
  if (!streams_rows())
    throw std::logic_error(
        "DistributedFft: backward_first_axis needs a truncated R2C plan on a grid that leaves the "
        "first axis whole");
  check_block(spectral_layout(), grid_extents<D>(s), "spectral");
  LayerTimer::Scope t("  fft pruned axes (gemm)");
  const int nb = s.extent(0), nc = s.extent(1);
  const Extents ef = stage_[0].before.box(rank_).extents();
  Complex first = temporary_grid_view<D, complexf>("idfft.rows", nb, nc, ef);
  stage_[0].pruned->backward(s.data(), first.data(), long(nb) * nc, product(ef, 1, D));
  return first;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::t_modes_of_rows(const Complex& first, int b,
                                                                       int r0, int R) const {
  const int nc = first.extent(1), X = n_[0];
  const Extents ef = stage_[0].before.box(rank_).extents();
  if (!streams_rows() || b < 0 || b >= int(first.extent(0)) || grid_extents<D>(first) != ef ||
      r0 < 0 || R < 1 || r0 + R > X)
    throw std::invalid_argument("DistributedFft: t_modes_of_rows: rows or first-axis block " +
                                shape_string(first) + " out of range");
  LayerTimer::Scope t("  fft pruned axes in row groups (gemm)");
  const long row_modes = product(ef, 1, D);
  const RowGroupPlan& plan = row_plan(R);
  Complex g =
      temporary_grid_view<D, complexf>("idfft.group", 1, nc, plan.after[1].box(rank_).extents());
  copy_rows(first.data() + long(b) * nc * X * row_modes, X, r0, g.data(), R, 0, nc, R, row_modes,
            "ufno::idfft_rows_gather");
  for (std::size_t a = 1; a + 1 < D; ++a) {  // the middle axes, second to last
    const Extents ea = grid_extents<D>(g);
    Complex next =
        temporary_grid_view<D, complexf>("idfft.group", 1, nc, plan.before[a].box(rank_).extents());
    stage_[a].pruned->backward(g.data(), next.data(), long(nc) * product(ea, 0, a),
                               product(ea, a + 1, D));
    g = plan.from_next[a + 1]->apply(next);
  }
  return g;
}

template class DistributedFft<3>;
template class DistributedFft<4>;

}  // namespace ufno::dist
