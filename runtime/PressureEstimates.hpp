#pragma once
// Physics estimates of a case's pressure buildup, the C++ twin of python/ufno/heads/physics.py
// (the source of truth; equal to it to ~1e-9 relative, tests/test_pressure_estimates.cpp): the
// Theis line source at the first cell centre, the single-phase r-z finite-volume solve on the
// case's grid and the two-phase (Buckley-Leverett) correction the grid's first cell sees. A
// maximum-dP head with physics_inputs = "max_dp" reads three of them (max_dp_physics_features)
// after the 32 case features and estimates log(Flow's maximum dP / Theis).
//
// SI inside (Pa, m, s, m2, Pa s, 1/Pa); the case's units outside (bar, mD, degC, Mt/yr, days).
// Fluid properties are opm-material's, as OPM Flow's CO2STORE computes them for the decks
// (salinity 0): brine density SimpleHuDuanH2O, brine viscosity Brine (Batzle & Wang), CO2
// density the Span-Wagner table (runtime/Co2Density.hpp), CO2 viscosity CO2::gasViscosity.
#include <array>
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

// What the estimates derive from a case (physics.py `properties`, the part they use).
struct PressureProperties {
  double r_centre0 = 0;  // first radial cell centre, DR[0] / 2 [m] (cumulative DR, as the KPIs)
  double p_perf = 0;     // initial pressure at the perforations' mean mid-depth [bar]
  double kh_perf = 0;    // perforated layers' kx dz at the well column [m3]
  double h_perf = 0;     // perforated thickness [m]
  double phi_perf = 0;   // perforated layers' thickness-weighted porosity
  double mu_w = 0;       // brine viscosity [Pa s]
  double mu_g = 0;       // CO2 viscosity at p_perf [Pa s]
  double c_w = 0;        // brine compressibility at the well column's mid-depth [1/Pa]
  double c_t = 0;        // c_w + the decks' rock compressibility [1/Pa]
  double rho_co2 = 0;    // CO2 density at p_perf [kg/m3]
  double q = 0;          // injection rate at reservoir conditions [m3/s]
};

// The case must be whole (not a rank's block) and have an active perforated layer at the well
// (otherwise the perforated quantities are NaN, as physics.py's).
PressureProperties pressure_properties(const ReservoirCase& c);

// Fluid properties (physics.py's functions of the same names).
double brine_density_kg_m3(double temperature_c, double pressure_bar);
double brine_compressibility_per_pa(double temperature_c, double pressure_bar);
double brine_viscosity_pa_s(double temperature_c);
double co2_viscosity_pa_s(double temperature_c, double pressure_bar);

// E1(x) = integral_x^inf exp(-s) / s ds, x > 0 (series for x <= 1, continued fraction above).
double exponential_integral_e1(double x);
// Theis line-source buildup [Pa]: r [m], t [s], q [m3/s], mu [Pa s], k [m2], h [m], ct [1/Pa].
double theis_dp_pa(double r, double t, double q, double mu, double k, double h, double phi,
                   double ct);

// Theis at the first cell centre, 1 day, the perforated k h [bar] (physics.py theis_max_dp_bar).
double theis_max_dp_bar(const ReservoirCase& c);

// Single-phase brine buildup [bar] (T, X, Y) row-major at the report times `times_days` (empty:
// the paper's 24): implicit Euler (first_steps geometric steps to the first report from a
// thousandth of it, substeps per later interval) on the decks' two-point r-z system with a well
// node over the perforations and closed boundaries, by block-tridiagonal elimination over the
// radial columns (physics.py rz_single_phase_dp_bar for one case).
std::vector<double> rz_single_phase_dp_bar(const ReservoirCase& c,
                                           const std::vector<double>& times_days, int substeps = 4,
                                           int first_steps = 8);

// The two-phase correction of the first cell's buildup [bar] (T,) as the radial grid sees it
// (physics.py grid_two_phase_correction_bar).
std::vector<double> grid_two_phase_correction_bar(const ReservoirCase& c,
                                                  const std::vector<double>& times_days);

// The two-phase buildup [bar] (T, X, Y) as a fully implicit simulator with one step per report
// interval sees it: each step iterates the r-z pressure system (connections at their upstream
// cells' total mobility) and the upstream implicit saturations, the injected volume at the
// well's pressure less the CO2 that dissolves (physics.py rz_implicit_two_phase_dp_bar).
std::vector<double> rz_implicit_two_phase_dp_bar(const ReservoirCase& c,
                                                 const std::vector<double>& times_days);
// Its largest value in the well's column over layers and report times [bar]: a maximum-dP head
// whose inputs end with log_rz_implicit_two_phase_max_dp_bar reads log(max(this, 1e-3)).
double rz_implicit_two_phase_max_dp_bar(const ReservoirCase& c,
                                        const std::vector<double>& times_days);
// Its largest value in the well's column over layers at the first report time [bar], from the
// solve's first step alone (physics.py implicit_first_report_dp_bar): a maximum-dP head whose
// inputs end with log_rz_implicit_first_report_dp_bar reads log(max(this, 1e-3)).
double rz_implicit_first_report_dp_bar(const ReservoirCase& c,
                                       const std::vector<double>& times_days);

