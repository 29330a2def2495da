#include "screening/Sweep.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "core/Fingerprint.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "io/CaseEncoding.hpp"
#include "io/CaseWriter.hpp"
#include "io/Hdf5File.hpp"
#include "io/ModelFile.hpp"
#include "io/PhysicalLimits.hpp"
#include "runtime/BatchRun.hpp"
#include "runtime/DefaultModels.hpp"
#include "screening/FlowRun.hpp"
#include "screening/KpiHeads.hpp"

namespace ufno {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::vector<std::string> kKnown{
    "INJ_RATE",    "TEMP",      "PRESSURE",   "SWI",       "VG_LAMBDA", "PERF_TOP",
    "PERF_BOTTOM", "PERM_MULT", "PORO_MULT",  "BASE_CASE", "KGEO",      "SIGMA_LNK",
    "CORR_R",      "CORR_Z",    "ANISOTROPY", "PORO_MEAN", "FIELD_SEED"};
const std::vector<std::string> kGeostat{"KGEO",       "SIGMA_LNK", "CORR_R",    "CORR_Z",
                                        "ANISOTROPY", "PORO_MEAN", "FIELD_SEED"};

std::string scenario_name(int i) {
  char b[32];
  std::snprintf(b, sizeof b, "scenario_%04d", i);
  return b;
}

// The geostatistical parameters of scenario `index`: the config's defaults, overridden by the
// scenario's sampled values; the field seed is drawn from the sweep seed and the index unless
// sampled.
GeostatParams scenario_geostat(const SweepConfig& c, const Scenario& s, int index) {
  GeostatParams g = c.geostat_defaults;
  auto take = [&](const char* k, double& v) {
    if (s.count(k)) v = s.at(k);
  };
  take("KGEO", g.kgeo_md);
  take("SIGMA_LNK", g.sigma_lnk);
  take("CORR_R", g.corr_r_cells);
  take("CORR_Z", g.corr_z_cells);
  take("ANISOTROPY", g.anisotropy);
  take("PORO_MEAN", g.poro_mean);
  g.seed = s.count("FIELD_SEED") ? (unsigned long)std::llround(s.at("FIELD_SEED"))
                                 : c.seed * 1000003ul + unsigned(index);
  return g;
}

// Bumped whenever the KPI rules or the table's columns change: results of another version are
// not reused (docs/kpis.md).
constexpr int kKpiRulesVersion = 6;  // 3-6: max dP, plume radius, CO2 mass, AoR from heads

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

const char* kFingerprintFile = "sweep_fingerprint.txt";

// At most this many scenarios per sweep (Latin hypercube samples or grid combinations): each
// writes a case file and a KPI row, so a larger sweep is a mistake, not a screening study.
constexpr int kMaxScenarios = 1000000;

// Results in `out` are reused only when they come from this very configuration.
void check_out_matches(const SweepConfig& c) {
  const fs::path out(c.out), fp = out / kFingerprintFile;
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out))
    throw InputError(c.path, "out", c.out + " exists and is not a directory");
  if (!fs::exists(fp)) {
    if (fs::exists(out / "kpis.csv") || fs::exists(out / "kpi"))
      throw InputError(c.path, "out",
                       c.out + " holds results of an unknown configuration (no " +
                           kFingerprintFile + "); choose another \"out\" or remove it");
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

// Up-front checks of a parameter's values against the physical limits of the case fields.
void check_parameter_values(const std::string& path, const SweepParameter& p) {
  const std::vector<double>& v = p.values.empty() ? p.range : p.values;
  const std::string key = "parameters." + p.name;
  for (double x : v) {
    const std::string why = physical_violation(p.name, x);
    if (!why.empty()) throw InputError(path, key, why);
    const bool positive = p.name == "PERM_MULT" || p.name == "PORO_MULT";
    if (positive && !(x > 0)) throw InputError(path, key, "multipliers must be positive");
    const bool layer = p.name == "PERF_TOP" || p.name == "PERF_BOTTOM";
    if (layer && !(x >= 1)) throw InputError(path, key, "layers are numbered from 1");
    if (p.name == "BASE_CASE" && !(x >= 0)) throw InputError(path, key, "indices start at 0");
  }
}

}  // namespace

