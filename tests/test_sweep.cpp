// ufno_sweep: Latin-hypercube and grid sampling, the KPI table (one row per scenario with its
// parameters), kept fields, resuming, and refused configurations.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "screening/KpiTable.hpp"
#include "screening/Sweep.hpp"
#include "support/RunCommand.hpp"
#include "support/Skip.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;
namespace fs = std::filesystem;

namespace {

std::string write_config(const std::string& name, const std::string& body) {
  std::ofstream(name) << body;
  return name;
}

std::string config_json(const std::string& out, const std::string& sampling, int samples,
                        const std::string& params, const std::string& keep) {
  return "{\"models\": [\"" + test::data_path("ufno_small.h5") + "\", \"" +
         test::data_path("fno_small.h5") + "\"], \"base_cases\": [\"" +
         test::data_path("sweep_base_case.h5") + "\"], \"sampling\": \"" + sampling +
         "\", \"samples\": " + std::to_string(samples) + ", \"seed\": 3, \"parameters\": {" +
         params +
         "}, \"kpi\": {\"years\": [1, 30], \"critical_dp_bar\": 5}, \"keep_fields\": " + keep +
         ", \"out\": \"" + out + "\"}";
}

test::Run sweep(const std::string& config) {
  return test::run_command(std::string(UFNO_SWEEP_EXE) + " --threads 1 --config " + config);
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);) v.push_back(l);
  return v;
}

}  // namespace

TEST_CASE("Latin-hypercube samples take one value per stratum", "[sweep]") {
  SweepConfig c;
  c.samples = 10;
  c.seed = 5;
  c.parameters = {{"INJ_RATE", {0.2, 2.2}, {}, 3}, {"TEMP", {30, 130}, {}, 3}};
  auto s = sample_scenarios(c);
  REQUIRE(s.size() == 10);
  for (const auto& p : c.parameters) {
    std::set<int> strata;
    for (const auto& sc : s) {
      const double q = (sc.at(p.name) - p.range[0]) / (p.range[1] - p.range[0]);
      CHECK(q >= 0);
      CHECK(q < 1);
      strata.insert(int(q * 10));
    }
    CHECK(strata.size() == 10);
  }
  CHECK(sample_scenarios(c) == s);  // deterministic from the seed
  c.seed = 6;
  CHECK(sample_scenarios(c) != s);
}

TEST_CASE("grid sampling takes every combination", "[sweep]") {
  SweepConfig c;
  c.sampling = "grid";
  c.parameters = {{"INJ_RATE", {0.5, 1.5}, {}, 3}, {"PERF_TOP", {}, {2, 4}, 3}};
  auto s = sample_scenarios(c);
  REQUIRE(s.size() == 6);
  std::set<std::pair<double, double>> combos;
  for (const auto& sc : s) combos.insert({sc.at("INJ_RATE"), sc.at("PERF_TOP")});
  CHECK(combos.size() == 6);
  CHECK(combos.count({1.0, 4}) == 1);
}

TEST_CASE("a sweep writes the KPI table, keeps the fields asked for and resumes", "[sweep][mpi]") {
  fs::remove_all("sweep_t");
  const auto cfg = write_config(
      "sweep_t.json",
      config_json("sweep_t", "lhs", 4,
                  "\"INJ_RATE\": {\"range\": [0.5, 2]}, \"PERF_TOP\": {\"values\": [3, 5]}",
                  "[1]"));
  auto r = sweep(cfg);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("4 scenario(s): 4 predicted now, 0 from earlier runs, 0 failed") !=
        std::string::npos);
  auto t = lines("sweep_t/kpis.csv");
  REQUIRE(t.size() == 5);
  CHECK(t[0].rfind("scenario,status,INJ_RATE,PERF_TOP,plume_radius_m_1yr,plume_radius_m_lo_1yr,"
                   "plume_radius_m_hi_1yr,plume_radius_interval_1yr,plume_area_km2_1yr",
                   0) == 0);
  CHECK(t[0].find("aor_radius_m,aor_radius_m_lo,aor_radius_m_hi,aor_interval,co2_mass_Mt,") !=
        std::string::npos);
  for (int i = 1; i <= 4; ++i) CHECK(t[i].find(",ok,") != std::string::npos);
  CHECK(fs::exists("sweep_t/fields/scenario_0001.h5"));   // kept
  CHECK(!fs::exists("sweep_t/fields/scenario_0000.h5"));  // not kept
  // A rerun predicts nothing and gives the same table.
  r = sweep(cfg);
  CHECK(r.out.find("0 predicted now, 4 from earlier runs") != std::string::npos);
  CHECK(lines("sweep_t/kpis.csv") == t);
  // An interrupted run (KPI rows of two scenarios lost) predicts only those again.
  fs::remove("sweep_t/kpi/scenario_0002.csv");
  fs::remove("sweep_t/kpi/scenario_0003.csv");
  r = sweep(cfg);
  CHECK(r.out.find("2 predicted now, 2 from earlier runs") != std::string::npos);
  CHECK(lines("sweep_t/kpis.csv") == t);
}

