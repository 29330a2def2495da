#pragma once
// The dP field's peak made the maximum dP a user reads (docs/kpis.md, "The field's peak"): the
// network smooths the near-well spike of the buildup, and the dP model's /max_dp_head
// (runtime/MaxDpHead.hpp) estimates the maximum better than the field does. This field-stage
// head, after the field-scale head, maps each case's field so that its largest value over the
// formation and the report times is the head's estimate H, changing the cells near that peak and
// hardly any other:
//   dp' = dp (1 + a w^p),  a = H / M - 1,  w = clamp(dp / M, 0, 1),  M the field's maximum,
// with p = kSharpness, lowered to -1/a - 1 when the peak comes down (a < 0) so that the map
// stays increasing: the peak stays where and when it was, and is H. Measured on the test split,
// this leaves the field's mean error where it was (docs/accuracy.md, "The field's peak").
//
// It needs the whole case (the head reads the layer thicknesses and the r-z physics estimates,
// which the encoded input does not hold): a pass from encoded tensors keeps the network's peak.
// A case outside the head's ranges, or a head that reads the network's own envelope (an older
// model file), keeps the field's peak too, as the KPI stage then keeps the field's maximum.
#include <optional>
#include <string>
#include <vector>

#include "runtime/Head.hpp"
#include "runtime/KpiHeadEstimator.hpp"

namespace ufno {

class DpPeakMatch : public Head {
 public:
  static constexpr const char* kGroup = "max_dp_head";
  static constexpr double kSharpness = 16;
  // The peak is moved by at most these factors (as the field-scale head's factors): no head,
  // however malformed, makes the field absurd.
  static constexpr double kMinRatio = 0.25, kMaxRatio = 4.0;

  // The maximum-dP head of the dP model file at `path` as a field-stage head, or nothing when
  // the file has none or its head reads the network's envelope. InputError naming the file and
  // field for a malformed head.
  static std::optional<DpPeakMatch> from_model_file(const std::string& path);

  HeadStage stage() const override { return HeadStage::Field; }
  const std::string& group() const override { return e_.head().group; }
  bool reads_whole_cases() const override { return true; }
  void validate() const override;
  // Maps each case of the field stage's block whose whole case it was handed (collective over
  // its communicator: the field's maximum is over every rank's block).
  void apply(HeadInput& in) const override;

  // The map of one value: `field_max` the field's maximum M, `target` the head's H.
  static float matched(float dp, double field_max, double target);
  // The exponent p the map uses for a peak moved from M to H.
  static double exponent(double field_max, double target);

 private:
  explicit DpPeakMatch(KpiHeadEstimator e) : e_(std::move(e)) {}
  std::vector<std::optional<HeadEstimate>> head_estimates(const FieldHeadInput& fin) const;
  KpiHeadEstimator e_;
};

}  // namespace ufno
