#include "io/GridResampler.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ufno {

namespace {

std::vector<double> edges(const std::vector<double>& widths) {
  std::vector<double> e{0.0};
  for (double w : widths) e.push_back(e.back() + w);
  return e;
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > 1e-6 * std::max(1.0, std::abs(a[i]))) return false;
  return true;
}

}  // namespace

GridResampler::Weights GridResampler::axis(const std::vector<double>& src,
                                           const std::vector<double>& dst, bool radial) {
  const auto es = edges(src), ed = edges(dst);
  // Both grids start at the same place (the top, or the well); the target is scaled to the
  // source's total extent so every target cell finds source cells.
  const double scale = es.back() / ed.back();
  Weights w;
  w.w.resize(dst.size());
  auto measure = [&](double a, double b) { return radial ? (b * b - a * a) : (b - a); };
  for (std::size_t i = 0; i < src.size(); ++i) w.centre_src.push_back((es[i] + es[i + 1]) / 2);
  for (std::size_t j = 0; j < dst.size(); ++j) {
    const double a = ed[j] * scale, b = ed[j + 1] * scale;
    w.centre_dst.push_back((a + b) / 2);
    for (std::size_t i = 0; i < src.size(); ++i) {
      const double lo = std::max(a, es[i]), hi = std::min(b, es[i + 1]);
      // Overlaps of rounding size (edges summed in another order) are not overlaps.
      if (hi - lo > 1e-9 * (b - a)) w.w[j].push_back({int(i), measure(lo, hi)});
    }
  }
  return w;
}

GridResampler::GridResampler(const std::vector<double>& sdz, const std::vector<double>& sdr,
                             const std::vector<double>& ddz, const std::vector<double>& ddr)
    : src_dz_(sdz), src_dr_(sdr), dst_dz_(ddz), dst_dr_(ddr) {
  identity_ = same(sdz, ddz) && same(sdr, ddr);
  wz_ = axis(sdz, ddz, false);
  wr_ = axis(sdr, ddr, true);
}

std::vector<double> GridResampler::map_axis(const std::vector<double>& v, int n0, int n1,
                                            const Weights& w, int ax,
                                            const std::vector<double>& mask, Average how,
                                            bool log_space) const {
  // v and mask: (n0, n1); the result has the target extent along axis `ax`.
  const int m = int(w.w.size());
  const int o0 = ax == 0 ? m : n0, o1 = ax == 0 ? n1 : m;
  std::vector<double> out(std::size_t(o0) * o1, 0.0);
  auto at = [&](const std::vector<double>& a, int along, int other) {
    return ax == 0 ? a[std::size_t(along) * n1 + other] : a[std::size_t(other) * n1 + along];
  };
  const int others = ax == 0 ? n1 : n0;
  for (int j = 0; j < m; ++j)
    for (int o = 0; o < others; ++o) {
      double r = 0;
      const auto& ov = w.w[j];
      // One overlapping source cell: the target cell lies inside it (or equals it).
      const bool inside_one = ov.size() == 1;
      if (inside_one || how == Average::Interpolate) {
        // Refining: interpolate between the centres of the containing cell and its neighbour.
        if (ov.empty()) continue;
        const int i = ov[0].first;
        const double x = w.centre_dst[j];
        const int nb = x < w.centre_src[i] ? i - 1 : i + 1;
        const int ns = int(w.centre_src.size());
        double vi = at(v, i, o);
        if (nb >= 0 && nb < ns && at(mask, nb, o) > 0 && at(mask, i, o) > 0 &&
            (!log_space || (vi > 0 && at(v, nb, o) > 0))) {
          double vn = at(v, nb, o);
          const double t = (x - w.centre_src[i]) / (w.centre_src[nb] - w.centre_src[i]);
          if (log_space)
            vi = std::exp(std::log(vi) + t * (std::log(vn) - std::log(vi)));
          else
            vi = vi + t * (vn - vi);
        }
        r = vi;
      } else {
        double num = 0, den = 0;
        for (const auto& [i, wt] : ov) {
          const double mw = wt * at(mask, i, o);
          if (mw <= 0) continue;
          const double val = at(v, i, o);
          if (how == Average::Harmonic) {
            num += mw;
            den += val > 0 ? mw / val : 1e300;
          } else {
            num += mw * val;
            den += mw;
          }
        }
        r = den > 0 ? (how == Average::Harmonic ? num / den : num / den) : 0.0;
      }
      (ax == 0 ? out[std::size_t(j) * o1 + o] : out[std::size_t(o) * o1 + j]) = r;
    }
  return out;
}

