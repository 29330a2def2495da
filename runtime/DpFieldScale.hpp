#pragma once
// The dP field-scale head a dP model file may carry (/dp_field_scale_head,
// python/ufno/heads/dp_field_scale.py; docs/kpis.md, "The dP field-scale head"): one factor per
// radial column of a case, estimated from the 32 case features and the network's own envelope,
// that the network's dP field is multiplied by before anything reads it. The network's field is
// off by such factors (the far field and the late times), and the head was fitted to the
// factors that best map the network's fields onto Flow's over the training cases.
// The factor is clipped to [kMinFactor, kMaxFactor]; a case outside the head's training ranges
// keeps the network's field; a head fitted to another network is not used (one note).
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "core/WeightSource.hpp"
#include "io/CaseFile.hpp"
#include "runtime/Head.hpp"
#include "runtime/KpiHeadEstimator.hpp"

namespace ufno {

class DpFieldScale : public Head {
 public:
  static constexpr const char* kGroup = "dp_field_scale_head";
  static constexpr double kMinFactor = 0.25, kMaxFactor = 4.0;

  // The head of the dP model file at `path`, checked (InputError naming the file and field for a
  // malformed one), or nothing when the file has none; also nothing, with `note` set, when it was
  // fitted to another network than the file's.
  static std::optional<DpFieldScale> from_model_file(const std::string& path, std::string& note);

  HeadStage stage() const override { return HeadStage::Field; }
  const std::string& group() const override { return e_.head().group; }
  // One factor per radial column, from the network's envelope over columns of the grid.
  void validate() const override;
  // Multiplies the field stage's block of the dP field by each case's factors (a FieldHeadInput).
  void apply(HeadInput& in) const override;

  // One case on the whole grid: its encoded input at the first report time (X, Y, C) and the
  // network's envelope per radial column (the largest dP over report times and formation
  // layers; -inf for a column without formation). The factor per radial column, or nothing for
  // a case outside the head's ranges.
  std::optional<std::vector<double>> factors(const std::vector<float>& first_input, int X, int Y,
                                             const std::vector<double>& envelope) const;

 private:
  explicit DpFieldScale(KpiHeadEstimator e) : e_(std::move(e)) {}
  KpiHeadEstimator e_;
};

}  // namespace ufno