TEST_CASE("a sweep over geostatistical fields gives each scenario its own field", "[sweep][mpi]") {
  fs::remove_all("sweep_g");
  std::string body = config_json("sweep_g", "lhs", 3,
                                 "\"KGEO\": {\"range\": [20, 400]}, \"SIGMA_LNK\": "
                                 "{\"values\": [0.5, 1.0]}",
                                 "\"all\"");
  body.insert(body.size() - 1,
              ", \"field\": {\"generator\": \"geostat\", \"structure\": "
              "\"layered\", \"corr_r_cells\": 5}");
  auto r = sweep(write_config("sweep_g.json", body));
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto t = lines("sweep_g/kpis.csv");
  REQUIRE(t.size() == 4);
  CHECK(t[0].rfind("scenario,status,KGEO,SIGMA_LNK,", 0) == 0);
  // The scenario case files hold the fields generated from the row's parameters, the config's
  // defaults and the scenario's seed, on the base case's active cells; each scenario its own.
  std::vector<std::vector<float>> perms;
  for (int i = 0; i < 3; ++i) {
    const std::string f = "sweep_g/cases/scenario_000" + std::to_string(i) + ".h5";
    REQUIRE(fs::exists(f));
    perms.push_back(test::read_all(f).arrays.at("PERMX").data);
    std::stringstream row(t[i + 1]);
    std::string name, status, kgeo, sigma;
    std::getline(row, name, ',');
    std::getline(row, status, ',');
    std::getline(row, kgeo, ',');
    std::getline(row, sigma, ',');
    ReservoirCase rc = read_case(test::data_path("sweep_base_case.h5"));
    GeostatParams g;
    g.structure = "layered";
    g.corr_r_cells = 5;
    g.kgeo_md = std::stod(kgeo);
    g.sigma_lnk = std::stod(sigma);
    g.seed = 3 * 1000003ul + unsigned(i);
    apply_geostat_field(rc, g);
    REQUIRE(rc.permx.size() == perms.back().size());
    double worst = 0;
    for (std::size_t k = 0; k < rc.permx.size(); ++k)
      worst = std::max(worst, std::abs(perms.back()[k] - rc.permx[k]) / std::max(1.0, rc.permx[k]));
    CHECK(worst < 1e-4);  // the table's parameters are printed rounded
  }
  CHECK(perms[0] != perms[1]);
  CHECK(perms[1] != perms[2]);
}