// The same with buoyancy (physics.py rz_gravity_two_phase_dp_bar) [bar] (T, X, Y): vertical
// connections carry each phase at its upstream cell in that phase's own potential (CO2's falls
// short of brine's by (rho_brine - rho_CO2) g dz, so CO2 rises while brine sinks), an injecting
// well's bore holds CO2 (its connections' pressure rises with depth by CO2's gradient), and each
// step's saturations move the column's CO2 by its potential (12 sweeps of a column's layers).
// With gravity 0 it differs from rz_implicit_two_phase_dp_bar only in taking the vertical
// connections' upstream total mobility in place of the two cells' mean.
constexpr double kStandardGravity = 9.80665;  // physics.GRAVITY [m/s2]
// Where the injected CO2 dissolves (physics.py DISSOLUTION_MODELS): kPoreVolume, the whole pore
// volume of every cell the front has touched (gas above 1e-6; what the maximum-dP and
// plume-radius heads read), or kBrine, the brine (1 - S of the pore volume) of the cells the
// plume holds (gas above 0.05), whose far field is Flow's more closely (docs/kpis.md, "Area of
// review").
enum class Dissolution { kPoreVolume = 0, kBrine = 1 };
std::vector<double> rz_gravity_two_phase_dp_bar(const ReservoirCase& c,
                                                const std::vector<double>& times_days,
                                                double gravity = kStandardGravity,
                                                Dissolution dissolution = Dissolution::kPoreVolume);
// Its largest value in the well's column over layers and report times [bar] (physics.py
// gravity_max_dp_bar): a maximum-dP head whose inputs end with
// log_rz_gravity_two_phase_max_dp_bar reads log(max(this, 1e-3)). It catches the late maximum
// at the top of the gas column at the well, which the implicit estimate misses.
double rz_gravity_two_phase_max_dp_bar(const ReservoirCase& c,
                                       const std::vector<double>& times_days);
// The buoyancy-aware estimate's well column summarised (physics.py gravity_summary_features,
// before their logarithms): the largest value over layers and report times [bar] (the above),
// the largest over layers at the first report time [bar], and the report day of the maximum
// (the first report time that reaches it). A maximum-dP head whose inputs end with
// log_rz_gravity_two_phase_max_dp_bar, log_rz_gravity_first_report_dp_bar and
// log_rz_gravity_max_day reads their logarithms (the two buildups floored at 1e-3 bar): whether
// the maximum is the first day's spike at the well or a gas column's later one. With them, from
// the same solve, its envelope: the largest value over report times and layers per radial column
// [bar] (Y), which a dP-envelope head whose inputs include log_rz_gravity_envelope_r<column>
// reads as log(max(envelope, 0.01)) (physics.py gravity_envelope_bar). And the plume radius of
// its gas saturation at each report time [m] (T), by the KPI rule (runtime/PlumeFront.hpp) at
// SG 0.01, a running maximum: a plume-radius head with physics_inputs = "plume_radius" reads
// log(max(radius, 1 m)) (python/ufno/heads/plume_radius.py gravity_radii).
constexpr double kGravityPlumeThreshold = 0.01;
struct GravitySummary {
  double max_bar = 0, first_report_bar = 0, max_day = 0;
  std::vector<double> envelope_bar;
  std::vector<double> plume_radius_m;
};
GravitySummary rz_gravity_two_phase_summary(const ReservoirCase& c,
                                            const std::vector<double>& times_days,
                                            Dissolution dissolution = Dissolution::kPoreVolume);

// The inputs a maximum-dP head with physics_inputs = "max_dp" reads after the 32 case
// features (physics.py max_dp_physics_features), with col0[t] the r-z solve's largest buildup
// over the well column's layers and g2ph the two-phase correction:
//   log(max(theis, 1e-3)), log(max(max_t max(col0[t] + g2ph[t], 0.05), 1e-3)),
//   log(max(col0[0], 1e-3)).
struct MaxDpPhysics {
  std::array<double, 3> features{};
  double theis_bar = 0;
  // The r-z solve's envelope: its largest buildup over report times and layers per radial
  // column [bar] (Y), which a dP-envelope head with physics_inputs = "envelope" reads at its
  // columns as log(max(envelope, 0.01)) after the three features (physics.py
  // envelope_physics_features_x0).
  std::vector<double> rz_envelope_bar;
};
MaxDpPhysics max_dp_physics_features(const ReservoirCase& c, const std::vector<double>& times_days);
// Their names (physics.py PHYSICS_FEATURE_NAMES).
const std::vector<std::string>& max_dp_physics_feature_names();

// The report times a case's estimates run on when `times_days` came with its fields: the case's
// own TIMES where those are the same to float precision (a prediction file stores them as
// float32), else the paper's where those are, else `times_days`. The dP field's peak match and
// the KPI stage reading the written file then run each estimate on the same times and agree
// (the estimates move with the last digits of their times in some cases).
std::vector<double> estimate_times_days(const ReservoirCase& c,
                                        const std::vector<double>& times_days);

}  // namespace ufno
