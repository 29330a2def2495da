#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/Fingerprint.hpp"
#include "core/InputError.hpp"
#include "io/OutputPath.hpp"
#include "runtime/DefaultModels.hpp"
#include "screening/ScenarioParameters.hpp"
#include "screening/Sweep.hpp"

namespace ufno {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Bumped whenever the KPI rules or the table's columns change: results of another version are
// not reused (docs/kpis.md).
constexpr int kKpiRulesVersion = 7;  // 3-6: max dP, plume radius, CO2 mass, AoR from heads;
                                     // 7: the heads' intervals

// At most this many scenarios per sweep (Latin hypercube samples or grid combinations): each
// writes a case file and a KPI row, so a larger sweep is a mistake, not a screening study.
constexpr int kMaxScenarios = 1000000;

// obj[key] as a T (def when absent); a value of the wrong JSON type names its key.
template <class T>
T get_key(const json& obj, const char* key, const T& def, const std::string& path,
          const std::string& prefix) {
  if (!obj.contains(key)) return def;
  try {
    return obj.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(path, (prefix.empty() ? "" : prefix + ".") + key, "has the wrong type");
  }
}

void require_known_keys(const json& j, const std::string& path, const std::string& prefix,
                        std::initializer_list<const char*> known) {
  if (!j.is_object()) throw InputError(path, prefix, "must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    (void)value;
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) throw InputError(path, prefix.empty() ? key : prefix + "." + key, "unknown key");
  }
}

std::string sweep_fingerprint(const json& j, const SweepConfig& c) {
  std::uint64_t h = fnv1a(j.dump());  // object keys sorted: key order does not matter
  h = fnv1a("kpi rules " + std::to_string(kKpiRulesVersion), h);
  std::vector<std::string> files = c.models;
  files.insert(files.end(), c.base_cases.begin(), c.base_cases.end());
  return files_fingerprint(files, h);
}

// No file the sweep reads (its configuration, models, base cases) lies in `out`, under any name:
// the sweep writes and replaces files there.
void check_out_holds_no_input(const SweepConfig& c) {
  InputFiles inputs({c.path});
  inputs.add(c.models);
  inputs.add(c.base_cases);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(c.out, ec), end; !ec && it != end; it.increment(ec))
    if (const std::string* in = inputs.find(it->path().string()))
      throw InputError(c.path, "out",
                       c.out + " holds the input file " + *in + " (as " + it->path().string() +
                           "); choose another \"out\"");
}

// Results in `out` are reused only when they come from this very configuration.
void check_out_matches(const SweepConfig& c) {
  const fs::path out(c.out), fp = out / kSweepFingerprintFile;
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out))
    throw InputError(c.path, "out", c.out + " exists and is not a directory");
  check_out_holds_no_input(c);
  if (!fs::exists(fp)) {
    if (fs::exists(out / "kpis.csv") || fs::exists(out / "kpi"))
      throw InputError(c.path, "out",
                       c.out + " holds results of an unknown configuration (no " +
                           kSweepFingerprintFile + "); choose another \"out\" or remove it");
    return;
  }
  std::string old;
  std::ifstream(fp) >> old;
  if (old != c.fingerprint)
    throw InputError(c.path, "out",
                     c.out +
                         " holds the results of a different sweep (configuration, models, "
                         "base cases or KPI rules changed); choose another \"out\" or "
                         "remove it");
}

json parse_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw InputError(path, "", "cannot be opened");
  try {
    return json::parse(f);
  } catch (const std::exception& e) {
    throw InputError(path, "", "is not valid JSON (" + std::string(e.what()).substr(0, 120) + ")");
  }
}

