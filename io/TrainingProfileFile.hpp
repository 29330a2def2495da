#pragma once
// The training data's profile stored in a model file (group /training_profile, written by
// `python3 -m ufno.training_profile`; docs/model-format.md): per statistic of a case its
// quantiles over the training cases, and the joint (Mahalanobis) model of the statistics with the
// training cases' own joint distances. runtime/TrainingDistance.hpp places a case against it.
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace ufno {

struct TrainingProfile {
  // The quantile levels every profile stores, in this order.
  static constexpr std::array<double, 5> kLevels{0.0, 0.005, 0.5, 0.995, 1.0};
  std::string path;
  std::string data;                              // what the training cases were, in words
  long cases = 0;                                // how many
  std::vector<std::string> names;                // the statistics, in order
  std::vector<std::array<double, 5>> quantiles;  // per statistic, at kLevels
  std::vector<double> mean;                      // per statistic
  std::vector<double> inverse_covariance;        // (S, S) row-major
  std::array<double, 5> distance_quantiles{};    // the training cases' joint distances at kLevels
};

// The profile of the model file at `path`, or nothing when it has none; an InputError naming the
// file and the attribute or dataset for a malformed one.
std::optional<TrainingProfile> read_training_profile(const std::string& path);

}  // namespace ufno