std::vector<double> GridResampler::map(const std::vector<double>& v, const std::vector<int>& active,
                                       Average how, bool log_space) const {
  const int nz = int(src_dz_.size()), nr = int(src_dr_.size());
  std::vector<double> mask(active.begin(), active.end());
  const std::vector<double> ones(mask.size(), 1.0);
  // Radial first (per layer), then vertical; the mask is carried as the active fraction.
  auto v1 = map_axis(v, nz, nr, wr_, 1, mask, how, log_space);
  auto m1 = map_axis(mask, nz, nr, wr_, 1, ones, Average::Arithmetic, false);
  const int mr = int(dst_dr_.size());
  auto v2 = map_axis(v1, nz, mr, wz_, 0, m1, how, log_space);
  auto m2 =
      map_axis(m1, nz, mr, wz_, 0, std::vector<double>(m1.size(), 1.0), Average::Arithmetic, false);
  for (std::size_t i = 0; i < v2.size(); ++i)
    if (m2[i] < 0.5) v2[i] = 0.0;
  return v2;
}

std::vector<int> GridResampler::map_active(const std::vector<int>& active) const {
  const int nz = int(src_dz_.size()), nr = int(src_dr_.size());
  std::vector<double> mask(active.begin(), active.end());
  const std::vector<double> ones(mask.size(), 1.0);
  auto m1 = map_axis(mask, nz, nr, wr_, 1, ones, Average::Arithmetic, false);
  auto m2 = map_axis(m1, nz, int(dst_dr_.size()), wz_, 0, std::vector<double>(m1.size(), 1.0),
                     Average::Arithmetic, false);
  std::vector<int> r(m2.size());
  for (std::size_t i = 0; i < m2.size(); ++i) r[i] = m2[i] >= 0.5;
  return r;
}

std::vector<int> GridResampler::map_layers(const std::vector<int>& flags) const {
  std::vector<int> r(dst_dz_.size(), 0);
  for (std::size_t j = 0; j < r.size(); ++j)
    for (const auto& [i, wt] : wz_.w[j])
      if (flags[i] && wt > 0) r[j] = 1;
  return r;
}

ReservoirCase GridResampler::map_case(const ReservoirCase& c,
                                      const std::vector<int>& active) const {
  ReservoirCase o = c;
  o.nx = o.lx = int(dst_dz_.size());
  o.ny = o.ly = int(dst_dr_.size());
  o.dz = dst_dz_;
  o.dr = dst_dr_;
  o.permx = map(c.permx, active, Average::Arithmetic, true);
  o.permz = map(c.permz, active, Average::Harmonic, true);
  o.poro = map(c.poro, active, Average::Arithmetic, false);
  o.perforated = map_layers(c.perforated);
  return o;
}

std::string GridResampler::describe() const {
  std::ostringstream s;
  s << src_dz_.size() << " x " << src_dr_.size() << " (layers x radial cells) onto "
    << dst_dz_.size() << " x " << dst_dr_.size();
  auto kind = [](std::size_t a, std::size_t b) {
    return a == b ? "kept" : (a > b ? "coarsened" : "refined");
  };
  s << " (vertical " << kind(src_dz_.size(), dst_dz_.size()) << ", radial "
    << kind(src_dr_.size(), dst_dr_.size()) << ")";
  return s.str();
}

}  // namespace ufno
