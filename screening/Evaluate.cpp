#include "screening/Evaluate.hpp"

#include "runtime/FieldNames.hpp"
#include "screening/KpiHeads.hpp"

namespace ufno {

std::optional<CaseFields> case_fields(const Prediction& p) {
  const std::vector<float>*sg = nullptr, *dp = nullptr;
  for (const auto& f : p.fields) (field_kind(f.name) == FieldKind::SG ? sg : dp) = &f.values;
  if (!sg || !dp) return std::nullopt;
  return CaseFields{*sg, *dp, p.times_days};
}

Kpis evaluate(const ReservoirCase& c, const CaseFields& f, const HeadRegistry& heads,
              const KpiOptions& o) {
  Kpis k = compute_kpis(c, f.sg, f.dp, f.times_days, o);
  KpiHeadInput in(k, c, f.sg, f.dp, f.times_days, o);
  heads.apply(in);
  return k;
}

}  // namespace ufno
