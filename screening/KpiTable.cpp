#include "screening/KpiTable.hpp"

#include <limits>

#include "core/NumberText.hpp"

namespace ufno {

namespace {

// Where each value comes from (docs/kpis.md): the fields' rules, or a model file's head.
constexpr const char* kField = "the fields (screening/Kpis.cpp)";
constexpr const char* kPlumeHead = "the SG model's plume_radius_head, else the fields";
constexpr const char* kMaxDpHead = "the dP model's max_dp_head, else the fields";
constexpr const char* kEnvelopeHead = "the dP model's dp_envelope_head, else the fields";
constexpr const char* kMassHead = "the SG model's co2_mass_head, else the fields";
constexpr const char* kCase = "the case's rate x time";

constexpr const char* kInterval =
    "the head's calibrated interval (docs/kpis.md, Intervals); NaN where the KPI has none";
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double plume_bound(const Kpis& k, std::size_t y, double KpiBounds::*b) {
  return y < k.plume_bounds.size() ? k.plume_bounds[y].*b : kNaN;
}

double trust(const KpiBounds& b) { return double(int(b.trust)); }

// The number of years k was computed for.
std::size_t years_of(const Kpis& k) { return k.years_used.size(); }

}  // namespace

const std::vector<KpiColumn>& kpi_table() {
  // clang-format off
  static const std::vector<KpiColumn> table{
      {"report time used for the year", "yr", "", "year_used", true, false, false, kField,
       [](const Kpis& k, std::size_t y) { return k.years_used[y]; }},
      {"plume radius", "m", "plume_radius_m", "plume_radius_m", true, false, true, kPlumeHead,
       [](const Kpis& k, std::size_t y) { return k.plume_radius_m[y]; }},
      {"plume radius, interval's lower bound", "m", "plume_radius_m_lo", "plume_radius_m_lo", true,
       false, false, kInterval,
       [](const Kpis& k, std::size_t y) { return plume_bound(k, y, &KpiBounds::lo); }, true},
      {"plume radius, interval's upper bound", "m", "plume_radius_m_hi", "plume_radius_m_hi", true,
       false, false, kInterval,
       [](const Kpis& k, std::size_t y) { return plume_bound(k, y, &KpiBounds::hi); }, true},
      {"plume radius interval: 0 none, 1 calibrated, 2 beyond the calibration data", "1",
       "plume_radius_interval", "plume_radius_interval", true, false, false, kInterval,
       [](const Kpis& k, std::size_t y) {
         return y < k.plume_bounds.size() ? trust(k.plume_bounds[y]) : 0.0;
       }, true},
      {"plume area", "km2", "plume_area_km2", "plume_area_km2", true, false, false, kPlumeHead,
       [](const Kpis& k, std::size_t y) { return k.plume_area_km2[y]; }},
      {"plume radius capped by the injected mass", "1", "plume_capped", "plume_capped", true,
       true, false, kField, [](const Kpis& k, std::size_t y) { return double(k.plume_capped[y]); }},
      {"maximum pressure buildup", "bar", "max_dP_bar", "max_dp_bar", false, false, true,
       kMaxDpHead, [](const Kpis& k, std::size_t) { return k.max_dp_bar; }},
      {"maximum pressure buildup, interval's lower bound", "bar", "max_dP_bar_lo", "max_dp_bar_lo",
       false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return k.max_dp_bounds.lo; }, true},
      {"maximum pressure buildup, interval's upper bound", "bar", "max_dP_bar_hi", "max_dp_bar_hi",
       false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return k.max_dp_bounds.hi; }, true},
      {"maximum dP interval: 0 none, 1 calibrated, 2 beyond the calibration data", "1",
       "max_dP_interval", "max_dp_interval", false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return trust(k.max_dp_bounds); }, true},
      {"radius of the field's maximum dP", "m", "max_dP_radius_m", "max_dp_radius_m", false, false,
       false, kField, [](const Kpis& k, std::size_t) { return k.max_dp_radius_m; }},
      {"depth of the field's maximum dP", "m", "max_dP_depth_m", "max_dp_depth_m", false, false,
       false, kField, [](const Kpis& k, std::size_t) { return k.max_dp_depth_m; }},
      {"time of the field's maximum dP", "yr", "max_dP_year", "max_dp_year", false, false, false,
       kField, [](const Kpis& k, std::size_t) { return k.max_dp_year; }},
      {"area-of-review radius", "m", "aor_radius_m", "aor_radius_m", false, false, false,
       kEnvelopeHead, [](const Kpis& k, std::size_t) { return k.aor_radius_m; }},
      {"area-of-review radius, interval's lower bound", "m", "aor_radius_m_lo", "aor_radius_m_lo",
       false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return k.aor_bounds.lo; }, true},
      {"area-of-review radius, interval's upper bound", "m", "aor_radius_m_hi", "aor_radius_m_hi",
       false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return k.aor_bounds.hi; }, true},
      {"area-of-review interval: 0 none, 1 calibrated, 2 beyond the calibration data", "1",
       "aor_interval", "aor_interval", false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return trust(k.aor_bounds); }, true},
      {"CO2 mass in the plume", "Mt", "co2_mass_Mt", "co2_mass_mt", false, false, true, kMassHead,
       [](const Kpis& k, std::size_t) { return k.co2_mass_mt; }},
      {"CO2 mass in the plume, interval's lower bound", "Mt", "co2_mass_Mt_lo", "co2_mass_mt_lo",
       false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return k.mass_bounds.lo; }, true},
      {"CO2 mass in the plume, interval's upper bound", "Mt", "co2_mass_Mt_hi", "co2_mass_mt_hi",
       false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return k.mass_bounds.hi; }, true},
      {"CO2 mass interval: 0 none, 1 calibrated, 2 beyond the calibration data", "1",
       "co2_mass_interval", "co2_mass_interval", false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return trust(k.mass_bounds); }, true},
      {"distance from the heads' training data (1: the farthest calibration case)", "1",
       "training_distance", "training_distance", false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return k.training_distance; }, true},
      {"share of the models' training cases nearer to the input (joint distance)", "%",
       "training_percentile", "training_percentile", false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return k.training_percentile; }, true},
      {"statistics of the input beyond the models' training data (intervals widened)", "1",
       "beyond_training", "beyond_training_count", false, false, false, kInterval,
       [](const Kpis& k, std::size_t) { return double(k.beyond_training.size()); }, true},
      {"CO2 injected", "Mt", "injected_Mt", "injected_mt", false, false, false, kCase,
       [](const Kpis& k, std::size_t) { return k.injected_mt; }},
      {"CO2 mass in the plume over CO2 injected", "1", "mass_ratio", "mass_ratio", false, false,
       false, kMassHead, [](const Kpis& k, std::size_t) { return k.mass_ratio; }},
      {"the field's maximum dP", "bar", "max_dP_field_bar", "max_dp_field_bar", false, false,
       false, kField, [](const Kpis& k, std::size_t) { return k.max_dp_field_bar; }},
      {"the field's plume radius", "m", "plume_radius_field_m", "plume_radius_field_m", true,
       false, true, kField, [](const Kpis& k, std::size_t y) { return k.plume_radius_field_m[y]; }},
      {"the field's CO2 mass in the plume", "Mt", "co2_mass_field_Mt", "co2_mass_field_mt", false,
       false, false, kField, [](const Kpis& k, std::size_t) { return k.co2_mass_field_mt; }},
      {"the field's area-of-review radius", "m", "aor_field_radius_m", "aor_field_radius_m", false,
       false, false, kField, [](const Kpis& k, std::size_t) { return k.aor_field_radius_m; }},
  };
  // clang-format on
  return table;
}

