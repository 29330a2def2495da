#include "screening/HeadRegistry.hpp"

#include <iterator>
#include <optional>

#include "io/KpiHeadFile.hpp"
#include "runtime/TrainingDistance.hpp"
#include "screening/KpiHeads.hpp"

namespace ufno {

namespace {

// The KPI-stage kinds, in the order they are applied. `fallback`: what the KPIs take instead of
// a head fitted to another network, for the heads that read the network's output.
struct KindOfGroup {
  const char* group;
  const KpiHeadKind& kind;
  const char* fallback;
};
const KindOfGroup kKpiHeadKinds[] = {
    {HeadRegistry::kMaxDpGroup, kMaxDpHead, "the maximum dP comes from the field"},
    {HeadRegistry::kPlumeRadiusGroup, kPlumeRadiusHead,
     "the plume radius and area come from the field"},
    {HeadRegistry::kCo2MassGroup, kCo2MassHead, nullptr},
    {HeadRegistry::kDpEnvelopeGroup, kDpEnvelopeHead, "the area of review comes from the field"},
};
// The order in which heads fitted to another network are dropped (and their notes given).
const char* const kDropOrder[] = {HeadRegistry::kDpEnvelopeGroup, HeadRegistry::kMaxDpGroup,
                                  HeadRegistry::kPlumeRadiusGroup};

}  // namespace

HeadRegistry HeadRegistry::from_model_files(const std::vector<std::string>& paths,
                                            bool with_field_stage) {
  constexpr std::size_t n = std::size(kKpiHeadKinds);
  std::vector<std::optional<KpiHeadEstimator>> found(n);
  for (const auto& p : paths)
    for (std::size_t k = 0; k < n; ++k)
      if (!found[k]) found[k] = KpiHeadEstimator::from_model_file(p, kKpiHeadKinds[k].group);
  std::vector<std::unique_ptr<Head>> kpi_heads(n);
  for (std::size_t k = 0; k < n; ++k)
    if (found[k]) {
      kpi_heads[k] = std::make_unique<KpiStageHead>(std::move(*found[k]), kKpiHeadKinds[k].kind);
      kpi_heads[k]->validate();
    }
  // A head that reads the network's output corrects one network's field: with another (a
  // retrained or averaged model that kept the group) its inputs mean something else.
  HeadRegistry r;
  for (const char* group : kDropOrder)
    for (std::size_t k = 0; k < n; ++k) {
      if (kKpiHeadKinds[k].group != std::string(group) || !kpi_heads[k]) continue;
      const KpiHead& h = static_cast<const KpiStageHead&>(*kpi_heads[k]).estimator().head();
      if (!h.reads_network() || network_digest(h.path) == h.network_digest) continue;
      r.notes.push_back(h.path + ": " + h.group + " was fitted to another network; " +
                        kKpiHeadKinds[k].fallback);
      kpi_heads[k].reset();
    }
  if (with_field_stage) r.heads_ = read_field_heads(paths, r.notes);
  for (auto& h : kpi_heads)
    if (h) r.heads_.add(std::move(h));
  for (const auto& p : paths)
    if (auto prof = read_training_profile(p)) {
      check_profile_statistics(*prof);
      r.profiles.push_back(std::move(*prof));
    }
  return r;
}

const KpiHeadEstimator* HeadRegistry::estimator(const std::string& group) const {
  // The field stage may hold a head of the same group (the maximum-dP head's peak match).
  for (const auto& h : heads_.all())
    if (const auto* k = dynamic_cast<const KpiStageHead*>(h.get()); k && k->group() == group)
      return &k->estimator();
  return nullptr;
}

}  // namespace ufno
