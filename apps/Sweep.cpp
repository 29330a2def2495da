#include "apps/Sweep.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "apps/BatchRun.hpp"
#include "apps/DefaultModels.hpp"
#include "io/CaseWriter.hpp"
#include "io/Hdf5File.hpp"

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

}  // namespace

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
    // No "models": the shipped default models, as for ufno_predict without --model.
    c.models =
        j.contains("models") ? j.at("models").get<std::vector<std::string>>() : default_models();
    c.base_cases = j.at("base_cases").get<std::vector<std::string>>();
    c.sampling = j.value("sampling", "lhs");
    c.samples = j.value("samples", 10);
    c.seed = j.value("seed", 1ul);
    c.out = j.value("out", "sweep_out");
    c.ranks_per_case = j.value("ranks_per_case", 1);
    if (j.contains("kpi")) {
      const auto& k = j["kpi"];
      c.kpi.sg_threshold = k.value("sg_threshold", c.kpi.sg_threshold);
      c.kpi.years = k.value("years", c.kpi.years);
      c.kpi.critical_dp_bar = k.value("critical_dp_bar", c.kpi.critical_dp_bar);
      c.kpi.co2_density = k.value("co2_density", c.kpi.co2_density);
      c.kpi.mass_tolerance = k.value("mass_tolerance", c.kpi.mass_tolerance);
    }
    if (j.contains("keep_fields")) {
      if (j["keep_fields"].is_string() && j["keep_fields"] == "all")
        c.keep_fields = {-1};
      else
        c.keep_fields = j["keep_fields"].get<std::vector<int>>();
    }
    if (j.contains("field")) {
      const auto& f = j["field"];
      if (f.value("generator", std::string()) != "geostat")
        throw InputError(path, "field.generator", "must be \"geostat\"");
      c.geostat = true;
      auto& g = c.geostat_defaults;
      g.kgeo_md = f.value("kgeo_md", g.kgeo_md);
      g.sigma_lnk = f.value("sigma_lnk", g.sigma_lnk);
      g.corr_r_cells = f.value("corr_r_cells", g.corr_r_cells);
      g.corr_z_cells = f.value("corr_z_cells", g.corr_z_cells);
      g.anisotropy = f.value("anisotropy", g.anisotropy);
      g.poro_mean = f.value("poro_mean", g.poro_mean);
      g.structure = f.value("structure", g.structure);
    }
    for (auto& [name, spec] : j.at("parameters").items()) {
      if (std::find(kKnown.begin(), kKnown.end(), name) == kKnown.end())
        throw InputError(path, "parameters." + name, "unknown parameter");
      SweepParameter p;
      p.name = name;
      if (spec.contains("range")) p.range = spec["range"].get<std::vector<double>>();
      if (spec.contains("values")) p.values = spec["values"].get<std::vector<double>>();
      p.steps = spec.value("steps", 3);
      if ((p.range.size() == 2) == !p.values.empty())
        throw InputError(path, "parameters." + name,
                         "give either \"range\": [lo, hi] or \"values\"");
      if (p.range.size() == 2 && !(p.range[0] <= p.range[1]))
        throw InputError(path, "parameters." + name, "range must be [lo, hi] with lo <= hi");
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
  if (c.samples < 1) throw InputError(path, "samples", "must be positive");
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

int run_sweep(const SweepConfig& c) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path out(c.out), cases = out / "cases", fields = out / "fields", rows = out / "kpi";
  const std::vector<Scenario> scen = sample_scenarios(c);
  const int n = int(scen.size());
  int failed_setup = 0;
  if (rank == 0) {
    fs::create_directories(cases);
    fs::create_directories(fields);
    fs::create_directories(rows);
    std::ofstream pending(out / "pending.txt");
    for (int i = 0; i < n; ++i) {
      const fs::path cf = cases / (scenario_name(i) + ".h5");
      if (fs::exists(rows / (scenario_name(i) + ".csv"))) continue;  // done in an earlier run
      if (!fs::exists(cf))
        write_case(cf.string(), make_scenario_case(c, scen[i], i), scenario_name(i));
      pending << cf.string() << "\n";
    }
  }
  MPI_Bcast(&failed_setup, 1, MPI_INT, 0, MPI_COMM_WORLD);
  BatchSummary b{};
  int any_pending = 0;
  if (rank == 0) any_pending = fs::file_size(out / "pending.txt") > 0;
  MPI_Bcast(&any_pending, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (any_pending) {
    BatchOptions o{c.models, (out / "pending.txt").string(),    fields.string(), c.ranks_per_case,
                   "auto",   dist::ExchangeAlgorithm::Alltoallv};
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
      const Kpis k = compute_kpis(rc, sg, dp, std::vector<double>(t.begin(), t.end()), c.kpi);
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
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "ufno_sweep: %d scenario(s): %d predicted now, %d from earlier runs, %d failed, in "
        "%.2f s (%.2f scenarios/s predicted) -> %s\n",
        n, b.done, n - failed - b.done, failed, sec, b.done / std::max(sec, 1e-9),
        (out / "kpis.csv").c_str());
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return failed;
}

}  // namespace ufno
