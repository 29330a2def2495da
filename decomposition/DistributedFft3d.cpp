#include "decomposition/DistributedFft3d.hpp"

#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/SpectralTruncation.hpp"

namespace ufno::dist {

using fft::Transform;

DistributedFft3d::DistributedFft3d(const ProcessGrid& grid, std::array<int, 3> n,
                                   std::optional<std::array<int, 3>> modes, ExchangeAlgorithm alg,
                                   FftKind kind)
    : comm_(grid.comm()), rank_(grid.rank()), kind_(kind), n_(n) {
  const auto& parts = grid.parts();
  if (parts[2] != 1)
    throw std::invalid_argument("DistributedFft3d: the process grid must not split T");
  const int p1 = parts[0], p2 = parts[1];
  const bool real = kind == FftKind::R2C;
  const int nt_c = real ? n[2] / 2 + 1 : n[2];
  if (modes) {
    const auto m = *modes;
    if (2 * m[0] > n[0] || 2 * m[1] > n[1] || (real ? m[2] > nt_c : 2 * m[2] > n[2]))
      throw std::invalid_argument("DistributedFft3d: modes do not fit the grid");
    low_ = m;
    high_ = {m[0], m[1], real ? 0 : m[2]};
  } else {
    low_ = {n[0], n[1], nt_c};
    high_ = {0, 0, 0};
  }
  kn_ = {low_[0] + high_[0], low_[1] + high_[1], low_[2] + high_[2]};
  s0_ = PencilLayout::block(n, {p1, p2, 1});
  s1_ = PencilLayout::block({n[0], n[1], kn_[2]}, {p1, p2, 1});
  s2_ = PencilLayout::block({n[0], n[1], kn_[2]}, {p1, 1, p2});
  s2t_ = PencilLayout::block({n[0], kn_[1], kn_[2]}, {p1, 1, p2});
  s3_ = PencilLayout::block({n[0], kn_[1], kn_[2]}, {1, p1, p2});
  s3t_ = PencilLayout::block(kn_, {1, p1, p2});
  if (modes && real) t_pruned_ = std::make_unique<fft::TruncatedRealDft>(n[2], low_[2]);
  if (modes) {
    y_pruned_ = std::make_unique<fft::TruncatedDft>(n[1], low_[1], high_[1]);
    x_pruned_ = std::make_unique<fft::TruncatedDft>(n[0], low_[0], high_[0]);
  }
  whole_domain_ = p1 == 1 && p2 == 1;
  r1_ = std::make_unique<Repartition<complexf>>(comm_, s1_, s2_, alg);
  r2_ = std::make_unique<Repartition<complexf>>(comm_, s2t_, s3_, alg);
  r2b_ = std::make_unique<Repartition<complexf>>(comm_, s3_, s2t_, alg);
  r1b_ = std::make_unique<Repartition<complexf>>(comm_, s2_, s1_, alg);
}

DistributedFft3d::LocalPlans& DistributedFft3d::plans(long nl) {
  auto it = plans_.find(nl);
  if (it != plans_.end()) return it->second;
  LocalPlans p;
  const auto e0 = s0_.box(rank_).extents(), e2 = s2_.box(rank_).extents(),
             e3 = s3_.box(rank_).extents();
  auto make = [](Transform t, long outer, int n, long inner) -> std::unique_ptr<fft::Fft1dPlan> {
    if (outer == 0 || inner == 0) return nullptr;  // this rank holds nothing at this stage
    return fft::make_fft1d_plan(t, {outer, n, inner});
  };
  const bool real = kind_ == FftKind::R2C;
  p.t_fwd = make(real ? Transform::R2C : Transform::C2C_FORWARD, nl * e0[0] * e0[1], n_[2], 1);
  p.t_bwd = make(real ? Transform::C2R : Transform::C2C_BACKWARD, nl * e0[0] * e0[1], n_[2], 1);
  p.y_fwd = make(Transform::C2C_FORWARD, nl * e2[0], n_[1], e2[2]);
  p.y_bwd = make(Transform::C2C_BACKWARD, nl * e2[0], n_[1], e2[2]);
  p.x_fwd = make(Transform::C2C_FORWARD, nl, n_[0], long(e3[1]) * e3[2]);
  p.x_bwd = make(Transform::C2C_BACKWARD, nl, n_[0], long(e3[1]) * e3[2]);
  return plans_.emplace(nl, std::move(p)).first->second;
}

void DistributedFft3d::run(std::unique_ptr<fft::Fft1dPlan>& p, void* in, void* out) {
  LayerTimer::Scope t("  fft 1-d transforms");
  if (p) p->execute(in, out);
}

namespace {
// Every stage writes all of its output block, so none is zero-filled first.
CTensor local(const std::string& label, int nb, int nc, const Box3& b) {
  return empty_ctensor(label, nb, nc, b.extent(0), b.extent(1), b.extent(2));
}
}  // namespace

void DistributedFft3d::check_kind(FftKind k, const char* call) const {
  if (kind_ != k)
    throw std::invalid_argument(std::string("DistributedFft3d: ") + call +
                                " does not match the kind of transform the plan was made for");
}

CTensor DistributedFft3d::forward(const Tensor& x) {
  check_kind(FftKind::R2C, "real forward");
  const int nb = x.extent(0), nc = x.extent(1);
  const auto e0 = s0_.box(rank_).extents();
  if (int(x.extent(2)) != e0[0] || int(x.extent(3)) != e0[1] || int(x.extent(4)) != e0[2])
    throw std::invalid_argument("DistributedFft3d: input block does not match the layout");
  if (streams_rows()) return forward_in_row_groups(x);
  LocalPlans& p = plans(long(nb) * nc);
  CTensor a = local("dfft.kt", nb, nc, s1_.box(rank_));
  if (t_pruned_) {  // T: only the kept bins
    LayerTimer::Scope t("  fft pruned T (gemm)");
    t_pruned_->forward(x.data(), a.data(), long(nb) * nc * e0[0] * e0[1]);
    return forward_yx(a, p);
  }
  // T: r2c, then keep the low bins.
  CTensor full_t = empty_ctensor("dfft.t", nb, nc, e0[0], e0[1], n_[2] / 2 + 1);
  run(p.t_fwd, const_cast<float*>(x.data()), full_t.data());
  truncate_modes(full_t, a, 4, low_[2], high_[2]);
  return forward_yx(a, p);
}

CTensor DistributedFft3d::forward(const CTensor& x) {
  check_kind(FftKind::C2C, "complex forward");
  const int nb = x.extent(0), nc = x.extent(1);
  const auto e0 = s0_.box(rank_).extents();
  if (int(x.extent(2)) != e0[0] || int(x.extent(3)) != e0[1] || int(x.extent(4)) != e0[2])
    throw std::invalid_argument("DistributedFft3d: input block does not match the layout");
  LocalPlans& p = plans(long(nb) * nc);
  CTensor full_t = empty_ctensor("dfft.t", nb, nc, e0[0], e0[1], e0[2]);
  run(p.t_fwd, const_cast<complexf*>(x.data()), full_t.data());
  CTensor a = local("dfft.kt", nb, nc, s1_.box(rank_));
  truncate_modes(full_t, a, 4, low_[2], high_[2]);
  return forward_yx(a, p);
}

CTensor DistributedFft3d::forward_yx(CTensor a, LocalPlans& p) {
  const int nb = a.extent(0), nc = a.extent(1);
  CTensor b = r1_->apply(a);
  a = CTensor();
  if (y_pruned_) {  // Y, then X: only the kept bins
    LayerTimer::Scope t("  fft pruned X, Y (gemm)");
    const auto e2 = s2_.box(rank_).extents(), e3 = s3_.box(rank_).extents();
    CTensor bt = local("dfft.ky", nb, nc, s2t_.box(rank_));
    y_pruned_->forward(b.data(), bt.data(), long(nb) * nc * e2[0], e2[2]);
    b = CTensor();
    CTensor c = r2_->apply(bt);
    bt = CTensor();
    CTensor ct = local("dfft.kx", nb, nc, s3t_.box(rank_));
    x_pruned_->forward(c.data(), ct.data(), long(nb) * nc, long(e3[1]) * e3[2]);
    return ct;
  }
  // Y: gather Y, transform, truncate.
  run(p.y_fwd, b.data(), b.data());
  CTensor bt = local("dfft.ky", nb, nc, s2t_.box(rank_));
  truncate_modes(b, bt, 3, low_[1], high_[1]);
  b = CTensor();
  // X: gather X, transform, truncate.
  CTensor c = r2_->apply(bt);
  bt = CTensor();
  run(p.x_fwd, c.data(), c.data());
  CTensor ct = local("dfft.kx", nb, nc, s3t_.box(rank_));
  truncate_modes(c, ct, 2, low_[0], high_[0]);
  return ct;
}

CTensor DistributedFft3d::local_spectral(int nb, int nc) const {
  return local("dfft.kx", nb, nc, s3t_.box(rank_));
}

void DistributedFft3d::check_spectral_block(const CTensor& s) const {
  const auto et = s3t_.box(rank_).extents();
  if (int(s.extent(2)) != et[0] || int(s.extent(3)) != et[1] || int(s.extent(4)) != et[2])
    throw std::invalid_argument("DistributedFft3d: spectral block does not match the layout");
}

CTensor DistributedFft3d::backward_xy(const CTensor& s, LocalPlans& p) {
  const int nb = s.extent(0), nc = s.extent(1);
  check_spectral_block(s);
  if (x_pruned_) {  // X, then Y, from the kept bins
    LayerTimer::Scope t("  fft pruned X, Y (gemm)");
    const auto e2 = s2_.box(rank_).extents(), e3 = s3_.box(rank_).extents();
    CTensor c = local("idfft.x", nb, nc, s3_.box(rank_));
    x_pruned_->backward(s.data(), c.data(), long(nb) * nc, long(e3[1]) * e3[2]);
    CTensor bt = r2b_->apply(c);
    c = CTensor();
    CTensor b = local("idfft.y", nb, nc, s2_.box(rank_));
    y_pruned_->backward(bt.data(), b.data(), long(nb) * nc * e2[0], e2[2]);
    return r1b_->apply(b);
  }
  CTensor c = local("idfft.x", nb, nc, s3_.box(rank_));
  zero_pad_modes(s, c, 2, low_[0], high_[0]);
  run(p.x_bwd, c.data(), c.data());
  CTensor bt = r2b_->apply(c);
  c = CTensor();
  CTensor b = local("idfft.y", nb, nc, s2_.box(rank_));
  zero_pad_modes(bt, b, 3, low_[1], high_[1]);
  bt = CTensor();
  run(p.y_bwd, b.data(), b.data());
  return r1b_->apply(b);
}

CTensor DistributedFft3d::backward_to_t_modes(const CTensor& s) {
  check_kind(FftKind::R2C, "backward_to_t_modes");
  return backward_xy(s, plans(long(s.extent(0)) * s.extent(1)));
}

Tensor DistributedFft3d::backward(const CTensor& s) {
  check_kind(FftKind::R2C, "real backward");
  const int nb = s.extent(0), nc = s.extent(1);
  LocalPlans& p = plans(long(nb) * nc);
  CTensor a = backward_xy(s, p);
  const auto e0 = s0_.box(rank_).extents();
  Tensor out = empty_tensor("idfft.out", nb, nc, e0[0], e0[1], e0[2]);
  if (t_pruned_) {  // T: from the kept bins straight to the real signal
    LayerTimer::Scope t("  fft pruned T (gemm)");
    t_pruned_->backward(a.data(), out.data(), long(nb) * nc * e0[0] * e0[1]);
    return out;
  }
  CTensor full_t = empty_ctensor("idfft.t", nb, nc, e0[0], e0[1], n_[2] / 2 + 1);
  zero_pad_modes(a, full_t, 4, low_[2], high_[2]);
  a = CTensor();
  run(p.t_bwd, full_t.data(), out.data());
  return out;
}

CTensor DistributedFft3d::backward_c2c(const CTensor& s) {
  check_kind(FftKind::C2C, "complex backward");
  const int nb = s.extent(0), nc = s.extent(1);
  LocalPlans& p = plans(long(nb) * nc);
  CTensor a = backward_xy(s, p);
  const auto e0 = s0_.box(rank_).extents();
  CTensor out = empty_ctensor("idfft.out", nb, nc, e0[0], e0[1], e0[2]);
  zero_pad_modes(a, out, 4, low_[2], high_[2]);
  a = CTensor();
  run(p.t_bwd, out.data(), out.data());
  return out;
}

}  // namespace ufno::dist