const char* interval_words(IntervalTrust t) {
  switch (t) {
    case IntervalTrust::Calibrated:
      return "90 % interval, calibrated against OPM Flow on held-out cases; this input lies "
             "within the calibration cases";
    case IntervalTrust::Far:
      return "this input lies beyond the cases the interval was calibrated on or the models' "
             "training data: the interval is "
             "widened and not to be relied on; verify with OPM Flow";
    case IntervalTrust::None:
      break;
  }
  return "no interval: the value is the field's, or the model file carries no calibration";
}

const std::vector<KpiSourceFlag>& kpi_source_flags() {
  static const std::vector<KpiSourceFlag> flags{{"max_dp_source", &Kpis::max_dp_from_head},
                                                {"plume_source", &Kpis::plume_from_head},
                                                {"mass_source", &Kpis::mass_from_head},
                                                {"aor_source", &Kpis::aor_from_head}};
  return flags;
}

namespace {

// The CSV columns for `years` years: consecutive per-year KPIs year by year, then the next.
std::vector<KpiCsvColumn> csv_columns(const std::vector<std::string>& years) {
  std::vector<KpiCsvColumn> cols;
  const auto& t = kpi_table();
  for (std::size_t i = 0; i < t.size();) {
    if (!t[i].per_year) {
      if (*t[i].csv) cols.push_back({t[i].csv, &t[i], 0});
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < t.size() && t[end].per_year) ++end;
    for (std::size_t y = 0; y < years.size(); ++y)
      for (std::size_t j = i; j < end; ++j)
        if (*t[j].csv) cols.push_back({std::string(t[j].csv) + "_" + years[y] + "yr", &t[j], y});
    i = end;
  }
  return cols;
}

}  // namespace

