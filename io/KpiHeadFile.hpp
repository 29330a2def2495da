#pragma once
// A KPI head a model file may carry (a group such as /max_dp_head or /plume_radius_head,
// docs/model-format.md): an ensemble of small MLPs (features -> hidden -> hidden -> outputs,
// exact GELU) that estimates log(KPI) per output from features of the case
// (python/ufno/heads/common.py trains them). Read and checked here; runtime/KpiHeadEstimator.hpp
// computes the features and evaluates it.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "io/TrainingProfileFile.hpp"

namespace ufno {

struct DenseLayer {
  int in = 0, out = 0;
  std::vector<double> weight;  // (out, in) row-major, as torch.nn.Linear
  std::vector<double> bias;    // out
};

// A head's prediction interval (python/ufno/heads/intervals.py, docs/kpis.md "Intervals"):
// split-conformal quantiles of log(Flow / estimate) over calibration cases the head was not fitted
// on, per bin of the case's feature distance and per output.
struct HeadInterval {
  double coverage = 0;                 // 0.9 for a 90 % interval; 0: the head carries none
  std::vector<double> distance_edges;  // bins - 1 increasing distances between the bins
  std::vector<double> log_lo, log_hi;  // (bins, outputs), row-major
  double distance_limit = 0;           // the farthest calibration case's distance
  std::string calibration;             // what the quantiles were computed on, in words
  // A per-case scale of the log bounds (intervals.py SCALES): "" for none, or
  // "field_radius_disagreement" (a plume head that reads plume radii, the network's or the
  // buoyancy-aware solve's, as its last inputs: scale_floor + the RMS of log(head's radius / the
  // radius it reads) over the report times within scale_window of the output's, or over all of
  // them when scale_window is -1).
  std::string scale;
  double scale_floor = 0;
  int scale_window = -1;
  // A factor (joint / joint_reference)^joint_exponent of the log bounds, joint the case's joint
  // distance from the model's training data against `profile`, the model file's own
  // (runtime/TrainingDistance.hpp; intervals.py joint_factor). No profile: no factor.
  double joint_exponent = 0, joint_reference = 0;
  std::optional<TrainingProfile> profile;
  bool present() const { return coverage > 0; }
};

enum class MaxDpExtraInputs {
  none,
  implicit_max,
  implicit_first_report,
  gravity_max,
  gravity_summary
};

struct KpiHead {
  std::string path, group;
  std::vector<std::string> features;  // names, in input order
  std::array<int, 2> grid{};          // (X, Y) the features are defined on
  std::vector<double> feature_mean, feature_std;
  std::vector<double> feature_min, feature_max;  // over the training cases
  std::vector<double> target_mean, target_std;   // per output
  std::vector<double> times_days;                // per output, for a head over report times
  double sg_threshold = 0;                       // the plume threshold a plume head was fitted to
  // A head that also reads the network's own dP envelope: the radial columns it reads and the
  // floor under its logarithm.
  std::vector<int> envelope_columns;
  double envelope_floor_bar = 0;
  // A plume head that also reads the SG network's own plume radius at each of its report times:
  // the floor under their logarithm (0: a head on the case features alone).
  double field_plume_radius_floor_m = 0;
  // "max_dp": a maximum-dP head that also reads the three physics estimates of
  // runtime/PressureEstimates.hpp (max_dp_physics_features) and estimates log(Flow's maximum
  // dP / Theis), so that its KPI is Theis x its output (empty: none). "envelope": a dP-envelope
  // head that reads those three and the r-z solve's envelope at physics_columns (its inputs
  // named log_rz_envelope_r<column>) instead of the network's envelope, then, if its inputs go
  // on with log_rz_gravity_envelope_r<column>, the buoyancy-aware solve's envelope at
  // physics_gravity_columns. "plume_radius": a plume-radius head that reads the buoyancy-aware
  // solve's plume radius at each of its report times (its inputs named
  // log_rz_gravity_plume_radius_t<k>, floored at 1 m), before any of the network's radii. The
  // others not with reads_network().
  std::string physics_inputs;
  std::vector<int> physics_columns;
  std::vector<int> physics_gravity_columns;
  // Which of the buoyancy-aware solve's dissolution models those columns are from, by its name
  // in python/ufno/heads/physics.py DISSOLUTION_MODELS: "pore_volume" (inputs named
  // log_rz_gravity_envelope_r<column>) or "brine" (log_rz_gravity_brine_envelope_r<column>).
  std::string physics_gravity_dissolution;
  // "gravity_envelope": a dP-envelope head that estimates log(Flow's envelope / the
  // buoyancy-aware solve's) at every radial column, the solve's (of physics_gravity_dissolution,
  // floored at 0.01 bar) its baseline: the envelope is the baseline times the head's output, and
  // so are its bounds. Empty: the head estimates the envelope itself.
  std::string envelope_baseline;
  // What a maximum-dP head with physics inputs reads after the three physics estimates, set from
  // its feature names (runtime/KpiHeadEstimator.cpp): nothing, the implicit two-phase r-z
  // estimate's maximum or its first-report value, the buoyancy-aware estimate's maximum, or that
  // maximum, its first-report value and the report day of the maximum
  // (runtime/PressureEstimates.hpp).
  MaxDpExtraInputs physics_extra = MaxDpExtraInputs::none;
  // The digest of the network a head that reads its output was fitted with (network_digest).
  std::string network_digest;
  bool reads_network() const { return !envelope_columns.empty() || field_plume_radius_floor_m > 0; }
  std::vector<std::array<DenseLayer, 3>> members;
  HeadInterval interval;
  int outputs() const { return int(target_mean.size()); }
};

// The head in group `group` of the model file at `path`, or nothing when the file has none. A
// head that is there but malformed (shapes that do not chain, non-finite values, a zero std,
// sizes beyond any head this project trains, times that do not increase) is an InputError
// naming the file and the field.
std::optional<KpiHead> read_kpi_head(const std::string& path, const std::string& group);

// FNV-1a (64 bit, 16 hex digits) over the network of a model file: its root datasets in name
// order, each as its name then its values as little-endian float32 (python/ufno/heads/common.py
// network_digest computes the same). Heads live in groups, so they do not change it.
std::string network_digest(const std::string& path);

}  // namespace ufno
