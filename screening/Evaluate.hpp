#pragma once
// A case's KPIs from its fields: the rules of screening/Kpis.hpp, then the KPI-stage heads of a
// run's models (screening/HeadRegistry.hpp). The one path by which the web service, a sweep and
// ufno_kpis measure a case (the field stage has acted already, inside the prediction).
#include <optional>

#include "io/CaseFile.hpp"
#include "runtime/Predictor.hpp"
#include "screening/HeadRegistry.hpp"
#include "screening/Kpis.hpp"
#include "screening/PredictionFile.hpp"

namespace ufno {

// The fields of a one-case prediction when it holds both SG and dP (a run with one model has no
// KPIs); std::invalid_argument for a field named neither (runtime/FieldNames.hpp).
std::optional<CaseFields> case_fields(const Prediction& p);

Kpis evaluate(const ReservoirCase& c, const CaseFields& fields, const HeadRegistry& heads,
              const KpiOptions& o);

}  // namespace ufno
