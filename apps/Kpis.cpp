#include "apps/Kpis.hpp"

#include <cmath>
#include <sstream>

namespace ufno {

Kpis compute_kpis(const ReservoirCase& c, const std::vector<float>& sg,
                  const std::vector<float>& dp, const std::vector<double>& times,
                  const KpiOptions& o) {
  const int X = c.nx, Y = c.ny, T = int(times.size());
  std::vector<double> r_out(Y), r_in(Y), z_mid(X);
  double r = 0;
  for (int y = 0; y < Y; ++y) {
    r_in[y] = r;
    r_out[y] = r += c.dr[y];
  }
  double z = 0;
  for (int x = 0; x < X; ++x) {
    z_mid[x] = z + c.dz[x] / 2;
    z += c.dz[x];
  }
  auto at = [&](const std::vector<float>& f, int t, int x, int y) {
    return double(f[(std::size_t(t) * X + x) * Y + y]);
  };
  // Only cells of the formation count: what a model predicts outside it is not CO2.
  auto active = [&](int x, int y) { return c.permx[std::size_t(x) * Y + y] > 0; };
  Kpis k;
  for (double year : o.years) {
    // The report time closest to the year asked for.
    int best = 0;
    for (int t = 1; t < T; ++t)
      if (std::abs(times[t] / 365.25 - year) < std::abs(times[best] / 365.25 - year)) best = t;
    double radius = 0;
    for (int x = 0; x < X; ++x)
      for (int y = 0; y < Y; ++y)
        if (active(x, y) && at(sg, best, x, y) > o.sg_threshold)
          radius = std::max(radius, r_out[y]);
    k.years_used.push_back(times[best] / 365.25);
    k.plume_radius_m.push_back(radius);
    k.plume_area_km2.push_back(M_PI * radius * radius / 1e6);
  }
  k.max_dp_bar = -1e300;
  for (int t = 0; t < T; ++t)
    for (int x = 0; x < X; ++x)
      for (int y = 0; y < Y; ++y) {
        if (!active(x, y)) continue;
        const double v = at(dp, t, x, y);
        if (v > k.max_dp_bar) {
          k.max_dp_bar = v;
          k.max_dp_radius_m = (r_in[y] + r_out[y]) / 2;
          k.max_dp_depth_m = z_mid[x];
          k.max_dp_year = times[t] / 365.25;
        }
        if (v > o.critical_dp_bar) k.aor_radius_m = std::max(k.aor_radius_m, r_out[y]);
      }
  // Mass in place at the last report: SG x porosity x ring volume x density over the plume
  // (active cells with SG above the threshold). Counting only the plume keeps a surrogate's
  // sub-threshold noise out: 0.3 % SG over the km-wide outer rings of the log-spaced grid adds
  // tens of Mt, while for OPM Flow's own fields the difference is below 0.2 %.
  double mass = 0;
  for (int x = 0; x < X; ++x)
    for (int y = 0; y < Y; ++y) {
      const std::size_t cell = std::size_t(x) * Y + y;
      const double s = at(sg, T - 1, x, y);
      if (!active(x, y) || !(s > o.sg_threshold)) continue;
      const double vol = M_PI * (r_out[y] * r_out[y] - r_in[y] * r_in[y]) * c.dz[x];
      mass += s * c.poro[cell] * vol * o.co2_density;
    }
  k.co2_mass_mt = mass / 1e9;
  return k;
}

std::vector<std::string> kpi_header(const KpiOptions& o) {
  std::vector<std::string> h;
  for (double y : o.years) {
    std::ostringstream s;
    s << y;
    h.push_back("plume_radius_m_" + s.str() + "yr");
    h.push_back("plume_area_km2_" + s.str() + "yr");
  }
  for (const char* n : {"max_dP_bar", "max_dP_radius_m", "max_dP_depth_m", "max_dP_year",
                        "aor_radius_m", "co2_mass_Mt"})
    h.push_back(n);
  return h;
}

std::vector<double> kpi_row(const Kpis& k) {
  std::vector<double> r;
  for (std::size_t i = 0; i < k.plume_radius_m.size(); ++i) {
    r.push_back(k.plume_radius_m[i]);
    r.push_back(k.plume_area_km2[i]);
  }
  for (double v : {k.max_dp_bar, k.max_dp_radius_m, k.max_dp_depth_m, k.max_dp_year, k.aor_radius_m,
                   k.co2_mass_mt})
    r.push_back(v);
  return r;
}

}  // namespace ufno
