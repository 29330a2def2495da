#pragma once
// The KPI table: every KPI once, with its name, unit, CSV column, JSON key, the getter that reads
// it from a Kpis and where its value comes from. The CSV of a sweep and of ufno_kpis
// (kpi_header, kpi_row), the web service's JSON (kpi_json) and a verification's column matching
// (kpi_columns, headline) are derived from it, so a KPI added or renamed here is added or renamed
// everywhere.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "screening/Kpis.hpp"

namespace ufno {

struct KpiColumn {
  const char* name;  // what it is, in words
  const char* unit;
  // The CSV column, "" for none; a per-year KPI has one column per year, "<csv>_<year>yr".
  const char* csv;
  // The key in the web service's JSON: per-year KPIs in "plume", one object per year.
  const char* json;
  bool per_year;
  bool flag;      // 0 or 1, a JSON boolean
  bool headline;  // its largest relative error heads a verification's summary
  const char* source;
  double (*get)(const Kpis& k, std::size_t year);
  // A bound of another KPI's interval, or how far its interval can be trusted, not a KPI of its
  // own: a verification compares it with nothing (Flow's side has no interval).
  bool about_interval = false;
};

// In CSV order. Consecutive per-year KPIs form one block of columns, year by year.
const std::vector<KpiColumn>& kpi_table();

// How far a KPI's interval can be trusted, in words (the web service's interval_notes).
const char* interval_words(IntervalTrust t);

// Where a KPI that a head may replace came from ("head" or "field"), as the JSON reports it.
struct KpiSourceFlag {
  const char* json;
  bool Kpis::*from_head;
};
const std::vector<KpiSourceFlag>& kpi_source_flags();

// One CSV column: the KPI and, for a per-year KPI, the index of its year.
struct KpiCsvColumn {
  std::string header;
  const KpiColumn* kpi;
  std::size_t year;
};
std::vector<KpiCsvColumn> kpi_columns(const KpiOptions& o);

// The columns of column i's interval bounds (lower, upper), when it has an interval.
std::optional<std::pair<std::size_t, std::size_t>> interval_columns(
    const std::vector<KpiCsvColumn>& columns, std::size_t i);

std::vector<std::string> kpi_header(const KpiOptions& o);
// The values of kpi_header's columns; the years are the ones k was computed for.
std::vector<double> kpi_row(const Kpis& k);
// The "kpis" object of the web service's reply: the KPIs, their sources, sg_threshold and
// critical_dp_bar.
nlohmann::json kpi_json(const Kpis& k, const KpiOptions& o);

}  // namespace ufno
