#include "screening/Decisions.hpp"

#include <algorithm>
#include <cmath>

#include "core/InputError.hpp"
#include "screening/KpiTable.hpp"

namespace ufno {

namespace {

// The units a threshold may be given in, per unit of the table's columns: factor to the
// column's unit.
struct UnitFactor {
  const char* column_unit;
  const char* unit;
  double factor;
};
constexpr UnitFactor kUnits[] = {
    {"bar", "bar", 1.0}, {"bar", "MPa", 10.0}, {"bar", "psi", 0.0689476}, {"m", "m", 1.0},
    {"m", "km", 1000.0}, {"Mt", "Mt", 1.0},    {"Mt", "kt", 1e-3}};

std::string units_of(const std::string& column_unit) {
  std::string s;
  for (const auto& u : kUnits)
    if (column_unit == u.column_unit) s += (s.empty() ? "" : ", ") + std::string(u.unit);
  return s;
}

// The column `key` names and its unit, when it is a KPI with an interval.
const KpiCsvColumn* interval_kpi(const std::vector<KpiCsvColumn>& cols, const std::string& key) {
  for (std::size_t i = 0; i < cols.size(); ++i)
    if (cols[i].header == key && interval_columns(cols, i)) return &cols[i];
  return nullptr;
}

double threshold_value(const nlohmann::json& v, const KpiCsvColumn& col, const std::string& path,
                       const std::string& field) {
  const std::string unit = col.kpi->unit;
  double value = 0, factor = 1;
  if (v.is_number()) {
    value = v.get<double>();
  } else if (v.is_object() && v.contains("value") && v["value"].is_number() && v.size() <= 2 &&
             (v.size() == 1 || (v.contains("unit") && v["unit"].is_string()))) {
    value = v["value"].get<double>();
    if (v.contains("unit")) {
      const std::string given = v["unit"].get<std::string>();
      const auto u = std::find_if(std::begin(kUnits), std::end(kUnits), [&](const UnitFactor& f) {
        return unit == f.column_unit && given == f.unit;
      });
      if (u == std::end(kUnits))
        throw InputError(
            path, field,
            "unit '" + given + "' is not one of " + col.header + "'s (" + units_of(unit) + ")");
      factor = u->factor;
    }
  } else {
    throw InputError(path, field,
                     "must be a number in " + unit + " or {\"value\": x, \"unit\": \"...\"}");
  }
  if (!(std::isfinite(value) && value > 0))
    throw InputError(path, field, "must be a positive finite number");
  return value * factor;
}

}  // namespace

std::vector<DecisionThreshold> read_decisions(const nlohmann::json& d, const std::string& path,
                                              const KpiOptions& o) {
  if (!d.is_object())
    throw InputError(path, "decisions", "must be an object of KPI columns and thresholds");
  const auto cols = kpi_columns(o);
  std::vector<DecisionThreshold> out;
  for (const auto& [key, v] : d.items()) {
    const std::string field = "decisions." + key;
    const KpiCsvColumn* col = interval_kpi(cols, key);
    if (!col) {
      std::string names;
      for (std::size_t i = 0; i < cols.size(); ++i)
        if (interval_columns(cols, i)) names += (names.empty() ? "" : ", ") + cols[i].header;
      throw InputError(path, field, "is not a KPI with an interval (one of " + names + ")");
    }
    out.push_back({key, threshold_value(v, *col, path, field)});
  }
  return out;
}

Decision decide(const DecisionThreshold& t, const std::vector<std::string>& header,
                const std::vector<double>& row) {
  auto at = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    const std::size_t i = std::size_t(it - header.begin());
    return it == header.end() || i >= row.size() ? std::nan("") : row[i];
  };
  // Per-year columns carry the year after the bound: plume_radius_m_lo_30yr.
  const auto yr = t.kpi.rfind('_');
  const bool per_year = yr != std::string::npos && t.kpi.size() > 2 &&
                        t.kpi.compare(t.kpi.size() - 2, 2, "yr") == 0 &&
                        std::find(header.begin(), header.end(), t.kpi + "_lo") == header.end();
  const std::string base = per_year ? t.kpi.substr(0, yr) : t.kpi,
                    year = per_year ? t.kpi.substr(yr) : "";
  const double lo = at(base + "_lo" + year), hi = at(base + "_hi" + year);
  if (!(std::isfinite(lo) && std::isfinite(hi))) return Decision::Uncertain;
  if (hi < t.value) return Decision::Below;
  if (lo > t.value) return Decision::Above;
  return Decision::Uncertain;
}

std::string decision_column(const DecisionThreshold& t) { return "decision_" + t.kpi; }

}  // namespace ufno
