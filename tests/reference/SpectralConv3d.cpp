#include "reference/SpectralConv3d.hpp"

#include <stdexcept>

#include "core/SpectralTruncation.hpp"
#include "operators/SpectralWeights.hpp"

namespace ufno::reference {

using fft::Batch1d;
using fft::Transform;

SpectralConv3d::SpectralConv3d(int in, int out, std::array<int, 3> modes,
                               const std::vector<HostArray>& corners)
    : in_(in), out_(out), m_(modes) {
  const dist::Box3 all{{0, 0, 0}, {2 * modes[0], 2 * modes[1], modes[2]}};
  w_ = combine_corner_weights<3>(in, out, modes, corners, all);
}

SpectralConv3d SpectralConv3d::load(const WeightSource& w, const std::string& prefix, int in,
                                    int out, std::array<int, 3> modes) {
  return SpectralConv3d(in, out, modes, load_corner_weights<3>(w, prefix, in, out, modes));
}

SpectralConv3d::Plans& SpectralConv3d::plans_for(const Shape5& s, int co) {
  auto key = std::make_pair(s, co);
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  const long B = s[0], C = s[1], X = s[2], Y = s[3], T = s[4];
  const int mx = m_[0], my = m_[1], mt = m_[2];
  if (2 * mx > X || 2 * my > Y || mt > T / 2 + 1)
    throw std::invalid_argument("SpectralConv3d: modes (" + std::to_string(mx) + "," +
                                std::to_string(my) + "," + std::to_string(mt) +
                                ") do not fit the grid " + to_string(s));
  auto p = std::make_shared<Plans>();
  p->t_r2c = fft::make_fft1d_plan(Transform::R2C, {B * C * X * Y, int(T), 1});
  p->y_fwd = fft::make_fft1d_plan(Transform::C2C_FORWARD, {B * C * X, int(Y), mt});
  p->x_fwd = fft::make_fft1d_plan(Transform::C2C_FORWARD, {B * C, int(X), 2L * my * mt});
  p->x_bwd = fft::make_fft1d_plan(Transform::C2C_BACKWARD, {B * co, int(X), 2L * my * mt});
  p->y_bwd = fft::make_fft1d_plan(Transform::C2C_BACKWARD, {B * co * X, int(Y), mt});
  p->t_c2r = fft::make_fft1d_plan(Transform::C2R, {B * co * X * Y, int(T), 1});
  return *plans_.emplace(key, p).first->second;
}

CTensor SpectralConv3d::forward_modes(const Tensor& x) {
  const Shape5 s = shape_of(x);
  const int B = s[0], C = s[1], X = s[2], Y = s[3], T = s[4];
  const int mx = m_[0], my = m_[1], mt = m_[2];
  Plans& p = plans_for(s, out_);
  // T: r2c, keep the low mt bins.
  CTensor full_t("spec.t", B, C, X, Y, T / 2 + 1);
  p.t_r2c->execute(const_cast<float*>(x.data()), full_t.data());
  CTensor kt("spec.kt", B, C, X, Y, mt);
  truncate_modes(full_t, kt, 4, mt, 0);
  full_t = CTensor();
  // Y: in-place c2c, keep my low and my high bins.
  p.y_fwd->execute(kt.data(), kt.data());
  CTensor ky("spec.ky", B, C, X, 2 * my, mt);
  truncate_modes(kt, ky, 3, my, my);
  kt = CTensor();
  // X: the same.
  p.x_fwd->execute(ky.data(), ky.data());
  CTensor kx("spec.kx", B, C, 2 * mx, 2 * my, mt);
  truncate_modes(ky, kx, 2, mx, mx);
  return kx;
}

CTensor SpectralConv3d::mix(const CTensor& a, float scale) const {
  return spectral_mix<3>(a, w_, scale);
}

Tensor SpectralConv3d::inverse_modes(const CTensor& kx, const Shape5& s) {
  const int B = s[0], O = s[1], X = s[2], Y = s[3], T = s[4];
  const int mx = m_[0], my = m_[1], mt = m_[2];
  Plans& p = plans_for({B, in_, X, Y, T}, O);
  CTensor px("ispec.x", B, O, X, 2 * my, mt);
  zero_pad_modes(kx, px, 2, mx, mx);
  p.x_bwd->execute(px.data(), px.data());
  CTensor py("ispec.y", B, O, X, Y, mt);
  zero_pad_modes(px, py, 3, my, my);
  px = CTensor();
  p.y_bwd->execute(py.data(), py.data());
  CTensor pt("ispec.t", B, O, X, Y, T / 2 + 1);
  zero_pad_modes(py, pt, 4, mt, 0);
  py = CTensor();
  Tensor out("spectral.out", B, O, X, Y, T);
  p.t_c2r->execute(pt.data(), out.data());
  return out;
}

Tensor SpectralConv3d::forward(const Tensor& x) {
  const Shape5 s = shape_of(x);
  if (s[1] != in_)
    throw std::invalid_argument("SpectralConv3d: input " + to_string(s) + " has not " +
                                std::to_string(in_) + " channels");
  // The 1/N of the inverse transform is folded into the mode multiply.
  const float scale = 1.f / (float(s[2]) * float(s[3]) * float(s[4]));
  CTensor modes = mix(forward_modes(x), scale);
  return inverse_modes(modes, {s[0], out_, s[2], s[3], s[4]});
}

}  // namespace ufno::reference
