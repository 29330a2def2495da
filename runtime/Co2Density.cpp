#include "runtime/Co2Density.hpp"

#include <algorithm>
// The tables are GPL data from opm-common, which ufno already links for decks.
#include <opm/material/common/UniformTabulated2DFunction.hpp>
#include <opm/material/components/CO2.hpp>
#include <opm/material/components/co2tables.inc>

namespace ufno {

double co2_density_kg_m3(double temperature_c, double pressure_bar) {
  using Co2 = Opm::CO2<double, ::CO2Tables>;
  // Clamped to the tables' range: a KPI needs a sane density, not an extrapolated one.
  const double t = std::clamp(temperature_c + 273.15, 280.0, 400.0);
  const double p = std::clamp(pressure_bar * 1e5, 1e5, 1e8);
  return Co2::gasDensity(t, p, /*extrapolate=*/false);
}

}  // namespace ufno