void read_kpi(const json& k, SweepConfig& c) {
  const std::string& path = c.path;
  require_known_keys(k, path, "kpi",
                     {"sg_threshold", "years", "critical_dp_bar", "co2_density", "mass_tolerance"});
  c.kpi.sg_threshold = get_key(k, "sg_threshold", c.kpi.sg_threshold, path, "kpi");
  c.kpi.years = get_key(k, "years", c.kpi.years, path, "kpi");
  c.kpi.critical_dp_bar = get_key(k, "critical_dp_bar", c.kpi.critical_dp_bar, path, "kpi");
  c.kpi.co2_density = get_key(k, "co2_density", c.kpi.co2_density, path, "kpi");
  c.kpi.mass_tolerance = get_key(k, "mass_tolerance", c.kpi.mass_tolerance, path, "kpi");
}

void read_verify(const json& v, SweepConfig& c) {
  require_known_keys(v, c.path, "verify", {"scenarios", "flow", "timeout_s", "policy"});
  c.verify_scenarios = get_key(v, "scenarios", 0, c.path, "verify");
  c.verify_policy = get_key(v, "policy", c.verify_policy, c.path, "verify");
  if (c.verify_policy != "even" && c.verify_policy != "uncertain-first")
    throw InputError(c.path, "verify.policy", "must be \"even\" or \"uncertain-first\"");
  c.flow = get_key(v, "flow", c.flow, c.path, "verify");
  c.flow_timeout_s = get_key(v, "timeout_s", c.flow_timeout_s, c.path, "verify");
}

void read_field(const json& f, SweepConfig& c) {
  const std::string& path = c.path;
  require_known_keys(f, path, "field",
                     {"generator", "kgeo_md", "sigma_lnk", "corr_r_cells", "corr_z_cells",
                      "anisotropy", "poro_mean", "structure"});
  if (get_key(f, "generator", std::string(), path, "field") != "geostat")
    throw InputError(path, "field.generator", "must be \"geostat\"");
  c.geostat = true;
  auto& g = c.geostat_defaults;
  for (const auto& range : kGeostatRanges)  // the keys are the parameters' own names
    g.*range.value = get_key(f, range.name, g.*range.value, path, "field");
  g.structure = get_key(f, "structure", g.structure, path, "field");
}

SweepParameter read_parameter(const std::string& name, const json& spec, SweepConfig& c) {
  const std::string& path = c.path;
  const std::string key = "parameters." + name;
  const ScenarioParameter* known = scenario_parameter(name);
  if (!known) throw InputError(path, key, "unknown parameter");
  require_known_keys(spec, path, key, {"range", "values", "steps"});
  SweepParameter p;
  p.name = name;
  p.range = get_key(spec, "range", std::vector<double>{}, path, key);
  p.values = get_key(spec, "values", std::vector<double>{}, path, key);
  p.steps = get_key(spec, "steps", 3, path, key);
  if ((p.range.size() == 2) == !p.values.empty())
    throw InputError(path, key, "give either \"range\": [lo, hi] or \"values\"");
  if (p.range.size() == 2 && !(p.range[0] <= p.range[1]))
    throw InputError(path, key, "range must be [lo, hi] with lo <= hi");
  if (p.steps < 1 || p.steps > 1000) throw InputError(path, key + ".steps", "must be in 1..1000");
  for (double x : p.values.empty() ? p.range : p.values) check_scenario_value(path, *known, x);
  if (known->target == ScenarioTarget::Geostat) c.geostat = true;
  return p;
}

// Every key of the configuration into c, each checked for its type (InputError naming it).
void read_keys(const json& j, SweepConfig& c) {
  const std::string& path = c.path;
  require_known_keys(
      j, path, "",
      {"description", "models", "base_cases", "sampling", "samples", "seed", "out",
       "ranks_per_case", "kpi", "keep_fields", "field", "parameters", "verify", "decisions"});
  // No "models": the shipped default models, as for ufno_predict without --model.
  c.models =
      j.contains("models") ? j.at("models").get<std::vector<std::string>>() : default_models();
  c.base_cases = j.at("base_cases").get<std::vector<std::string>>();
  c.sampling = get_key(j, "sampling", std::string("lhs"), path, "");
  c.samples = get_key(j, "samples", 10, path, "");
  c.seed = get_key(j, "seed", 1ul, path, "");
  c.out = get_key(j, "out", std::string("sweep_out"), path, "");
  c.ranks_per_case = get_key(j, "ranks_per_case", 1, path, "");
  if (j.contains("kpi")) read_kpi(j["kpi"], c);
  if (j.contains("keep_fields")) {
    if (j["keep_fields"].is_string() && j["keep_fields"] == "all")
      c.keep_fields = {-1};
    else
      c.keep_fields = j["keep_fields"].get<std::vector<int>>();
  }
  if (j.contains("verify")) read_verify(j["verify"], c);
  if (j.contains("field")) read_field(j["field"], c);
  for (auto& [name, spec] : j.at("parameters").items())
    c.parameters.push_back(read_parameter(name, spec, c));
}

