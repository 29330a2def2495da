#include "screening/Kpis.hpp"

#include <algorithm>
#include <cmath>

#include "core/InputError.hpp"
#include "runtime/Co2Density.hpp"

namespace ufno {

namespace {

constexpr double kBrineGradientBarPerM = 1000.0 * 9.80665 / 1e5;  // as python/ufno/data/cases.py
constexpr double kDaysPerYear = 365.25;

struct Geometry {
  std::vector<double> r_in, r_out, z_mid, volume;  // volume: (X, Y) full ring [m3]
};

Geometry geometry(const ReservoirCase& c) {
  Geometry g;
  double r = 0, z = 0;
  for (int y = 0; y < c.ny; ++y) {
    g.r_in.push_back(r);
    g.r_out.push_back(r += c.dr[y]);
  }
  for (int x = 0; x < c.nx; ++x) {
    g.z_mid.push_back(z + c.dz[x] / 2);
    z += c.dz[x];
  }
  for (int x = 0; x < c.nx; ++x)
    for (int y = 0; y < c.ny; ++y)
      g.volume.push_back(M_PI * (g.r_out[y] * g.r_out[y] - g.r_in[y] * g.r_in[y]) * c.dz[x]);
  return g;
}

// One report time's fields, with the physical rules applied to SG.
struct Snapshot {
  std::vector<double> sg, dp, density;  // (X, Y)
};

Snapshot snapshot(const ReservoirCase& c, const Geometry& g, const std::vector<float>& sg,
                  const std::vector<float>& dp, int t, const KpiOptions& o) {
  const std::size_t n = std::size_t(c.nx) * c.ny, off = std::size_t(t) * n;
  Snapshot s;
  s.sg.resize(n);
  s.dp.resize(n);
  s.density.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool active = c.permx[i] > 0;
    s.sg[i] = active ? std::clamp(double(sg[off + i]), 0.0, 1.0 - c.swi) : 0.0;
    s.dp[i] = double(dp[off + i]);
    if (!active) continue;
    const double p = c.pressure_bar + kBrineGradientBarPerM * g.z_mid[i / c.ny] + s.dp[i];
    s.density[i] = o.co2_density > 0 ? o.co2_density : co2_density_kg_m3(c.temperature_c, p);
  }
  return s;
}

// Free-phase CO2 mass [kg] of the masked cells in each radial ring.
std::vector<double> ring_masses(const ReservoirCase& c, const Geometry& g, const Snapshot& s,
                                const std::vector<char>& mask) {
  std::vector<double> m(c.ny, 0.0);
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) m[i % c.ny] += s.sg[i] * c.poro[i] * g.volume[i] * s.density[i];
  return m;
}

int outermost_ring(const ReservoirCase& c, const std::vector<char>& mask) {
  int ring = -1;
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) ring = std::max(ring, int(i % c.ny));
  return ring;
}

struct PlumeReach {
  double radius_m = 0;
  bool capped = false;
};

// The plume's front radius, capped at the outer edge of the last ring whose cumulative gas mass
// (rings filled outward from the well) stays within the injected mass plus the tolerance.
PlumeReach plume_reach(const ReservoirCase& c, const Geometry& g, const Snapshot& s,
                       const std::vector<char>& plume, double threshold, double injected_kg,
                       double tolerance) {
  const int reach = outermost_ring(c, plume);
  if (reach < 0) return {};
  const auto m = ring_masses(c, g, s, plume);
  double cum = 0;
  int filled = -1;
  for (int y = 0; y <= reach; ++y) {
    cum += m[y];
    if (cum > injected_kg * (1 + tolerance)) break;
    filled = y;
  }
  if (filled == reach) return {front_radius(c, s.sg, plume, threshold), false};
  return {filled < 0 ? 0.0 : g.r_out[filled], true};
}

int nearest_report(const std::vector<double>& times, double year) {
  int best = 0;
  for (int t = 1; t < int(times.size()); ++t)
    if (std::abs(times[t] / kDaysPerYear - year) < std::abs(times[best] / kDaysPerYear - year))
      best = t;
  return best;
}

