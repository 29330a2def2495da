#include "io/PhysicalLimits.hpp"

#include <cmath>

#include "core/InputError.hpp"
#include "core/NumberText.hpp"

namespace ufno {

namespace {

using C = ReservoirCase;
// Generous: deeper, hotter, tighter or more permeable than any storage site, but finite.
const PhysicalLimit kLimits[] = {
    {"INJ_RATE", 0, 100, true, "Mt/yr", &C::rate_mt_per_year},  // the largest inject a few Mt/yr
    {"TEMP", 0, 400, false, "degC", &C::temperature_c},     // supercritical geothermal stays below
    {"PRESSURE", 1, 2000, false, "bar", &C::pressure_bar},  // about 20 km of hydrostatic column
    {"SWI", 0, 1, false, "1", &C::swi},                     // checked as [0, 1) below
    {"VG_LAMBDA", 0, 1, true, "1", &C::vg_lambda},          // van Genuchten m = lambda in (0, 1]
    {"PERMX", 0, 1e6, false, "mD", nullptr},                // 1000 darcy: gravel
    {"PERMZ", 0, 1e6, false, "mD", nullptr},
    {"PORO", 0, 1, false, "1", nullptr},
    {"DR", 0, 1e6, true, "m", nullptr},
    {"DZ", 0, 1e4, true, "m", nullptr},
};

}  // namespace

const PhysicalLimit* physical_limit(const std::string& name) {
  for (const auto& l : kLimits)
    if (name == l.name) return &l;
  return nullptr;
}

std::vector<const PhysicalLimit*> case_scalar_limits() {
  std::vector<const PhysicalLimit*> s;
  for (const auto& l : kLimits)
    if (l.scalar) s.push_back(&l);
  return s;
}

std::string physical_violation(const std::string& name, double v) {
  if (!std::isfinite(v)) return "value " + number_text(v) + " is not finite";
  const PhysicalLimit* l = physical_limit(name);
  if (!l) return "";
  const bool low_ok = l->lo_open ? v > l->lo : v >= l->lo;
  const bool high_ok = name == "SWI" ? v < l->hi : v <= l->hi;
  if (low_ok && high_ok) return "";
  return number_text(v) + " " + l->units + " is physically impossible (allowed " +
         (l->lo_open ? "(" : "[") + number_text(l->lo) + ", " + number_text(l->hi) +
         (name == "SWI" ? ")" : "]") + ")";
}

void check_physical(const std::string& file, const std::string& name, double v,
                    const std::string& where) {
  const std::string why = physical_violation(name, v);
  if (!why.empty()) throw InputError(file, name, why + where);
}

}  // namespace ufno