std::vector<KpiCsvColumn> kpi_columns(const KpiOptions& o) {
  std::vector<std::string> years;
  for (double y : o.years) years.push_back(number_text(y));
  return csv_columns(years);
}

std::optional<std::pair<std::size_t, std::size_t>> interval_columns(
    const std::vector<KpiCsvColumn>& columns, std::size_t i) {
  const std::string csv = columns[i].kpi->csv;
  std::optional<std::size_t> lo, hi;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (columns[j].year != columns[i].year) continue;
    if (csv + "_lo" == columns[j].kpi->csv) lo = j;
    if (csv + "_hi" == columns[j].kpi->csv) hi = j;
  }
  if (!lo || !hi) return std::nullopt;
  return std::make_pair(*lo, *hi);
}

std::vector<std::string> kpi_header(const KpiOptions& o) {
  std::vector<std::string> h;
  for (const auto& c : kpi_columns(o)) h.push_back(c.header);
  return h;
}

std::vector<double> kpi_row(const Kpis& k) {
  std::vector<double> r;
  for (const auto& c : csv_columns(std::vector<std::string>(years_of(k))))
    r.push_back(c.kpi->get(k, c.year));
  return r;
}

nlohmann::json kpi_json(const Kpis& k, const KpiOptions& o) {
  using json = nlohmann::json;
  json j = {{"sg_threshold", o.sg_threshold}, {"critical_dp_bar", o.critical_dp_bar}};
  json years = json::array();
  for (std::size_t y = 0; y < o.years.size(); ++y) years.push_back({{"year", o.years[y]}});
  for (const auto& c : kpi_table()) {
    auto value = [&](std::size_t y) { return c.flag ? json(c.get(k, y) != 0) : json(c.get(k, y)); };
    if (!c.per_year)
      j[c.json] = value(0);
    else
      for (std::size_t y = 0; y < o.years.size(); ++y) years[y][c.json] = value(y);
  }
  j["plume"] = years;
  for (const auto& s : kpi_source_flags()) j[s.json] = k.*s.from_head ? "head" : "field";
  // In words, for the page: how far each KPI's interval can be trusted for this input.
  json notes;
  notes["max_dp_bar"] = interval_words(k.max_dp_bounds.trust);
  notes["aor_radius_m"] = interval_words(k.aor_bounds.trust);
  notes["co2_mass_mt"] = interval_words(k.mass_bounds.trust);
  notes["plume_radius_m"] =
      interval_words(k.plume_bounds.empty() ? IntervalTrust::None : k.plume_bounds.back().trust);
  j["interval_notes"] = notes;
  j["beyond_training"] = k.beyond_training;
  if (!k.beyond_training.empty()) {
    std::string names;
    for (const auto& n : k.beyond_training) names += (names.empty() ? "" : ", ") + n;
    j["training_note"] = "this input lies beyond the models' training data in " + names +
                         ": every interval is widened and not to be relied on; verify with OPM "
                         "Flow";
  }
  return j;
}

}  // namespace ufno
