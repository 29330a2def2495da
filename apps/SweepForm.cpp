#include "apps/SweepForm.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace ufno {

using json = nlohmann::json;

namespace {

// The KPI options of every web sweep: the screening configuration's plume threshold and years,
// so decision thresholds such as plume_radius_m_30yr name a column that exists.
const json kKpiYears = json::array({1, 5, 10, 30});
constexpr double kSgThreshold = 0.01;

// [lo, hi] of a perforation parameter within the site's layers 1..layers.
void check_perforation(const json& ranges, const SweepSite& s) {
  auto end = [&](const char* name, int i, int dflt) {
    return ranges.contains(name) ? ranges[name][i].get<double>() : double(dflt);
  };
  for (const char* name : {"PERF_TOP", "PERF_BOTTOM"}) {
    if (!ranges.contains(name)) continue;
    const double lo = ranges[name][0].get<double>(), hi = ranges[name][1].get<double>();
    if (!(lo >= 1 && hi <= s.layers))
      throw RequestError{std::string("parameters.") + name,
                         "must lie within the formation's layers 1 to " + std::to_string(s.layers) +
                             " of site '" + s.name + "'"};
  }
  // Every scenario's top above its bottom: the highest top at most the lowest bottom.
  const double top_hi = end("PERF_TOP", 1, s.perf_top),
               bottom_lo = end("PERF_BOTTOM", 0, s.perf_bottom);
  if (std::lround(top_hi) > std::lround(bottom_lo))
    throw RequestError{
        ranges.contains("PERF_TOP") ? "parameters.PERF_TOP" : "parameters.PERF_BOTTOM",
        "the perforation's top may lie below its bottom (top up to layer " +
            std::to_string(std::lround(top_hi)) + ", bottom from layer " +
            std::to_string(std::lround(bottom_lo)) + ")"};
}

// "parameters": {NAME: [lo, hi]} with known names and two numbers each (their values are the
// sweep reader's to check).
json parameter_ranges(const json& form) {
  if (!form.contains("parameters") || !form["parameters"].is_object() || form["parameters"].empty())
    throw RequestError{"parameters", "give at least one parameter range, as {\"NAME\": [lo, hi]}"};
  const auto& names = sweep_form_parameters();
  json ranges = json::object();
  for (const auto& [name, v] : form["parameters"].items()) {
    const std::string field = "parameters." + name;
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw RequestError{field, "unknown parameter (one of " + list + ")"};
    }
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
      throw RequestError{field, "must be [lo, hi], two numbers"};
    ranges[name] = v;
  }
  return ranges;
}

int scenario_count(const json& form, int max_scenarios) {
  const std::string limit = "must be a whole number from 1 to " + std::to_string(max_scenarios) +
                            " (the server's --sweep-max-scenarios)";
  if (!form.contains("scenarios")) throw RequestError{"scenarios", "is missing; it " + limit};
  const auto& n = form["scenarios"];
  if (!n.is_number()) throw RequestError{"scenarios", limit};
  const double d = n.get<double>();
  if (!(d >= 1 && d <= max_scenarios && d == std::floor(d)))
    throw RequestError{"scenarios", limit + ", got " + n.dump()};
  return int(d);
}

long long seed(const json& form) {
  if (!form.contains("seed")) return 1;
  const auto& s = form["seed"];
  const double d = s.is_number() ? s.get<double>() : -1;
  if (!(d >= 0 && d <= 2147483647.0 && d == std::floor(d)))
    throw RequestError{"seed", "must be a whole number from 0 to 2147483647"};
  return (long long)d;
}

const SweepSite& find_site(const json& form, const std::vector<SweepSite>& sites) {
  if (sites.empty()) throw RequestError{"site", "the server has no site"};
  if (!form.contains("site")) return sites.front();
  if (!form["site"].is_string()) throw RequestError{"site", "must be a string"};
  const std::string name = form["site"].get<std::string>();
  for (const auto& s : sites)
    if (s.name == name) return s;
  throw RequestError{"site", "unknown site '" + name + "'"};
}

}  // namespace

const std::vector<std::string>& sweep_form_parameters() {
  static const std::vector<std::string> names{"INJ_RATE",  "TEMP",       "PRESSURE",    "SWI",
                                              "VG_LAMBDA", "PERF_TOP",   "PERF_BOTTOM", "PERM_MULT",
                                              "PORO_MULT", "KGEO",       "SIGMA_LNK",   "CORR_R",
                                              "CORR_Z",    "ANISOTROPY", "PORO_MEAN"};
  return names;
}

json sweep_config_from_form(const json& form, const std::vector<SweepSite>& sites,
                            const std::vector<std::string>& models, int max_scenarios) {
  if (!form.is_object()) throw RequestError{"", "the request body must be a JSON object"};
  for (const auto& [key, v] : form.items()) {
    (void)v;
    static const char* known[] = {"site",       "scenarios",       "seed",
                                  "parameters", "critical_dp_bar", "decisions"};
    if (std::find(std::begin(known), std::end(known), key) == std::end(known))
      throw RequestError{key, "is not a field of the sweep form"};
  }
  const SweepSite& site = find_site(form, sites);
  const int n = scenario_count(form, max_scenarios);
  const json ranges = parameter_ranges(form);
  check_perforation(ranges, site);
  json c;
  c["description"] = "sweep of site " + site.name + " from the web page";
  json abs_models = json::array();
  for (const auto& m : models) abs_models.push_back(std::filesystem::absolute(m).string());
  c["models"] = abs_models;
  c["base_cases"] = json::array({std::filesystem::absolute(site.path).string()});
  c["sampling"] = "lhs";
  c["samples"] = n;
  c["seed"] = seed(form);
  // The thresholds go as given: the sweep's reader names a bad one.
  for (const auto& [name, r] : ranges.items()) c["parameters"][name] = {{"range", r}};
  c["kpi"] = {{"sg_threshold", kSgThreshold}, {"years", kKpiYears}};
  if (form.contains("critical_dp_bar")) {
    const auto& v = form["critical_dp_bar"];
    if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 10000))
      throw RequestError{"critical_dp_bar", "must be a pressure in (0, 10000] bar"};
    c["kpi"]["critical_dp_bar"] = v;
  }
  if (form.contains("decisions")) c["decisions"] = form["decisions"];
  return c;
}

std::string sweep_form_field(const std::string& key) {
  if (key == "samples") return "scenarios";
  if (key == "kpi.critical_dp_bar") return "critical_dp_bar";
  return key;
}

}  // namespace ufno
