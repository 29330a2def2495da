#pragma once
// The heads of a run's model files, all five kinds in one place (runtime/Head.hpp), each with
// its stage: the dP field-scale head (field stage) and the maximum-dP, plume-radius, CO2-mass and
// dP-envelope heads (KPI stage). Each kind is taken from the first model file that carries it,
// read and validated when the registry is made, before anything runs; a head fitted to another
// network than its file's is left out with one note. The registry applies the KPI stage
// (screening/Evaluate.hpp) and hands its field stage to the prediction, which applies it inside
// (runtime/Predictor.hpp).
#include <memory>
#include <string>
#include <vector>

#include "io/TrainingProfileFile.hpp"
#include "runtime/Head.hpp"
#include "runtime/Heads.hpp"
#include "runtime/KpiHeadEstimator.hpp"

namespace ufno {

class HeadRegistry {
 public:
  static constexpr const char* kMaxDpGroup = "max_dp_head";
  static constexpr const char* kPlumeRadiusGroup = "plume_radius_head";
  static constexpr const char* kCo2MassGroup = "co2_mass_head";
  static constexpr const char* kDpEnvelopeGroup = "dp_envelope_head";

  // InputError naming the file and field for a malformed head. Without the field stage, the
  // field-scale head is not read: fields given to the KPIs alone (ufno_kpis) are final.
  static HeadRegistry from_model_files(const std::vector<std::string>& paths,
                                       bool with_field_stage = true);

  // Applies the heads of in's stage, in the registry's order.
  void apply(HeadInput& in) const { heads_.apply(in); }
  // The field stage, for the Predictor that runs the registry's models (the same head objects).
  Heads field_stage() const { return heads_.of_stage(HeadStage::Field); }

  // All the heads, the field stage's first.
  const std::vector<std::shared_ptr<const Head>>& heads() const { return heads_.all(); }
  // The head of a group, or null.
  const Head* find(const std::string& group) const { return heads_.find(group); }
  // The estimator of a KPI-stage head's group, or null.
  const KpiHeadEstimator* estimator(const std::string& group) const;

  // Heads found but not used, one line each (fitted to another network), of both stages.
  std::vector<std::string> notes;
  // The model files' training profiles (io/TrainingProfileFile.hpp), those that carry one: a
  // case beyond them gets its KPIs' intervals widened and flagged (screening/Evaluate.hpp).
  std::vector<TrainingProfile> profiles;

 private:
  Heads heads_;
};

}  // namespace ufno
