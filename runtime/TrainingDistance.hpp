#pragma once
// How far a case lies from the models' training data (docs/kpis.md, "Distance from the training
// data"): each statistic of runtime/TrainingStatistics.hpp against its quantiles in the model
// file's profile (io/TrainingProfileFile.hpp), and the joint distance of all of them against the
// training cases' own. python/ufno/data/training_profile.py deviations() is the same rule.
#include <string>
#include <vector>

#include "io/TrainingProfileFile.hpp"

namespace ufno {

struct StatisticDeviation {
  std::string name;
  double value = 0, lo = 0, hi = 0;  // the case's value and the training data's range
  bool beyond = false;               // outside the range; otherwise in its outer 1 %
};

struct TrainingDistance {
  std::vector<StatisticDeviation> deviations;  // the statistics beyond or at the edge
  double joint = 0;                            // Mahalanobis distance of the statistics
  double joint_percentile = 0;  // the share of training cases nearer (0-100; 100: beyond all)
  bool joint_beyond = false;    // farther than every training case
  // Beyond the training data in some respect: KPIs' intervals are widened and flagged.
  bool beyond() const;
  // The names of the statistics beyond the range (and "joint" when the joint distance is).
  std::vector<std::string> beyond_names() const;
  // One warning per deviation, in words, naming the model file.
  std::vector<std::string> warnings(const std::string& model_path) const;
};

// "Beyond the range" starts this share of the range outside it (python's RANGE_TOLERANCE): the
// packs hold their inputs in float16, and a case at the sampler's own bound is inside.
constexpr double kRangeTolerance = 0.01;

// Checks that the profile's statistics are this build's (InputError naming the file otherwise).
void check_profile_statistics(const TrainingProfile& p);

// The case's statistics (training_statistics) placed against the profile.
TrainingDistance training_distance(const TrainingProfile& p, const std::vector<double>& stats);

}  // namespace ufno
