#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>

#include "core/InputError.hpp"
#include "screening/ScenarioParameters.hpp"
#include "screening/Sweep.hpp"

namespace ufno {

std::string scenario_name(int i) {
  char b[32];
  std::snprintf(b, sizeof b, "scenario_%04d", i);
  return b;
}

GeostatParams scenario_geostat(const SweepConfig& c, const Scenario& s, int index) {
  GeostatParams g = c.geostat_defaults;
  bool seeded = false;
  for (const auto& [name, v] : s) {
    const ScenarioParameter* p = scenario_parameter(name);
    if (!p || p->target != ScenarioTarget::Geostat) continue;
    if (p->geostat)
      g.*p->geostat = v;
    else
      g.seed = (unsigned long)std::llround(v), seeded = true;
  }
  if (!seeded) g.seed = c.seed * 1000003ul + unsigned(index);
  return g;
}

std::vector<int> verified_scenarios(int n, int n_verify) {
  std::vector<int> v;
  const int m = std::min(n, n_verify);
  for (int k = 0; k < m; ++k) v.push_back(int(std::int64_t(k) * n / m));
  return v;
}

std::vector<int> verified_scenarios(int n, int n_verify, const std::vector<int>& uncertain) {
  std::vector<int> chosen;
  const int m = std::min(n, n_verify), u = int(uncertain.size());
  for (int k : verified_scenarios(u, m)) chosen.push_back(uncertain[k]);
  // The rest evenly spread over the others.
  std::vector<int> others;
  for (int i = 0; i < n; ++i)
    if (!std::binary_search(uncertain.begin(), uncertain.end(), i)) others.push_back(i);
  for (int k : verified_scenarios(int(others.size()), m - int(chosen.size())))
    chosen.push_back(others[k]);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

namespace {

// Every combination of the parameters' values (ranges give `steps` evenly spaced values).
std::vector<Scenario> grid_scenarios(const SweepConfig& c) {
  std::vector<std::vector<double>> axes;
  for (const auto& p : c.parameters) {
    if (!p.values.empty()) {
      axes.push_back(p.values);
    } else {
      std::vector<double> v;
      for (int i = 0; i < p.steps; ++i)
        v.push_back(p.steps == 1 ? p.range[0]
                                 : p.range[0] + (p.range[1] - p.range[0]) * i / (p.steps - 1));
      axes.push_back(v);
    }
  }
  std::vector<Scenario> out;
  std::vector<std::size_t> idx(axes.size(), 0);
  while (true) {
    Scenario s;
    for (std::size_t a = 0; a < axes.size(); ++a) s[c.parameters[a].name] = axes[a][idx[a]];
    out.push_back(s);
    std::size_t a = 0;
    while (a < axes.size() && ++idx[a] == axes[a].size()) idx[a++] = 0;
    if (a == axes.size()) break;
  }
  return out;
}

// The value scenario s gives the parameter of target t, if it sets it.
std::optional<double> value_of(const Scenario& s, ScenarioTarget t) {
  const auto it = s.find(scenario_parameter(t).name);
  if (it == s.end()) return std::nullopt;
  return it->second;
}

// The perforated layers from the top one to the bottom one (1-based), each end the base case's
// own unless the scenario sets it.
void set_perforation(ReservoirCase& rc, const Scenario& s) {
  int top = 1, bottom = rc.nx;
  for (int x = 0; x < rc.nx; ++x)
    if (rc.perforated[x]) {
      top = x + 1;
      break;
    }
  for (int x = rc.nx - 1; x >= 0; --x)
    if (rc.perforated[x]) {
      bottom = x + 1;
      break;
    }
  if (const auto v = value_of(s, ScenarioTarget::PerforationTop)) top = int(std::lround(*v));
  if (const auto v = value_of(s, ScenarioTarget::PerforationBottom)) bottom = int(std::lround(*v));
  for (int x = 0; x < rc.nx; ++x) rc.perforated[x] = x + 1 >= top && x + 1 <= bottom;
}

}  // namespace

std::vector<Scenario> sample_scenarios(const SweepConfig& c) {
  if (c.sampling == "grid") return grid_scenarios(c);
  // Latin hypercube: each parameter's range split into `samples` strata, one sample per stratum,
  // strata paired at random; value lists are drawn stratified the same way.
  std::vector<Scenario> out;
  std::mt19937_64 gen(c.seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  out.resize(c.samples);
  for (const auto& p : c.parameters) {
    std::vector<int> perm(c.samples);
    for (int i = 0; i < c.samples; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), gen);
    for (int i = 0; i < c.samples; ++i) {
      const double q = (perm[i] + u(gen)) / c.samples;
      out[i][p.name] = p.values.empty()
                           ? p.range[0] + q * (p.range[1] - p.range[0])
                           : p.values[std::min<std::size_t>(p.values.size() - 1,
                                                            std::size_t(q * p.values.size()))];
    }
  }
  return out;
}

ReservoirCase make_scenario_case(const SweepConfig& c, const Scenario& s, int index) {
  const int base = int(value_of(s, ScenarioTarget::BaseCase).value_or(0));
  if (base < 0 || base >= int(c.base_cases.size()))
    throw InputError(c.path,
                     std::string("parameters.") + scenario_parameter(ScenarioTarget::BaseCase).name,
                     "index out of the base_cases list");
  ReservoirCase rc = read_case(c.base_cases[base]);
  if (c.geostat) {
    try {
      apply_geostat_field(rc, scenario_geostat(c, s, index));
    } catch (const InputError& e) {
      throw InputError(c.path, "field", e.what());
    }
  }
  // The case's own values after the generated field, so that multipliers scale that field.
  bool perforation = false;
  for (const auto& [name, v] : s) {
    const ScenarioParameter* p = scenario_parameter(name);
    if (p && p->target == ScenarioTarget::Case) set_case_parameter(*p, rc, v);
    perforation = perforation || (p && (p->target == ScenarioTarget::PerforationTop ||
                                        p->target == ScenarioTarget::PerforationBottom));
  }
  if (perforation) set_perforation(rc, s);
  return rc;
}

}  // namespace ufno
