#pragma once
// The maximum dP a dP model's /max_dp_head gives for a whole case (docs/kpis.md, "Maximum dP"),
// shared by the KPI stage (screening/KpiHeads.hpp, the max_dP_bar a user reads) and the field
// stage (runtime/DpPeakMatch.hpp, which makes the dP field's peak that same value):
// - a head with physics_inputs = "max_dp" estimates log(max dP / Theis) from the 32 case
//   features and the three physics estimates (runtime/PressureEstimates.hpp), and a newer one
//   also the implicit two-phase estimate (its last input log_rz_implicit_two_phase_max_dp_bar,
//   log_rz_implicit_first_report_dp_bar, the estimate at the first report time, or
//   log_rz_gravity_two_phase_max_dp_bar, the buoyancy-aware estimate's maximum);
// - an older head that reads the network's envelope needs the case's whole dP field;
// - one with neither reads the 32 case features alone.
#include <optional>
#include <vector>

#include "io/CaseFile.hpp"
#include "runtime/KpiHeadEstimator.hpp"
#include "runtime/PressureEstimates.hpp"

namespace ufno {

// The estimate in bar, its interval scaled with it, or nothing for a case outside the head's
// ranges or whose physics estimates are not finite (no perforated layer at the well). `c` is the
// whole case; `dp` its whole field (T, X, Y), read only by a head that reads the envelope;
// `physics` the case's estimates when already computed (else computed here at `times_days`).
std::optional<HeadEstimate> max_dp_head_estimate(const KpiHeadEstimator& e, const ReservoirCase& c,
                                                 const std::vector<float>& dp,
                                                 const std::vector<double>& times_days,
                                                 const MaxDpPhysics* physics = nullptr);

}  // namespace ufno