TEST_CASE("bad sweep configurations are refused naming the key", "[sweep][mpi]") {
  auto bad = [](const std::string& body, const std::string& what) {
    auto r = sweep(write_config("sweep_bad.json", body));
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("ufno_sweep: error: sweep_bad.json: " + what) != std::string::npos);
  };
  bad("{ not json", "is not valid JSON");
  bad(config_json("sweep_b", "lhs", 2, "\"DEPTH\": {\"range\": [1, 2]}", "[]"),
      "parameters.DEPTH: unknown parameter");
  bad(config_json("sweep_b", "lhs", 2, "\"TEMP\": {\"range\": [90, 40]}", "[]"),
      "parameters.TEMP: range must be [lo, hi]");
  {
    std::string body = config_json("sweep_b", "lhs", 2, "\"KGEO\": {\"range\": [-5, 10]}", "[]");
    bad(body, "parameters.KGEO: geostat: kgeo_md:");
  }
  bad(config_json("sweep_b", "random", 2, "\"TEMP\": {\"range\": [40, 90]}", "[]"),
      "sampling: must be");
  // Physically impossible values are refused up front, not per scenario.
  bad(config_json("sweep_b", "lhs", 2, "\"INJ_RATE\": {\"range\": [-1, 2]}", "[]"),
      "parameters.INJ_RATE: -1 Mt/yr is physically impossible");
  bad(config_json("sweep_b", "lhs", 2, "\"TEMP\": {\"values\": [40, 1e300]}", "[]"),
      "parameters.TEMP: 1e+300 degC is physically impossible");
  bad(config_json("sweep_b", "lhs", 2, "\"PERM_MULT\": {\"values\": [0, 2]}", "[]"),
      "parameters.PERM_MULT: multipliers must be positive");
  // Misspelled keys are refused, at every level.
  {
    std::string body = config_json("sweep_b", "lhs", 2, "\"TEMP\": {\"range\": [40, 90]}", "[]");
    bad(std::string(body).insert(1, "\"sampels\": 3, "), "sampels: unknown key");
    std::string kpi = body;
    kpi.replace(kpi.find("\"critical_dp_bar\""), 17, "\"critical_dp\"");
    bad(kpi, "kpi.critical_dp: unknown key");
    bad(config_json("sweep_b", "lhs", 2, "\"TEMP\": {\"rnage\": [40, 90]}", "[]"),
        "parameters.TEMP.rnage: unknown key");
    // A verification policy the sweep does not know, or of the wrong JSON type.
    std::string policy = body;
    policy.insert(policy.size() - 1, ", \"verify\": {\"scenarios\": 1, \"policy\": \"random\"}");
    bad(policy, "verify.policy: must be \"even\" or \"uncertain-first\"");
    std::string typed = body;
    typed.insert(typed.size() - 1, ", \"verify\": {\"scenarios\": 1, \"policy\": 3}");
    bad(typed, "verify.policy");
  }
}

TEST_CASE("a sweep rerun with another configuration is refused, not mixed", "[sweep][mpi]") {
  fs::remove_all("sweep_f");
  const std::string params = "\"INJ_RATE\": {\"range\": [0.5, 2]}";
  auto r = sweep(write_config("sweep_f.json", config_json("sweep_f", "lhs", 2, params, "[]")));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto before = lines("sweep_f/kpis.csv");
  // The edited configuration (another rate range) must not reuse the old scenarios' results.
  r = sweep(write_config(
      "sweep_f.json", config_json("sweep_f", "lhs", 2, "\"INJ_RATE\": {\"range\": [1, 2]}", "[]")));
  CHECK(r.code == 2);
  CHECK(r.err.find("sweep_f.json: out: sweep_f holds the results of a different sweep") !=
        std::string::npos);
  CHECK(lines("sweep_f/kpis.csv") == before);  // nothing touched
  // The same configuration with its keys in another order is the same sweep and resumes.
  r = sweep(write_config("sweep_f.json", config_json("sweep_f", "lhs", 2, params, "[]")));
  CHECK(r.code == 0);
  CHECK(r.out.find("0 predicted now, 2 from earlier runs") != std::string::npos);
  // Results without a fingerprint (an older ufno) are not trusted either.
  fs::remove("sweep_f/sweep_fingerprint.txt");
  r = sweep("sweep_f.json");
  CHECK(r.code == 2);
  CHECK(r.err.find("holds results of an unknown configuration") != std::string::npos);
}

TEST_CASE("verified scenarios are spread evenly over the sweep", "[sweep]") {
  CHECK(verified_scenarios(40, 4) == std::vector<int>{0, 10, 20, 30});
  CHECK(verified_scenarios(3, 5) == std::vector<int>{0, 1, 2});
  CHECK(verified_scenarios(7, 0).empty());
}

