#include "decomposition/DistributedFft.hpp"

#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/Workspace.hpp"

namespace ufno::dist {

using fft::Transform;

namespace {

template <std::size_t D>
long product(const std::array<int, D>& e, std::size_t from, std::size_t to) {
  long p = 1;
  for (std::size_t a = from; a < to; ++a) p *= e[a];
  return p;
}

}  // namespace

template <std::size_t D>
DistributedFft<D>::DistributedFft(const ProcessGrid& grid, Extents n, std::optional<Extents> modes,
                                  ExchangeAlgorithm alg, FftKind kind, std::optional<Window> window)
    : comm_(grid.comm()),
      rank_(grid.rank()),
      kind_(kind),
      truncated_(modes.has_value()),
      n_(n),
      period_(window ? window->period : n),
      alg_(alg) {
  const auto parts = grid.parts_of<D>();
  parts_ = parts;
  if (parts[D - 1] != 1)
    throw std::invalid_argument("DistributedFft: the process grid must not split T");
  Extents offset{};
  if (window) {
    if (!modes) throw std::invalid_argument("DistributedFft: a window needs kept modes");
    offset = window->offset;
    for (std::size_t a = 0; a < D; ++a)
      if (n[a] < 1 || offset[a] < 0 || offset[a] > period_[a] - n[a])
        throw std::invalid_argument("DistributedFft: the window does not fit its period");
  }
  const Extents& N = period_;  // the transforms' lengths
  const bool real = kind == FftKind::R2C;
  const int nt_c = real ? N[D - 1] / 2 + 1 : N[D - 1];
  for (std::size_t a = 0; a < D; ++a) {
    const bool half = real && a == D - 1;  // the real T axis keeps low bins only
    if (modes) {
      const int m = (*modes)[a];
      if (m < 1 || (half ? m > nt_c : 2 * m > N[a]))
        throw std::invalid_argument("DistributedFft: modes do not fit the grid");
      low_[a] = m;
      high_[a] = half ? 0 : m;
    } else {
      low_[a] = a == D - 1 ? nt_c : n[a];
      high_[a] = 0;
    }
    kn_[a] = low_[a] + high_[a];
  }
  first_axis_whole_ = parts[0] == 1;
  for (std::size_t a = 0; a < D; ++a) {
    // Axis a local: the grid's parts of the space axes with a 1 inserted at a.
    Extents p{}, before{}, after{};
    for (std::size_t b = 0, g = 0; b < D; ++b) p[b] = b == a ? 1 : parts[g++];
    for (std::size_t b = 0; b < D; ++b) {
      before[b] = b <= a ? n[b] : kn_[b];
      after[b] = b < a ? n[b] : kn_[b];
    }
    stage_[a].before = Layout::block(before, p);
    stage_[a].after = Layout::block(after, p);
    if (modes && !(real && a == D - 1))
      stage_[a].pruned =
          std::make_unique<fft::TruncatedDft>(N[a], low_[a], high_[a], offset[a], n[a]);
  }
  for (std::size_t a = 1; a < D; ++a) {
    stage_[a].to_next = std::make_unique<Repartition<complexf, D>>(comm_, stage_[a].after,
                                                                   stage_[a - 1].before, alg);
    stage_[a].from_next = std::make_unique<Repartition<complexf, D>>(comm_, stage_[a - 1].before,
                                                                     stage_[a].after, alg);
  }
  if (modes && real)
    t_pruned_ =
        std::make_unique<fft::TruncatedRealDft>(N[D - 1], low_[D - 1], offset[D - 1], n[D - 1]);
  if (!modes && real && fft::fft_multi_axis) {
    auto same = [](const Layout& a, const Layout& b) {
      return a.global() == b.global() && a.boxes() == b.boxes();
    };
    for (std::size_t hi = D - 1;; hi = groups_.back()[0] - 1) {
      std::size_t lo = hi;
      while (lo > 0 && same(stage_[lo].after, stage_[lo - 1].before)) --lo;
      groups_.push_back({lo, hi});
      if (lo == 0) break;
    }
    if (groups_.size() == D) groups_.clear();  // one axis per group: the per-axis path
  }
}

template <std::size_t D>
std::vector<typename DistributedFft<D>::GroupPlan>& DistributedFft<D>::group_plans(long nl) {
  auto it = group_plans_.find(nl);
  if (it != group_plans_.end()) return it->second;
  std::vector<GroupPlan> plans;
  for (const auto& [lo, hi] : groups_) {
    // The group's axes are whole in its layout; n is T's real length in the R2C group.
    const Extents e = stage_[lo].after.box(rank_).extents();
    fft::Batch1d b{nl * product(e, 0, lo), hi == D - 1 ? n_[D - 1] : e[hi], product(e, hi + 1, D),
                   std::vector<int>(e.begin() + lo, e.begin() + hi)};
    GroupPlan g;
    if (b.outer > 0 && b.inner > 0 && product(e, lo, hi) > 0) {
      const bool r = hi == D - 1;
      g.fwd = fft::make_fft1d_plan(r ? Transform::R2C : Transform::C2C_FORWARD, b);
      g.bwd = fft::make_fft1d_plan(r ? Transform::C2R : Transform::C2C_BACKWARD, b);
    }
    plans.push_back(std::move(g));
  }
  return group_plans_.emplace(nl, std::move(plans)).first->second;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::forward_grouped(const Real& x) {
  LayerTimer::Scope t("  fft multi-axis transforms");
  const long nl = long(x.extent(0)) * x.extent(1);
  auto& gp = group_plans(nl);
  Complex a = temporary_grid_view<D, complexf>("dfft.kt", x.extent(0), x.extent(1),
                                               stage_[groups_[0][0]].after.box(rank_).extents());
  if (gp[0].fwd) gp[0].fwd->execute(const_cast<float*>(x.data()), a.data());
  for (std::size_t g = 1; g < groups_.size(); ++g) {
    a = stage_[groups_[g][1] + 1].to_next->apply(a);
    if (gp[g].fwd) gp[g].fwd->execute(a.data(), a.data());  // a is this call's own
  }
  return a;
}

template <std::size_t D>
typename DistributedFft<D>::Real DistributedFft<D>::backward_grouped(const Complex& s) {
  check_block(spectral_layout(), grid_extents<D>(s), "spectral");
  LayerTimer::Scope t("  fft multi-axis transforms");
  const long nl = long(s.extent(0)) * s.extent(1);
  auto& gp = group_plans(nl);
  Complex a = s;
  bool own = false;  // the caller's spectrum is never written
  for (std::size_t g = groups_.size(); g-- > 1;) {
    if (!own) {
      Complex b = make_grid_view<D, complexf>("idfft.axes", s.extent(0), s.extent(1),
                                              grid_extents<D>(a), false);
      if (gp[g].bwd) gp[g].bwd->execute(a.data(), b.data());
      a = b;
      own = true;
    } else if (gp[g].bwd) {
      gp[g].bwd->execute(a.data(), a.data());
    }
    a = stage_[groups_[g][1] + 1].from_next->apply(a);
  }
  if (!own) {  // the c2r destroys its input
    Complex b = make_grid_view<D, complexf>("idfft.axes", s.extent(0), s.extent(1),
                                            grid_extents<D>(a), false);
    Kokkos::deep_copy(b, a);
    a = b;
  }
  Real out = make_grid_view<D, float>("idfft.out", s.extent(0), s.extent(1),
                                      real_layout().box(rank_).extents(), false);
  if (gp[0].bwd) gp[0].bwd->execute(a.data(), out.data());
  return out;
}

template <std::size_t D>
fft::Batch1d DistributedFft<D>::axis_batch(long nlead, const Extents& e, std::size_t a) {
  return {nlead * product(e, 0, a), e[a], product(e, a + 1, D)};
}

template <std::size_t D>
typename DistributedFft<D>::Plans& DistributedFft<D>::plans(long nl) {
  auto it = plans_.find(nl);
  if (it != plans_.end()) return it->second;
  Plans p;
  const bool real = kind_ == FftKind::R2C;
  for (std::size_t a = 0; a < D; ++a) {
    const fft::Batch1d b = axis_batch(nl, stage_[a].before.box(rank_).extents(), a);
    if (b.outer == 0 || b.inner == 0) continue;  // this rank holds nothing at this stage
    const bool r = real && a == D - 1;
    p.fwd[a] = fft::make_fft1d_plan(r ? Transform::R2C : Transform::C2C_FORWARD, b);
    p.bwd[a] = fft::make_fft1d_plan(r ? Transform::C2R : Transform::C2C_BACKWARD, b);
  }
  return plans_.emplace(nl, std::move(p)).first->second;
}

template <std::size_t D>
void DistributedFft<D>::check_kind(FftKind k, const char* call) const {
  if (kind_ != k)
    throw std::invalid_argument(std::string("DistributedFft: ") + call +
                                " does not match the kind of transform the plan was made for");
}

template <std::size_t D>
void DistributedFft<D>::check_block(const Layout& l, const Extents& e, const char* what) const {
  if (l.box(rank_).extents() != e)
    throw std::invalid_argument(std::string("DistributedFft: ") + what +
                                " block does not match the layout");
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::transform_axis(const Complex& a,
                                                                      std::size_t axis,
                                                                      bool forward, long nl,
                                                                      bool in_place) {
  const Stage& s = stage_[axis];
  if (!s.pruned && in_place) {  // full: the extents do not change, and `a` is this plan's own
    LayerTimer::Scope t("  fft 1-d transforms");
    auto& p = forward ? plans(nl).fwd[axis] : plans(nl).bwd[axis];
    if (p) p->execute(a.data(), a.data());
    return a;
  }
  const Layout& to = forward ? s.after : s.before;
  const Extents from = grid_extents<D>(a);
  Complex out = temporary_grid_view<D, complexf>("dfft.axis", a.extent(0), a.extent(1),
                                                 to.box(rank_).extents());
  const long outer = nl * product(from, 0, axis), inner = product(from, axis + 1, D);
  if (s.pruned) {
    LayerTimer::Scope t("  fft pruned axes (gemm)");
    if (forward)
      s.pruned->forward(a.data(), out.data(), outer, inner);
    else
      s.pruned->backward(a.data(), out.data(), outer, inner);
    return out;
  }
  LayerTimer::Scope t("  fft 1-d transforms");
  auto& p = forward ? plans(nl).fwd[axis] : plans(nl).bwd[axis];
  if (p) p->execute(const_cast<complexf*>(a.data()), out.data());
  return out;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::forward_complex_axes(Complex a,
                                                                            std::size_t from,
                                                                            long nl) {
  for (std::size_t axis = from + 1; axis-- > 0;) {
    a = stage_[axis + 1].to_next->apply(a);
    a = transform_axis(a, axis, true, nl, /*in_place=*/true);
  }
  return a;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::backward_complex_axes(Complex a,
                                                                             std::size_t upto,
                                                                             long nl) {
  for (std::size_t axis = 0; axis <= upto; ++axis) {
    a = transform_axis(a, axis, false, nl, /*in_place=*/axis > 0);  // not the caller's spectrum
    a = stage_[axis + 1].from_next->apply(a);
  }
  return a;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::forward(const Real& x) {
  check_kind(FftKind::R2C, "real forward");
  check_block(real_layout(), grid_extents<D>(x), "input");
  if (streams_rows()) return forward_in_row_groups(x);
  if (!groups_.empty()) return forward_grouped(x);
  const long nl = long(x.extent(0)) * x.extent(1);
  const Extents e = grid_extents<D>(x);
  Complex a = temporary_grid_view<D, complexf>("dfft.kt", x.extent(0), x.extent(1),
                                               stage_[D - 1].after.box(rank_).extents());
  if (t_pruned_) {  // T: only the kept bins
    LayerTimer::Scope t("  fft pruned T (gemm)");
    t_pruned_->forward(x.data(), a.data(), nl * product(e, 0, D - 1));
  } else {
    LayerTimer::Scope t("  fft 1-d transforms");
    auto& p = plans(nl).fwd[D - 1];
    if (p) p->execute(const_cast<float*>(x.data()), a.data());
  }
  return forward_complex_axes(a, D - 2, nl);
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::forward(const Complex& x) {
  check_kind(FftKind::C2C, "complex forward");
  check_block(real_layout(), grid_extents<D>(x), "input");
  const long nl = long(x.extent(0)) * x.extent(1);
  return forward_complex_axes(transform_axis(x, D - 1, true, nl, false), D - 2, nl);
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::backward_to_t_modes(const Complex& s) {
  check_kind(FftKind::R2C, "backward_to_t_modes");
  check_block(spectral_layout(), grid_extents<D>(s), "spectral");
  return backward_complex_axes(s, D - 2, long(s.extent(0)) * s.extent(1));
}

template <std::size_t D>
typename DistributedFft<D>::Real DistributedFft<D>::backward(const Complex& s) {
  check_kind(FftKind::R2C, "real backward");
  if (!groups_.empty()) return backward_grouped(s);
  Complex a = backward_to_t_modes(s);
  const long nl = long(s.extent(0)) * s.extent(1);
  const Extents e = real_layout().box(rank_).extents();
  Real out = make_grid_view<D, float>("idfft.out", s.extent(0), s.extent(1), e, false);
  if (t_pruned_) {  // T: from the kept bins straight to the real signal
    LayerTimer::Scope t("  fft pruned T (gemm)");
    t_pruned_->backward(a.data(), out.data(), nl * product(e, 0, D - 1));
    return out;
  }
  LayerTimer::Scope t("  fft 1-d transforms");
  auto& p = plans(nl).bwd[D - 1];
  if (p) p->execute(a.data(), out.data());  // a is this call's own: c2r may destroy it
  return out;
}

template <std::size_t D>
typename DistributedFft<D>::Complex DistributedFft<D>::backward_c2c(const Complex& s) {
  check_kind(FftKind::C2C, "complex backward");
  check_block(spectral_layout(), grid_extents<D>(s), "spectral");
  const long nl = long(s.extent(0)) * s.extent(1);
  return transform_axis(backward_complex_axes(s, D - 2, nl), D - 1, false, nl, true);
}

template <std::size_t D>
std::vector<long> DistributedFft<D>::cells_sent() const {
  std::vector<long> c;
  for (std::size_t a = D; a-- > 1;) c.push_back(stage_[a].to_next->cells_sent());
  for (std::size_t a = 1; a < D; ++a) c.push_back(stage_[a].from_next->cells_sent());
  return c;
}

template class DistributedFft<3>;
template class DistributedFft<4>;

}  // namespace ufno::dist
