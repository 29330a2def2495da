#pragma once
// Decision thresholds of a sweep (docs/sweeps.md, "Decisions"): a limit on a KPI that has an
// interval (a fracture or critical pressure on max_dP_bar, a lease radius on
// plume_radius_m_30yr, an area-of-review limit), and for each scenario whether the KPI's 90 %
// interval lies below it, above it, or across it. A KPI without an interval (the field's value,
// a model file without calibration) is undecided: only Flow can settle it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "screening/Kpis.hpp"

namespace ufno {

struct DecisionThreshold {
  std::string kpi;  // a KPI column of the table with an interval (max_dP_bar, ...)
  double value;     // in the column's unit
};

enum class Decision { Below = -1, Uncertain = 0, Above = 1 };

// The "decisions" object of a sweep configuration, {"max_dP_bar": 80, "plume_radius_m_30yr":
// {"value": 3, "unit": "km"}}: a number in the column's unit, or a value with a unit the column
// takes (bar, MPa, psi; m, km; Mt, kt). InputError(path, "decisions.<key>", ...) for a key that
// is not a KPI with an interval at the sweep's years, or a value that is not a positive finite
// number in a unit of that kind.
std::vector<DecisionThreshold> read_decisions(const nlohmann::json& d, const std::string& path,
                                              const KpiOptions& o);

// The decision on one KPI row (kpi_header(o)'s columns, kpi_row's values).
Decision decide(const DecisionThreshold& t, const std::vector<std::string>& header,
                const std::vector<double>& row);

// The CSV column of a threshold's decision: decision_<kpi>.
std::string decision_column(const DecisionThreshold& t);

}  // namespace ufno