double injected_kg(const ReservoirCase& c, double days) {
  return c.rate_mt_per_year * 1e9 * days / kDaysPerYear;
}

}  // namespace

void validate_kpi_options(const KpiOptions& o, const std::string& source,
                          const std::function<std::string(const std::string&)>& name) {
  if (!(o.sg_threshold >= 0 && o.sg_threshold < 1))
    throw InputError(source, name("sg_threshold"), "must be in [0, 1)");
  if (!std::isfinite(o.critical_dp_bar))
    throw InputError(source, name("critical_dp_bar"), "must be a finite number");
  if (!(o.co2_density >= 0 && o.co2_density <= 2000))
    throw InputError(source, name("co2_density"),
                     "must be 0 (Span-Wagner) or a density up to 2000");
  if (!(o.mass_tolerance >= 0 && o.mass_tolerance <= 10))
    throw InputError(source, name("mass_tolerance"), "must be in [0, 10]");
  if (o.years.empty() || o.years.size() > 100)
    throw InputError(source, name("years"), "must be 1 to 100 years");
  for (double y : o.years)
    if (!(y >= 0 && y <= 1000)) throw InputError(source, name("years"), "must be in [0, 1000]");
}

Kpis compute_kpis(const ReservoirCase& c, const std::vector<float>& sg,
                  const std::vector<float>& dp, const std::vector<double>& times,
                  const KpiOptions& o) {
  const int T = int(times.size());
  const Geometry g = geometry(c);
  Kpis k;
  // Capped reach at every report time, then the running maximum (the reach never recedes).
  std::vector<PlumeReach> reach(T);
  for (int t = 0; t < T; ++t) {
    const Snapshot s = snapshot(c, g, sg, dp, t, o);
    const auto plume = connected_above(c, s.sg, o.sg_threshold);
    reach[t] =
        plume_reach(c, g, s, plume, o.sg_threshold, injected_kg(c, times[t]), o.mass_tolerance);
    if (t == T - 1) {
      const auto m = ring_masses(c, g, s, plume);
      double mass = 0;
      for (double v : m) mass += v;
      k.co2_mass_mt = k.co2_mass_field_mt = mass / 1e9;
      k.injected_mt = injected_kg(c, times[t]) / 1e9;
      k.mass_ratio = k.injected_mt > 0 ? k.co2_mass_mt / k.injected_mt : 0;
    }
    const auto aor = connected_above(c, s.dp, o.critical_dp_bar);
    k.aor_radius_m = std::max(k.aor_radius_m, front_radius(c, s.dp, aor, o.critical_dp_bar));
  }
  for (double year : o.years) {
    const int best = nearest_report(times, year);
    PlumeReach r;
    for (int t = 0; t <= best; ++t)
      if (reach[t].radius_m >= r.radius_m) r = reach[t];
    k.years_used.push_back(times[best] / kDaysPerYear);
    k.plume_radius_m.push_back(r.radius_m);
    k.plume_radius_field_m.push_back(r.radius_m);
    k.plume_area_km2.push_back(M_PI * r.radius_m * r.radius_m / 1e6);
    k.plume_capped.push_back(r.capped ? 1 : 0);
  }
  k.max_dp_bar = -1e300;
  const std::size_t n = std::size_t(c.nx) * c.ny;
  for (int t = 0; t < T; ++t)
    for (std::size_t i = 0; i < n; ++i) {
      const double v = dp[std::size_t(t) * n + i];
      if (c.permx[i] <= 0 || !(v > k.max_dp_bar)) continue;
      const int y = int(i % c.ny);
      k.max_dp_bar = v;
      k.max_dp_radius_m = (g.r_in[y] + g.r_out[y]) / 2;
      k.max_dp_depth_m = g.z_mid[i / c.ny];
      k.max_dp_year = times[t] / kDaysPerYear;
    }
  k.max_dp_field_bar = k.max_dp_bar;
  k.aor_field_radius_m = k.aor_radius_m;
  return k;
}

}  // namespace ufno
