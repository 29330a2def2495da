#include "runtime/EstimateMemo.hpp"

namespace ufno {

std::vector<double> estimate_key(int estimate, const ReservoirCase& c,
                                 const std::vector<double>& times_days) {
  std::vector<double> k{double(estimate), double(c.nx),   double(c.ny), double(c.x0),
                        double(c.y0),     double(c.lx),   double(c.ly), c.rate_mt_per_year,
                        c.temperature_c,  c.pressure_bar, c.swi,        c.vg_lambda};
  // Each array after its length, so that no two different cases give the same key.
  auto add = [&k](const auto& v) {
    k.push_back(double(v.size()));
    k.insert(k.end(), v.begin(), v.end());
  };
  add(c.permx);
  add(c.permz);
  add(c.poro);
  add(c.dr);
  add(c.dz);
  add(c.perforated);
  add(c.times_days);
  add(times_days);
  return k;
}

CaseMemo<std::vector<double>>& max_dp_estimate_memo() {
  static CaseMemo<std::vector<double>> memo(64);
  return memo;
}

CaseMemo<GravitySummary>& gravity_summary_memo() {
  static CaseMemo<GravitySummary> memo(64);
  return memo;
}

GravitySummary memo_gravity_summary(const ReservoirCase& c, const std::vector<double>& times_days,
                                    Dissolution dissolution) {
  return gravity_summary_memo().get(int(dissolution), c, times_days, [&] {
    return rz_gravity_two_phase_summary(c, times_days, dissolution);
  });
}

CaseMemo<MaxDpPhysics>& max_dp_physics_memo() {
  static CaseMemo<MaxDpPhysics> memo(64);
  return memo;
}

}  // namespace ufno
