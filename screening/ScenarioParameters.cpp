#include "screening/ScenarioParameters.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "core/InputError.hpp"
#include "io/PhysicalLimits.hpp"

namespace ufno {

namespace {

constexpr double kNoLimit = NAN;

void scale_permeability(ReservoirCase& c, double v) {
  for (std::size_t i = 0; i < c.permx.size(); ++i) c.permx[i] *= v, c.permz[i] *= v;
}

void scale_porosity(ReservoirCase& c, double v) {
  for (auto& p : c.poro) p = std::min(1.0, p * v);
}

constexpr const char* kPositive = "multipliers must be positive";
constexpr const char* kLayer = "layers are numbered from 1";

using T = ScenarioTarget;
// The parameters beyond the case's own scalars.
const ScenarioParameter kOwnParameters[] = {
    {"PERM_MULT", T::Case, nullptr, scale_permeability, nullptr, 0, false, kPositive},
    {"PORO_MULT", T::Case, nullptr, scale_porosity, nullptr, 0, false, kPositive},
    {"PERF_TOP", T::PerforationTop, nullptr, nullptr, nullptr, 1, true, kLayer},
    {"PERF_BOTTOM", T::PerforationBottom, nullptr, nullptr, nullptr, 1, true, kLayer},
    {"BASE_CASE", T::BaseCase, nullptr, nullptr, nullptr, 0, true, "indices start at 0"},
    {"KGEO", T::Geostat, nullptr, nullptr, &GeostatParams::kgeo_md, kNoLimit, false, nullptr},
    {"SIGMA_LNK", T::Geostat, nullptr, nullptr, &GeostatParams::sigma_lnk, kNoLimit, false,
     nullptr},
    {"CORR_R", T::Geostat, nullptr, nullptr, &GeostatParams::corr_r_cells, kNoLimit, false,
     nullptr},
    {"CORR_Z", T::Geostat, nullptr, nullptr, &GeostatParams::corr_z_cells, kNoLimit, false,
     nullptr},
    {"ANISOTROPY", T::Geostat, nullptr, nullptr, &GeostatParams::anisotropy, kNoLimit, false,
     nullptr},
    {"PORO_MEAN", T::Geostat, nullptr, nullptr, &GeostatParams::poro_mean, kNoLimit, false,
     nullptr},
    {"FIELD_SEED", T::Geostat, nullptr, nullptr, nullptr, kNoLimit, false, nullptr},
};

// Every parameter: the case's scalars (set to the value; limited by their physical limits
// alone), then the others.
const std::vector<ScenarioParameter>& parameters() {
  static const std::vector<ScenarioParameter> all = [] {
    std::vector<ScenarioParameter> a;
    for (const PhysicalLimit* l : case_scalar_limits())
      a.push_back({l->name, T::Case, l->scalar, nullptr, nullptr, kNoLimit, false, nullptr});
    a.insert(a.end(), std::begin(kOwnParameters), std::end(kOwnParameters));
    return a;
  }();
  return all;
}

}  // namespace

const ScenarioParameter* scenario_parameter(const std::string& name) {
  for (const auto& p : parameters())
    if (name == p.name) return &p;
  return nullptr;
}

const ScenarioParameter& scenario_parameter(ScenarioTarget t) {
  if (t == T::Case || t == T::Geostat)
    throw std::logic_error("scenario_parameter: several parameters have this target");
  for (const auto& p : parameters())
    if (p.target == t) return p;
  throw std::logic_error("scenario_parameter: no parameter has this target");
}

void set_case_parameter(const ScenarioParameter& p, ReservoirCase& c, double v) {
  if (p.value)
    c.*p.value = v;
  else
    p.scale(c, v);
}

void check_scenario_value(const std::string& path, const ScenarioParameter& p, double v) {
  const std::string key = std::string("parameters.") + p.name;
  const std::string why = physical_violation(p.name, v);
  if (!why.empty()) throw InputError(path, key, why);
  if (std::isnan(p.min)) return;
  if (!(p.min_inclusive ? v >= p.min : v > p.min)) throw InputError(path, key, p.below_min);
}

}  // namespace ufno
