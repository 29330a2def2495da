#pragma once
// Density of pure CO2 [kg/m3] from OPM's Span-Wagner tables (opm-material's co2tables.inc, the
// tables OPM Flow's CO2STORE uses): so the mass a KPI puts in a plume is the mass Flow would hold
// there, not a fixed density that is wrong by a factor of 2-5 between a cold, deep site and a hot,
// shallow one. The tables cover 280-400 K and 1-1000 bar; outside, values are extrapolated.
namespace ufno {

double co2_density_kg_m3(double temperature_c, double pressure_bar);

}  // namespace ufno