// CTest: sweep_flow_verification (skipped where OPM Flow is not installed).
TEST_CASE("a sweep verifies scenarios with OPM Flow and reports each KPI's error",
          "[sweep][mpi][.sweep_flow_verification]") {
  if (std::system("command -v flow > /dev/null 2>&1") != 0)
    ufno::test::skip("OPM Flow (flow) is not installed; the sweep's verification is not exercised");
  fs::remove_all("sweep_v");
  std::string body =
      config_json("sweep_v", "lhs", 3, "\"INJ_RATE\": {\"range\": [0.02, 0.05]}", "[]");
  body.insert(body.size() - 1, ", \"verify\": {\"scenarios\": 2}");
  auto r = sweep(write_config("sweep_v.json", body));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("verified 2 scenario(s) with OPM Flow (0 failed)") != std::string::npos);
  auto v = lines("sweep_v/verification.csv");
  REQUIRE(v.size() > 2);
  CHECK(v[0] == "scenario,status,kpi,ufno,flow,abs_error,rel_error,in_interval");
  int injected = 0;
  for (const auto& l : v) {
    CHECK(l.rfind("scenario_0002", 0) != 0);  // only 0 and 1 of 3 are verified
    if (l.find(",injected_Mt,") == std::string::npos) continue;
    ++injected;
    // Both sides' injected mass is rate x time of the same case: an exact consistency check.
    std::stringstream row(l);
    std::string cell;
    std::vector<std::string> cells;
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    REQUIRE(cells.size() == 7);
    CHECK(std::stod(cells[5]) <= 1e-4 * std::stod(cells[4]));
  }
  CHECK(injected == 2);
  CHECK(fs::exists("sweep_v/verify/scenario_0000/deck/CASE.DATA"));
  // A rerun reuses Flow's rows: nothing is simulated again.
  const auto stamp = fs::last_write_time("sweep_v/verify/scenario_0001.csv");
  r = sweep("sweep_v.json");
  CHECK(r.code == 0);
  CHECK(fs::last_write_time("sweep_v/verify/scenario_0001.csv") == stamp);
  CHECK(lines("sweep_v/verification.csv") == v);
  // The table says which scenarios rest on Flow.
  const auto t = lines("sweep_v/kpis.csv");
  REQUIRE(t.size() == 4);
  CHECK(t[0].substr(t[0].rfind(',')) == ",verified_by_flow");
  CHECK(t[1].substr(t[1].size() - 2) == ",1");
  CHECK(t[3].substr(t[3].size() - 2) == ",0");
  // Uncertain first: with a threshold on a KPI without an interval (the test models carry
  // none) every scenario is undecided, so Flow runs after the predictions on evenly spread ones.
  fs::remove_all("sweep_u");
  std::string uf =
      config_json("sweep_u", "lhs", 3, "\"INJ_RATE\": {\"range\": [0.02, 0.05]}", "[]");
  uf.insert(uf.size() - 1,
            ", \"verify\": {\"scenarios\": 1, \"policy\": \"uncertain-first\"}, "
            "\"decisions\": {\"max_dP_bar\": 50}");
  r = sweep(write_config("sweep_u.json", uf));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::exists("sweep_u/verify/scenario_0000.csv"));
  CHECK(lines("sweep_u/kpis.csv")[1].substr(lines("sweep_u/kpis.csv")[1].size() - 4) == ",0,1");
  fs::remove_all("sweep_u");
}

TEST_CASE("a verification whose Flow run fails is reported and fails the sweep", "[sweep][mpi]") {
  fs::remove_all("sweep_vf");
  std::string body = config_json("sweep_vf", "lhs", 2, "\"INJ_RATE\": {\"range\": [0.5, 2]}", "[]");
  body.insert(body.size() - 1, ", \"verify\": {\"scenarios\": 1, \"flow\": \"/bin/false\"}");
  auto r = sweep(write_config("sweep_vf.json", body));
  INFO(r.out << r.err);
  CHECK(r.code == 3);
  CHECK(r.out.find("verified 0 scenario(s) with OPM Flow (1 failed)") != std::string::npos);
  const auto v = lines("sweep_vf/verification.csv");
  REQUIRE(v.size() == 2);
  CHECK(v[1].rfind("scenario_0000,failed: ", 0) == 0);
}

