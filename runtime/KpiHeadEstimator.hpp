#pragma once
// Evaluates a KPI head (io/KpiHeadFile.hpp) on a case: the features of
// runtime/KpiHeadFeatures.hpp, normalised, through every member in double precision, the members'
// outputs averaged and un-normalised to log(KPI), then exp. Equal to python/ufno/heads/common.py's
// Head.predict to rounding.
#include <optional>
#include <string>
#include <vector>

#include "io/CaseFile.hpp"
#include "io/KpiHeadFile.hpp"

namespace ufno {

// A head's estimate of one case with its interval (all per output).
struct HeadEstimate {
  std::vector<double> value;
  std::vector<double> lo, hi;  // empty when the head carries no interval
  double distance = 0;         // the case's feature distance (python/ufno/heads/intervals.py)
  bool far = false;            // beyond the farthest calibration case: interval widened, untrusted
  // distance / the calibration's largest (1: as far as the farthest calibration case); 0 when
  // the head carries no interval.
  double distance_ratio = 0;
};

// The inputs a maximum-dP head with physics inputs may read after the three physics estimates,
// by their names (python/ufno/heads/physics.py EXTRA_INPUTS): a head's feature names end with
// one of these, or with none.
struct MaxDpExtraNames {
  MaxDpExtraInputs inputs;
  std::vector<std::string> names;
};
const std::vector<MaxDpExtraNames>& max_dp_extra_names();

class KpiHeadEstimator {
 public:
  // Checks that the head's feature names are this build's (InputError naming the file).
  explicit KpiHeadEstimator(KpiHead head);
  // The head in `group` of the model file at `path`, or nothing when it has none. Its grid must
  // be the model's (InputError naming the file otherwise: it would fail on every case).
  static std::optional<KpiHeadEstimator> from_model_file(const std::string& path,
                                                         const std::string& group);

  // A case's features may lie this fraction of the training range beyond it.
  static constexpr double kRangeMargin = 0.1;

  // The KPI per output, or nothing for a case outside the training cases' feature ranges (the
  // head would extrapolate; the field's value is used instead). The case must be on the head's
  // grid (InputError naming the case otherwise). `extra`: the inputs after the 32 case features
  // of a head that has more (the network's envelope or plume radii); their count must match.
  std::optional<std::vector<double>> estimate(const ReservoirCase& c,
                                              const std::vector<double>& extra = {}) const;
  // The same from all of the head's inputs, already computed (the 32 case features, then the
  // extra ones).
  std::optional<std::vector<double>> estimate(std::vector<double> inputs) const;
  // The same with the head's interval for the case (python/ufno/heads/intervals.py interval).
  std::optional<HeadEstimate> estimate_with_interval(const ReservoirCase& c,
                                                     const std::vector<double>& extra = {}) const;
  // The interval's log widening beyond the farthest calibration case.
  static constexpr double kFarWidening = 2.0;
  const KpiHead& head() const { return head_; }

 private:
  KpiHead head_;
};

}  // namespace ufno
