#include "screening/ScenarioParameters.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

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
// clang-format off
const ScenarioParameter kParameters[] = {
    {"INJ_RATE", T::Case, [](ReservoirCase& c, double v) { c.rate_mt_per_year = v; }, nullptr,
     kNoLimit, false, nullptr},
    {"TEMP", T::Case, [](ReservoirCase& c, double v) { c.temperature_c = v; }, nullptr, kNoLimit,
     false, nullptr},
    {"PRESSURE", T::Case, [](ReservoirCase& c, double v) { c.pressure_bar = v; }, nullptr,
     kNoLimit, false, nullptr},
    {"SWI", T::Case, [](ReservoirCase& c, double v) { c.swi = v; }, nullptr, kNoLimit, false,
     nullptr},
    {"VG_LAMBDA", T::Case, [](ReservoirCase& c, double v) { c.vg_lambda = v; }, nullptr, kNoLimit,
     false, nullptr},
    {"PERM_MULT", T::Case, scale_permeability, nullptr, 0, false, kPositive},
    {"PORO_MULT", T::Case, scale_porosity, nullptr, 0, false, kPositive},
    {"PERF_TOP", T::Perforation, nullptr, nullptr, 1, true, kLayer},
    {"PERF_BOTTOM", T::Perforation, nullptr, nullptr, 1, true, kLayer},
    {"BASE_CASE", T::BaseCase, nullptr, nullptr, 0, true, "indices start at 0"},
    {"KGEO", T::Geostat, nullptr, &GeostatParams::kgeo_md, kNoLimit, false, nullptr},
    {"SIGMA_LNK", T::Geostat, nullptr, &GeostatParams::sigma_lnk, kNoLimit, false, nullptr},
    {"CORR_R", T::Geostat, nullptr, &GeostatParams::corr_r_cells, kNoLimit, false, nullptr},
    {"CORR_Z", T::Geostat, nullptr, &GeostatParams::corr_z_cells, kNoLimit, false, nullptr},
    {"ANISOTROPY", T::Geostat, nullptr, &GeostatParams::anisotropy, kNoLimit, false, nullptr},
    {"PORO_MEAN", T::Geostat, nullptr, &GeostatParams::poro_mean, kNoLimit, false, nullptr},
    {"FIELD_SEED", T::Geostat, nullptr, nullptr, kNoLimit, false, nullptr},
};
// clang-format on

}  // namespace

const ScenarioParameter* scenario_parameter(const std::string& name) {
  for (const auto& p : kParameters)
    if (name == p.name) return &p;
  return nullptr;
}

void check_scenario_value(const std::string& path, const ScenarioParameter& p, double v) {
  const std::string key = std::string("parameters.") + p.name;
  const std::string why = physical_violation(p.name, v);
  if (!why.empty()) throw InputError(path, key, why);
  if (std::isnan(p.min)) return;
  if (!(p.min_inclusive ? v >= p.min : v > p.min)) throw InputError(path, key, p.below_min);
}

}  // namespace ufno
