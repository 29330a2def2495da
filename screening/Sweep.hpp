#pragma once
// Site-screening sweeps (`ufno_sweep --config sweep.json`): scenarios sampled from parameter
// ranges or lists (Latin hypercube or full grid, from a seed) around given base case files with
// multipliers, predicted through the batch path, and summarised as a KPI table (CSV, one row per
// scenario with its parameters). Resumable: scenario files, predictions and KPI rows are each
// written once under the output directory and reused by a rerun. docs/sweeps.md has the format.
#include <map>
#include <string>
#include <vector>

#include "core/RunOptions.hpp"
#include "screening/Decisions.hpp"
#include "screening/GeostatField.hpp"
#include "screening/Kpis.hpp"

namespace ufno {

struct SweepParameter {
  std::string name;            // one of screening/ScenarioParameters.cpp's table
  std::vector<double> range;   // {lo, hi}, or empty
  std::vector<double> values;  // a list, or empty
  int steps = 3;               // grid sampling of a range
};

struct SweepConfig {
  std::string path;
  std::vector<std::string> models, base_cases;
  std::string sampling = "lhs";  // or "grid"
  int samples = 10;
  unsigned long seed = 1;
  std::vector<SweepParameter> parameters;
  KpiOptions kpi;
  std::vector<int> keep_fields;  // scenario ids whose fields are kept; {-1}: all
  std::string out = "sweep_out";
  int ranks_per_case = 1;
  // "field": {"generator": "geostat", ...}: every scenario gets a generated permeability and
  // porosity field (on its base case's grid and active cells) instead of the base case's own.
  // Also switched on by any geostatistical parameter.
  bool geostat = false;
  GeostatParams geostat_defaults;

  // "verify": {"scenarios": N, "flow": "flow", "timeout_s": 600}: N scenarios, spread evenly over
  // the sweep, are also run with OPM Flow (in parallel with the predictions, resumably) and
  // each KPI's error is reported in verification.csv.
  int verify_scenarios = 0;
  std::string flow = "flow";
  double flow_timeout_s = 600;
  // "policy": "even" (the default: spread evenly, Flow beside the predictions) or
  // "uncertain-first": the scenarios whose decision is uncertain or whose input lies beyond the
  // intervals' calibration first, then evenly spread ones; Flow runs after the predictions.
  std::string verify_policy = "even";
  // "decisions": {"max_dP_bar": 80, ...}: thresholds on KPIs with intervals (Decisions.hpp).
  std::vector<DecisionThreshold> decisions;
  // What the results in `out` were computed from: the configuration, the models' and base
  // cases' bytes and the KPI rules' version. A rerun reuses results only under the same one.
  std::string fingerprint;
};

using Scenario = std::map<std::string, double>;

// Reads and checks the configuration (InputError naming the key), including that `out`, if it
// holds results, holds those of this very configuration.
SweepConfig read_sweep_config(const std::string& path);
std::vector<Scenario> sample_scenarios(const SweepConfig& c);

// The scenarios verified with Flow: n_verify of n, evenly spread (0 always among them).
std::vector<int> verified_scenarios(int n, int n_verify);
// Of n scenarios, `uncertain` first (evenly spread among them if there are more than
// n_verify), then evenly spread others up to n_verify; in increasing order.
std::vector<int> verified_scenarios(int n, int n_verify, const std::vector<int>& uncertain);

// "scenario_0007": the name of scenario i's files under the output directory.
std::string scenario_name(int i);
// The geostatistical parameters of scenario `index`: the configuration's defaults, overridden by
// the scenario's sampled values; the field seed is drawn from the sweep seed and the index unless
// sampled.
GeostatParams scenario_geostat(const SweepConfig& c, const Scenario& s, int index);
// Scenario `index`'s case: its base case, the generated field (geostat), then the scenario's
// values (screening/ScenarioParameters.hpp). InputError naming the configuration's key.
ReservoirCase make_scenario_case(const SweepConfig& c, const Scenario& s, int index);

// The output directory's record of the configuration its results come from.
inline constexpr const char* kSweepFingerprintFile = "sweep_fingerprint.txt";

// Runs the sweep on MPI_COMM_WORLD; returns the number of scenarios that failed.
int run_sweep(const SweepConfig& c, const RunOptions& run = {});

}  // namespace ufno