// The checks across keys: counts, sampling, the number of scenarios, the KPI options.
void check_values(const SweepConfig& c) {
  const std::string& path = c.path;
  if (c.models.empty()) throw InputError(path, "models", "names no model file");
  if (c.base_cases.empty()) throw InputError(path, "base_cases", "names no case file");
  if (c.sampling != "lhs" && c.sampling != "grid")
    throw InputError(path, "sampling", "must be \"lhs\" or \"grid\"");
  if (c.samples < 1 || c.samples > kMaxScenarios)
    throw InputError(path, "samples", "must be in 1.." + std::to_string(kMaxScenarios));
  if (c.sampling == "grid") {
    // Every combination is one scenario: bound their number before any is made.
    double combinations = 1;
    for (const auto& p : c.parameters) combinations *= p.values.empty() ? p.steps : p.values.size();
    if (combinations > kMaxScenarios)
      throw InputError(path, "parameters",
                       "a grid of " + std::to_string(static_cast<long long>(combinations)) +
                           " scenarios (the product of the parameters' steps or values) is more "
                           "than " +
                           std::to_string(kMaxScenarios));
  }
  if (c.verify_scenarios < 0) throw InputError(path, "verify.scenarios", "must be 0 or more");
  if (!(c.flow_timeout_s >= 1 && c.flow_timeout_s <= 1e6))
    throw InputError(path, "verify.timeout_s", "must be in [1, 1e6] seconds");
  validate_kpi_options(c.kpi, path, [](const std::string& key) { return "kpi." + key; });
}

// Generated fields: the defaults and every end of every sampled range must be valid, so a bad
// configuration fails here, on every rank, before anything runs.
void check_geostat(const SweepConfig& c) {
  try {
    validate_geostat_params(c.geostat_defaults);
  } catch (const InputError& e) {
    throw InputError(c.path, "field", e.what());
  }
  for (const auto& p : c.parameters) {
    if (scenario_parameter(p.name)->target != ScenarioTarget::Geostat) continue;
    for (double v : p.values.empty() ? p.range : p.values) {
      Scenario s{{p.name, v}};
      try {
        validate_geostat_params(scenario_geostat(c, s, 0));
      } catch (const InputError& e) {
        throw InputError(c.path, "parameters." + p.name, e.what());
      }
    }
  }
}

}  // namespace

SweepConfig read_sweep_config(const std::string& path) {
  const json j = parse_file(path);
  SweepConfig c;
  c.path = path;
  try {
    read_keys(j, c);
  } catch (const json::exception& e) {
    throw InputError(
        path, "", "malformed sweep configuration (" + std::string(e.what()).substr(0, 160) + ")");
  }
  check_values(c);
  // Thresholds name KPI columns, which depend on the KPI options' years: read after them.
  if (j.contains("decisions")) c.decisions = read_decisions(j["decisions"], path, c.kpi);
  if (c.geostat) check_geostat(c);
  for (const auto& [key, files] : {std::pair{"models", &c.models}, {"base_cases", &c.base_cases}})
    for (const auto& f : *files) {
      std::error_code ec;
      if (!fs::is_regular_file(f, ec))
        throw InputError(path, key, f + " is missing or not a regular file");
    }
  c.fingerprint = sweep_fingerprint(j, c);
  check_out_matches(c);
  return c;
}

}  // namespace ufno
