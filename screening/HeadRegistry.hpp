#pragma once
// The heads of a run's model files, all five kinds in one place (runtime/Head.hpp): the dP
// field-scale head (field stage) and the maximum-dP, plume-radius, CO2-mass and dP-envelope
// heads (KPI stage). Each kind is taken from the first model file that carries it, read and
// validated when the registry is made, before anything runs; a head fitted to another network
// than its file's is left out with one note.
#include <memory>
#include <string>
#include <vector>

#include "runtime/Head.hpp"
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

  // Applies the heads of in's stage, in the registry's order. The field stage runs inside the
  // prediction (runtime/Predictor.cpp, which holds its own field-scale heads below screening/);
  // the registry's is read here so that a run refuses a malformed one before it starts.
  void apply(HeadInput& in) const;

  const std::vector<std::unique_ptr<Head>>& heads() const { return heads_; }
  // The head of a group, or null.
  const Head* find(const std::string& group) const;
  // The estimator of a KPI-stage head's group, or null.
  const KpiHeadEstimator* estimator(const std::string& group) const;

  // KPI heads found but not used, one line each (fitted to another network). A field-scale head
  // fitted to another network is reported by the prediction that leaves it out.
  std::vector<std::string> notes;

 private:
  std::vector<std::unique_ptr<Head>> heads_;
};

}  // namespace ufno