std::vector<int> verified_scenarios(int n, int n_verify) {
  std::vector<int> v;
  const int m = std::min(n, n_verify);
  for (int k = 0; k < m; ++k) v.push_back(int(std::int64_t(k) * n / m));
  return v;
}

SweepConfig read_sweep_config(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw InputError(path, "", "cannot be opened");
  json j;
  try {
    j = json::parse(f);
  } catch (const std::exception& e) {
    throw InputError(path, "", "is not valid JSON (" + std::string(e.what()).substr(0, 120) + ")");
  }
  SweepConfig c;
  c.path = path;
  try {
    require_known_keys(j, path, "",
                       {"description", "models", "base_cases", "sampling", "samples", "seed", "out",
                        "ranks_per_case", "kpi", "keep_fields", "field", "parameters", "verify"});
    // No "models": the shipped default models, as for ufno_predict without --model.
    c.models =
        j.contains("models") ? j.at("models").get<std::vector<std::string>>() : default_models();
    c.base_cases = j.at("base_cases").get<std::vector<std::string>>();
    c.sampling = get_key(j, "sampling", std::string("lhs"), path, "");
    c.samples = get_key(j, "samples", 10, path, "");
    c.seed = get_key(j, "seed", 1ul, path, "");
    c.out = get_key(j, "out", std::string("sweep_out"), path, "");
    c.ranks_per_case = get_key(j, "ranks_per_case", 1, path, "");
    if (j.contains("kpi")) {
      const auto& k = j["kpi"];
      require_known_keys(
          k, path, "kpi",
          {"sg_threshold", "years", "critical_dp_bar", "co2_density", "mass_tolerance"});
      c.kpi.sg_threshold = get_key(k, "sg_threshold", c.kpi.sg_threshold, path, "kpi");
      c.kpi.years = get_key(k, "years", c.kpi.years, path, "kpi");
      c.kpi.critical_dp_bar = get_key(k, "critical_dp_bar", c.kpi.critical_dp_bar, path, "kpi");
      c.kpi.co2_density = get_key(k, "co2_density", c.kpi.co2_density, path, "kpi");
      c.kpi.mass_tolerance = get_key(k, "mass_tolerance", c.kpi.mass_tolerance, path, "kpi");
    }
    if (j.contains("keep_fields")) {
      if (j["keep_fields"].is_string() && j["keep_fields"] == "all")
        c.keep_fields = {-1};
      else
        c.keep_fields = j["keep_fields"].get<std::vector<int>>();
    }
    if (j.contains("verify")) {
      const auto& v = j["verify"];
      require_known_keys(v, path, "verify", {"scenarios", "flow", "timeout_s"});
      c.verify_scenarios = get_key(v, "scenarios", 0, path, "verify");
      c.flow = get_key(v, "flow", c.flow, path, "verify");
      c.flow_timeout_s = get_key(v, "timeout_s", c.flow_timeout_s, path, "verify");
    }
    if (j.contains("field")) {
      const auto& f = j["field"];
      require_known_keys(f, path, "field",
                         {"generator", "kgeo_md", "sigma_lnk", "corr_r_cells", "corr_z_cells",
                          "anisotropy", "poro_mean", "structure"});
      if (get_key(f, "generator", std::string(), path, "field") != "geostat")
        throw InputError(path, "field.generator", "must be \"geostat\"");
      c.geostat = true;
      auto& g = c.geostat_defaults;
      g.kgeo_md = get_key(f, "kgeo_md", g.kgeo_md, path, "field");
      g.sigma_lnk = get_key(f, "sigma_lnk", g.sigma_lnk, path, "field");
      g.corr_r_cells = get_key(f, "corr_r_cells", g.corr_r_cells, path, "field");
      g.corr_z_cells = get_key(f, "corr_z_cells", g.corr_z_cells, path, "field");
      g.anisotropy = get_key(f, "anisotropy", g.anisotropy, path, "field");
      g.poro_mean = get_key(f, "poro_mean", g.poro_mean, path, "field");
      g.structure = get_key(f, "structure", g.structure, path, "field");
    }
    for (auto& [name, spec] : j.at("parameters").items()) {
      if (std::find(kKnown.begin(), kKnown.end(), name) == kKnown.end())
        throw InputError(path, "parameters." + name, "unknown parameter");
      require_known_keys(spec, path, "parameters." + name, {"range", "values", "steps"});
      SweepParameter p;
      p.name = name;
      p.range = get_key(spec, "range", std::vector<double>{}, path, "parameters." + name);
      p.values = get_key(spec, "values", std::vector<double>{}, path, "parameters." + name);
      p.steps = get_key(spec, "steps", 3, path, "parameters." + name);
      if ((p.range.size() == 2) == !p.values.empty())
        throw InputError(path, "parameters." + name,
                         "give either \"range\": [lo, hi] or \"values\"");
      if (p.range.size() == 2 && !(p.range[0] <= p.range[1]))
        throw InputError(path, "parameters." + name, "range must be [lo, hi] with lo <= hi");
      if (p.steps < 1 || p.steps > 1000)
        throw InputError(path, "parameters." + name + ".steps", "must be in 1..1000");
      check_parameter_values(path, p);
      c.parameters.push_back(p);
      if (std::find(kGeostat.begin(), kGeostat.end(), name) != kGeostat.end()) c.geostat = true;
    }
  } catch (const json::exception& e) {
    throw InputError(
        path, "", "malformed sweep configuration (" + std::string(e.what()).substr(0, 160) + ")");
  }
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
  // Generated fields: the defaults and every end of every sampled range must be valid, so a bad
  // configuration fails here, on every rank, before anything runs.
  if (c.geostat) {
    try {
      validate_geostat_params(c.geostat_defaults);
    } catch (const InputError& e) {
      throw InputError(path, "field", e.what());
    }
    for (const auto& p : c.parameters) {
      if (std::find(kGeostat.begin(), kGeostat.end(), p.name) == kGeostat.end()) continue;
      for (double v : p.values.empty() ? p.range : p.values) {
        Scenario s{{p.name, v}};
        try {
          validate_geostat_params(scenario_geostat(c, s, 0));
        } catch (const InputError& e) {
          throw InputError(path, "parameters." + p.name, e.what());
        }
      }
    }
  }
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

std::vector<Scenario> sample_scenarios(const SweepConfig& c) {
  std::vector<Scenario> out;
  if (c.sampling == "grid") {
    // Every combination of the parameters' values (ranges give `steps` evenly spaced values).
    std::vector<std::vector<double>> axes;
    for (const auto& p : c.parameters) {
      if (!p.values.empty()) {
        axes.push_back(p.values);
      } else {
        std::vector<double> v;
        for (int i = 0; i < p.steps; ++i)
          v.push_back(p.steps == 1 ? p.range[0]
                                   : p.range[0] + (p.range[1] - p.range[0]) * i / (p.steps - 1));
        axes.push_back(v);
      }
    }
    std::vector<std::size_t> idx(axes.size(), 0);
    while (true) {
      Scenario s;
      for (std::size_t a = 0; a < axes.size(); ++a) s[c.parameters[a].name] = axes[a][idx[a]];
      out.push_back(s);
      std::size_t a = 0;
      while (a < axes.size() && ++idx[a] == axes[a].size()) idx[a++] = 0;
      if (a == axes.size()) break;
    }
    return out;
  }
  // Latin hypercube: each parameter's range split into `samples` strata, one sample per stratum,
  // strata paired at random; value lists are drawn stratified the same way.
  std::mt19937_64 gen(c.seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  out.resize(c.samples);
  for (const auto& p : c.parameters) {
    std::vector<int> perm(c.samples);
    for (int i = 0; i < c.samples; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), gen);
    for (int i = 0; i < c.samples; ++i) {
      const double q = (perm[i] + u(gen)) / c.samples;
      out[i][p.name] = p.values.empty()
                           ? p.range[0] + q * (p.range[1] - p.range[0])
                           : p.values[std::min<std::size_t>(p.values.size() - 1,
                                                            std::size_t(q * p.values.size()))];
    }
  }
  return out;
}

namespace {

ReservoirCase make_scenario_case(const SweepConfig& c, const Scenario& s, int index) {
  const int base = s.count("BASE_CASE") ? int(s.at("BASE_CASE")) : 0;
  if (base < 0 || base >= int(c.base_cases.size()))
    throw InputError(c.path, "parameters.BASE_CASE", "index out of the base_cases list");
  ReservoirCase rc = read_case(c.base_cases[base]);
  if (c.geostat) {
    try {
      apply_geostat_field(rc, scenario_geostat(c, s, index));
    } catch (const InputError& e) {
      throw InputError(c.path, "field", e.what());
    }
  }
  for (const auto& [k, v] : s) {
    if (k == "INJ_RATE") rc.rate_mt_per_year = v;
    if (k == "TEMP") rc.temperature_c = v;
    if (k == "PRESSURE") rc.pressure_bar = v;
    if (k == "SWI") rc.swi = v;
    if (k == "VG_LAMBDA") rc.vg_lambda = v;
    if (k == "PERM_MULT")
      for (std::size_t i = 0; i < rc.permx.size(); ++i) rc.permx[i] *= v, rc.permz[i] *= v;
    if (k == "PORO_MULT")
      for (auto& p : rc.poro) p = std::min(1.0, p * v);
  }
  if (s.count("PERF_TOP") || s.count("PERF_BOTTOM")) {
    int top = 1, bottom = rc.nx;
    for (int x = 0; x < rc.nx; ++x)
      if (rc.perforated[x]) {
        top = x + 1;
        break;
      }
    for (int x = rc.nx - 1; x >= 0; --x)
      if (rc.perforated[x]) {
        bottom = x + 1;
        break;
      }
    if (s.count("PERF_TOP")) top = int(std::lround(s.at("PERF_TOP")));
    if (s.count("PERF_BOTTOM")) bottom = int(std::lround(s.at("PERF_BOTTOM")));
    for (int x = 0; x < rc.nx; ++x) rc.perforated[x] = x + 1 >= top && x + 1 <= bottom;
  }
  return rc;
}

}  // namespace

namespace {

// One KPI row of OPM Flow's own fields for scenario i, under out/verify/ (written once; a rerun
// skips scenarios that have one). A failed run leaves a .failed note with the reason instead.
// The verified scenarios still to run, read here on the calling thread: HDF5 is not
// thread-safe, and the predictions use it while the Flow runs go on.
std::vector<std::pair<std::string, ReservoirCase>> cases_to_verify(const SweepConfig& c, int n) {
  const fs::path dir = fs::path(c.out) / "verify";
  std::vector<std::pair<std::string, ReservoirCase>> todo;
  // Flow reports at the times the models predict (a case without TIMES: the paper's times).
  const int nt = ModelFile(c.models.front()).spec().grid[2];
  for (int i : verified_scenarios(n, c.verify_scenarios)) {
    const std::string name = scenario_name(i);
    if (fs::exists(dir / (name + ".csv"))) continue;
    ReservoirCase rc = read_case((fs::path(c.out) / "cases" / (name + ".h5")).string());
    if (rc.times_days.empty()) rc.times_days = paper_times_days(nt);
    todo.emplace_back(name, std::move(rc));
  }
  return todo;
}

void verify_with_flow(const SweepConfig& c,
                      const std::vector<std::pair<std::string, ReservoirCase>>& todo) {
  const fs::path dir = fs::path(c.out) / "verify";
  fs::create_directories(dir);
  FlowRunOptions fo;
  fo.flow = c.flow;
  fo.timeout_s = c.flow_timeout_s;
  for (const auto& [name, rc] : todo) {
    const fs::path row = dir / (name + ".csv"), note = dir / (name + ".failed");
    try {
      const FlowRunResult r = run_flow_case(rc, (dir / name).string(), fo);
      if (!r.ok) {
        std::ofstream(note) << r.error << "\n";
        continue;
      }
      const Kpis k = compute_kpis(rc, r.sg, r.dp, rc.times_days, c.kpi);
      std::ofstream f(row.string() + ".tmp");
      f.precision(8);
      for (double v : kpi_row(k)) f << "," << v;
      f << "," << r.wall_s << "\n";
      f.close();
      fs::rename(row.string() + ".tmp", row);
      fs::remove(note);
      fs::remove_all(dir / name / "run");  // the restart files are large; the deck stays
    } catch (const std::exception& e) {
      std::ofstream(note) << e.what() << "\n";
    }
  }
}

std::vector<double> csv_numbers(const fs::path& p) {
  std::ifstream f(p);
  std::string line, cell;
  std::getline(f, line);
  std::vector<double> v;
  std::stringstream s(line);
  while (std::getline(s, cell, ','))
    if (!cell.empty()) v.push_back(std::stod(cell));
  return v;
}

// verification.csv: one row per verified scenario and KPI with ufno's value, Flow's and the
// error; the summary line gives the largest relative error of the headline KPIs.
int write_verification(const SweepConfig& c, int n) {
  const fs::path out(c.out), dir = out / "verify";
  const auto header = kpi_header(c.kpi);
  std::ofstream t((out / "verification.csv.tmp").string());
  t << "scenario,status,kpi,ufno,flow,abs_error,rel_error\n";
  t.precision(8);
  int verified = 0, failed = 0;
  std::map<std::string, double> worst;
  for (int i : verified_scenarios(n, c.verify_scenarios)) {
    const std::string name = scenario_name(i);
    const fs::path flow_row = dir / (name + ".csv"), ufno_row = out / "kpi" / (name + ".csv");
    if (!fs::exists(flow_row) || !fs::exists(ufno_row)) {
      std::string why = "not run";
      std::ifstream note(dir / (name + ".failed"));
      std::getline(note, why);
      std::replace(why.begin(), why.end(), ',', ';');  // one CSV field
      t << name << ",failed: " << why << ",,,,,\n";
      ++failed;
      continue;
    }
    ++verified;
    const auto u = csv_numbers(ufno_row), f = csv_numbers(flow_row);
    for (std::size_t k = 0; k < header.size() && k < u.size() && k < f.size(); ++k) {
      const double abs_err = std::abs(u[k] - f[k]);
      const bool rel_ok = std::abs(f[k]) > 1e-9;
      t << name << ",ok," << header[k] << "," << u[k] << "," << f[k] << "," << abs_err << ",";
      if (rel_ok) t << abs_err / std::abs(f[k]);
      t << "\n";
      const bool headline = header[k].rfind("plume_radius", 0) == 0 || header[k] == "max_dP_bar" ||
                            header[k] == "co2_mass_Mt";
      if (headline && rel_ok)
        worst[header[k]] = std::max(worst[header[k]], abs_err / std::abs(f[k]));
    }
  }
  t.close();
  fs::rename(out / "verification.csv.tmp", out / "verification.csv");
  std::string summary;
  for (const auto& [k, v] : worst) {
    char b[96];
    std::snprintf(b, sizeof b, "%s%s %.1f %%", summary.empty() ? "" : ", ", k.c_str(), 100 * v);
    summary += b;
  }
  std::printf(
      "ufno_sweep: verified %d scenario(s) with OPM Flow (%d failed); largest errors: %s -> %s\n",
      verified, failed, summary.empty() ? "none" : summary.c_str(),
      (out / "verification.csv").c_str());
  return failed;
}

}  // namespace

int run_sweep(const SweepConfig& c, const RunOptions& run) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path out(c.out), cases = out / "cases", fields = out / "fields", rows = out / "kpi";
  const std::vector<Scenario> scen = sample_scenarios(c);
  const int n = int(scen.size());
  // The models' KPI heads, read and checked before anything runs (not after hours of
  // predictions).
  KpiHeads heads;
  dist::collectively(MPI_COMM_WORLD, [&] { heads = KpiHeads::from_model_files(c.models); });
  if (rank == 0)
    for (const auto& note : heads.notes) std::cerr << "ufno_sweep: note: " << note << "\n";
  // Scenario case files (rank 0); a scenario that cannot be made fails every rank together.
  dist::collectively(MPI_COMM_WORLD, [&] {
    if (rank != 0) return;
    fs::create_directories(cases);
    fs::create_directories(fields);
    fs::create_directories(rows);
    if (!fs::exists(out / kFingerprintFile)) {
      std::ofstream(out / (std::string(kFingerprintFile) + ".tmp")) << c.fingerprint << "\n";
      fs::rename(out / (std::string(kFingerprintFile) + ".tmp"), out / kFingerprintFile);
    }
    std::ofstream pending(out / "pending.txt");
    for (int i = 0; i < n; ++i) {
      const fs::path cf = cases / (scenario_name(i) + ".h5");
      if (fs::exists(rows / (scenario_name(i) + ".csv"))) continue;  // done in an earlier run
      if (!fs::exists(cf))
        write_case(cf.string(), make_scenario_case(c, scen[i], i), scenario_name(i), "ufno_sweep");
      pending << cf.string() << "\n";
    }
    // Verified scenarios need their case files even when their predictions are done.
    for (int i : verified_scenarios(n, c.verify_scenarios)) {
      const fs::path cf = cases / (scenario_name(i) + ".h5");
      if (!fs::exists(cf))
        write_case(cf.string(), make_scenario_case(c, scen[i], i), scenario_name(i), "ufno_sweep");
    }
  });
  // OPM Flow on the verified scenarios, beside the predictions (rank 0 only).
  std::thread verifier;
  std::vector<std::pair<std::string, ReservoirCase>> to_verify;
  if (rank == 0 && c.verify_scenarios > 0) {
    to_verify = cases_to_verify(c, n);
    verifier = std::thread([&] { verify_with_flow(c, to_verify); });
  }
  BatchSummary b{};
  int any_pending = 0;
  if (rank == 0) any_pending = fs::file_size(out / "pending.txt") > 0;
  MPI_Bcast(&any_pending, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (any_pending) {
    BatchOptions o{c.models,
                   (out / "pending.txt").string(),
                   fields.string(),
                   c.ranks_per_case,
                   "auto",
                   dist::ExchangeAlgorithm::Alltoallv,
                   run};
    b = run_batch(o);
  }
  int failed = 0;
  if (rank == 0) {
    // KPI rows of the new predictions, then the table of all scenarios.
    for (int i = 0; i < n; ++i) {
      const std::string name = scenario_name(i);
      const fs::path row = rows / (name + ".csv"), field = fields / (name + ".h5");
      if (fs::exists(row) || !fs::exists(field)) continue;
      ReservoirCase rc = read_case((cases / (name + ".h5")).string());
      auto f = h5::File::open_read(field.string());
      std::vector<float> sg, dp;
      for (const auto& p : {std::make_pair("SG", &sg), std::make_pair("dP", &dp)})
        if (f.has_dataset(p.first)) *p.second = f.read_floats(p.first, nullptr);
      auto t = f.read_floats("TIMES", nullptr);
      f.close();
      const std::size_t cells = std::size_t(rc.nx) * rc.ny * t.size();
      if (sg.empty()) sg.assign(cells, 0.f);
      if (dp.empty()) dp.assign(cells, 0.f);
      const std::vector<double> times(t.begin(), t.end());
      Kpis k = compute_kpis(rc, sg, dp, times, c.kpi);
      heads.apply(k, rc, sg, dp, times, c.kpi);
      std::ofstream r(row.string() + ".tmp");
      r.precision(6);
      for (double v : kpi_row(k)) r << "," << v;
      r << "\n";
      r.close();
      fs::rename(row.string() + ".tmp", row);
      const bool keep =
          std::find(c.keep_fields.begin(), c.keep_fields.end(), -1) != c.keep_fields.end() ||
          std::find(c.keep_fields.begin(), c.keep_fields.end(), i) != c.keep_fields.end();
      if (!keep) fs::remove(field);
    }
    std::ofstream table((out / "kpis.csv.tmp").string());
    table << "scenario,status";
    for (const auto& p : c.parameters) table << "," << p.name;
    for (const auto& h : kpi_header(c.kpi)) table << "," << h;
    table << "\n";
    for (int i = 0; i < n; ++i) {
      const fs::path row = rows / (scenario_name(i) + ".csv");
      const bool ok = fs::exists(row);
      failed += !ok;
      table << scenario_name(i) << "," << (ok ? "ok" : "failed");
      for (const auto& p : c.parameters) table << "," << scen[i].at(p.name);
      if (ok) {
        std::ifstream r(row);
        std::string line;
        std::getline(r, line);
        table << line;
      }
      table << "\n";
    }
    table.close();
    fs::rename(out / "kpis.csv.tmp", out / "kpis.csv");
    if (verifier.joinable()) verifier.join();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "ufno_sweep: %d scenario(s): %d predicted now, %d from earlier runs, %d failed, in "
        "%.2f s (%.2f scenarios/s predicted) -> %s\n",
        n, b.done, n - failed - b.done, failed, sec, b.done / std::max(sec, 1e-9),
        (out / "kpis.csv").c_str());
  }
  if (verifier.joinable()) verifier.join();
  if (rank == 0 && c.verify_scenarios > 0) failed += write_verification(c, n);
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return failed;
}

}  // namespace ufno