TEST_CASE("decision thresholds: bad ones refused, each scenario below, above or across",
          "[sweep][mpi]") {
  auto bad = [](const std::string& decisions, const std::string& what) {
    std::string body = config_json("sweep_d", "lhs", 2, "\"TEMP\": {\"range\": [40, 90]}", "[]");
    body.insert(1, "\"decisions\": " + decisions + ", ");
    auto r = sweep(write_config("sweep_bad.json", body));
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("ufno_sweep: error: sweep_bad.json: " + what) != std::string::npos);
  };
  bad("{\"max_dP_bar\": -5}", "decisions.max_dP_bar: must be a positive finite number");
  bad("{\"max_dP_bar\": \"nan\"}", "decisions.max_dP_bar: must be a number in bar");
  bad("{\"max_dP_bar\": {\"value\": 5, \"unit\": \"m\"}}",
      "decisions.max_dP_bar: unit 'm' is not one of max_dP_bar's (bar, MPa, psi)");
  bad("{\"max_dP_field_bar\": 5}", "decisions.max_dP_field_bar: is not a KPI with an interval");
  bad("{\"plume_radius_m_10yr\": 500}",  // the configuration's years are 1 and 30
      "decisions.plume_radius_m_10yr: is not a KPI with an interval");
  bad("[1]", "decisions: must be an object");

  // decide() on a row: the interval's bounds against the threshold, in the column's unit.
  SweepConfig c;
  c.kpi.years = {30};
  const auto header = kpi_header(c.kpi);
  std::vector<double> row(header.size(), 0.0);
  auto set = [&](const std::string& name, double v) {
    row[std::find(header.begin(), header.end(), name) - header.begin()] = v;
  };
  set("max_dP_bar_lo", 40), set("max_dP_bar_hi", 60);
  set("plume_radius_m_lo_30yr", 1000), set("plume_radius_m_hi_30yr", 1500);
  const auto d = read_decisions(
      nlohmann::json::parse("{\"max_dP_bar\": {\"value\": 3, \"unit\": \"MPa\"}, "
                            "\"plume_radius_m_30yr\": {\"value\": 2, \"unit\": \"km\"}, "
                            "\"aor_radius_m\": 100}"),
      "c.json", c.kpi);
  REQUIRE(d.size() == 3);
  auto threshold = [&](const std::string& kpi) {
    for (const auto& t : d)
      if (t.kpi == kpi) return t;
    FAIL("no threshold on " << kpi);
    return d[0];
  };
  CHECK(threshold("max_dP_bar").value == Approx(30.0));
  CHECK(threshold("plume_radius_m_30yr").value == Approx(2000.0));
  CHECK(decide(threshold("max_dP_bar"), header, row) == Decision::Above);  // 40..60 above 30 bar
  CHECK(decide(threshold("plume_radius_m_30yr"), header, row) ==
        Decision::Below);  // 1.0..1.5 km below 2 km
  set("aor_radius_m_lo", std::nan("")), set("aor_radius_m_hi", std::nan(""));
  CHECK(decide(threshold("aor_radius_m"), header, row) ==
        Decision::Uncertain);  // no interval: only Flow decides
  set("max_dP_bar_lo", 20);
  CHECK(decide({"max_dP_bar", 35}, header, row) == Decision::Uncertain);  // 20..60 across 35

  // The sweep's table: a decision column per threshold (the test models carry no intervals:
  // every scenario is undecided).
  std::string body = config_json("sweep_d", "lhs", 2, "\"TEMP\": {\"range\": [40, 90]}", "[]");
  body.insert(1, "\"decisions\": {\"max_dP_bar\": 50}, ");
  fs::remove_all("sweep_d");
  auto r = sweep(write_config("sweep_d.json", body));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto t = lines("sweep_d/kpis.csv");
  REQUIRE(t.size() == 3);
  CHECK(t[0].size() > 20);
  CHECK(t[0].substr(t[0].size() - 20) == ",decision_max_dP_bar");
  CHECK(t[1].substr(t[1].size() - 2) == ",0");
  fs::remove_all("sweep_d");
}

TEST_CASE("uncertain scenarios are verified first, then evenly spread ones", "[sweep]") {
  CHECK(verified_scenarios(10, 3, {7}) == std::vector<int>{0, 4, 7});
  CHECK(verified_scenarios(10, 2, {1, 3, 5, 8}) == std::vector<int>{1, 5});
  CHECK(verified_scenarios(10, 3, {}) == verified_scenarios(10, 3));
  CHECK(verified_scenarios(4, 9, {2}) == std::vector<int>{0, 1, 2, 3});
}
