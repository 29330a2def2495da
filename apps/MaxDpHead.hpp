#pragma once
// The maximum-dP KPI from the head a dP model file may carry (io/MaxDpHeadFile.hpp) instead of
// from the predicted field. Why: the maximum buildup is one near-well value, mostly at the first
// report time, and the dP network smooths that spike (its field maximum is low by a median 22 %
// on its validation cases); the head, fitted to Flow's maxima alone, is not biased
// (docs/kpis.md, "Maximum dP"). Its features are those of python/max_dp_head.py, computed here
// from the same encoded input, in the same order and precision.
#include <optional>
#include <string>
#include <vector>

#include "apps/Kpis.hpp"
#include "io/CaseFile.hpp"
#include "io/MaxDpHeadFile.hpp"

namespace ufno {

// Feature names in input order (python/max_dp_head.py FEATURES).
const std::vector<std::string>& max_dp_feature_names();

// The features of a whole-grid case (at least 13 radial cells, a multiple of 4).
std::vector<double> max_dp_features(const ReservoirCase& c);

class MaxDpEstimator {
 public:
  // Checks that the head's feature names are this build's (InputError naming the file).
  explicit MaxDpEstimator(MaxDpHead head);
  // The head of the dP model file at `path`, or nothing when it has none.
  static std::optional<MaxDpEstimator> from_model_file(const std::string& path);
  // The first head among a run's model files (only a dP model carries one).
  static std::optional<MaxDpEstimator> from_model_files(const std::vector<std::string>& paths);

  // A case's features may lie this fraction of the training range beyond it.
  static constexpr double kRangeMargin = 0.1;

  // max dP in bar, or nothing for a case outside the training cases' feature ranges (the head
  // would extrapolate; the field's maximum is used instead). The case must be on the head's grid
  // (InputError naming the case otherwise).
  std::optional<double> estimate_bar(const ReservoirCase& c) const;
  const MaxDpHead& head() const { return head_; }

 private:
  MaxDpHead head_;
};

// KPIs of a predicted case: max_dP_bar becomes the head's estimate when the case is inside its
// ranges (max_dp_from_head says so); max_dP_field_bar, the radius, depth and year stay the
// field's.
void apply_max_dp_head(Kpis& k, const MaxDpEstimator& e, const ReservoirCase& c);

}  // namespace ufno
