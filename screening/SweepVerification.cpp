#include "screening/SweepVerification.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/Progress.hpp"
#include "io/CaseEncoding.hpp"
#include "io/ModelFile.hpp"
#include "screening/FlowRun.hpp"
#include "screening/KpiTable.hpp"

namespace ufno {

namespace fs = std::filesystem;

std::vector<std::pair<std::string, ReservoirCase>> cases_to_verify(const SweepConfig& c, int n) {
  const fs::path dir = fs::path(c.out) / "verify";
  std::vector<std::pair<std::string, ReservoirCase>> todo;
  // Flow reports at the times the models predict (a case without TIMES: the paper's times).
  const int nt = ModelFile(c.models.front()).spec().grid[2];
  for (int i : scenarios_to_verify(c, n)) {
    const std::string name = scenario_name(i);
    if (fs::exists(dir / (name + ".csv"))) continue;
    ReservoirCase rc = read_case((fs::path(c.out) / "cases" / (name + ".h5")).string());
    if (rc.times_days.empty()) rc.times_days = paper_times_days(nt);
    todo.emplace_back(name, std::move(rc));
  }
  return todo;
}

// One KPI row of OPM Flow's own fields per scenario, under out/verify/ (written once; a rerun
// skips scenarios that have one). A failed run leaves a .failed note with the reason instead.
void verify_with_flow(const SweepConfig& c,
                      const std::vector<std::pair<std::string, ReservoirCase>>& todo,
                      const std::atomic<bool>& stop, bool bar) {
  const fs::path dir = fs::path(c.out) / "verify";
  Progress progress("ufno_sweep: Flow verification", int(todo.size()), bar);
  int index = 0;
  fs::create_directories(dir);
  FlowRunOptions fo;
  fo.flow = c.flow;
  fo.timeout_s = c.flow_timeout_s;
  for (const auto& [name, rc] : todo) {
    if (stop) return;
    const int i = index++;
    const fs::path row = dir / (name + ".csv"), note = dir / (name + ".failed");
    try {
      const FlowRunResult r = run_flow_case(rc, (dir / name).string(), fo);
      if (!r.ok) {
        std::ofstream(note) << r.error << "\n";
        progress.step(i, name, "FAILED: " + r.error);
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
      char done[64];
      std::snprintf(done, sizeof done, "Flow done in %.1f s", r.wall_s);
      progress.step(i, name, done);
    } catch (const std::exception& e) {
      std::ofstream(note) << e.what() << "\n";
      progress.step(i, name, std::string("FAILED: ") + e.what());
    }
  }
}

namespace {

std::vector<double> csv_numbers(const fs::path& p);

}  // namespace

bool uncertain_scenario(const SweepConfig& c, int i) {
  const fs::path row = fs::path(c.out) / "kpi" / (scenario_name(i) + ".csv");
  if (!fs::exists(row)) return false;
  const auto v = csv_numbers(row);
  const auto header = kpi_header(c.kpi);
  for (const auto& t : c.decisions)
    if (decide(t, header, v) == Decision::Uncertain) return true;
  const auto cols = kpi_columns(c.kpi);
  for (std::size_t k = 0; k < cols.size() && k < v.size(); ++k)
    if (cols[k].kpi->about_interval && cols[k].header.find("interval") != std::string::npos &&
        v[k] == double(int(IntervalTrust::Far)))
      return true;
  return false;
}

std::vector<int> scenarios_to_verify(const SweepConfig& c, int n) {
  if (c.verify_policy != "uncertain-first") return verified_scenarios(n, c.verify_scenarios);
  std::vector<int> uncertain;
  for (int i = 0; i < n; ++i)
    if (uncertain_scenario(c, i)) uncertain.push_back(i);
  return verified_scenarios(n, c.verify_scenarios, uncertain);
}

namespace {

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

}  // namespace

// verification.csv: one row per verified scenario and KPI with ufno's value, Flow's and the
// error; the summary line gives the largest relative error of the headline KPIs.
int write_verification(const SweepConfig& c, int n) {
  const fs::path out(c.out), dir = out / "verify";
  const auto columns = kpi_columns(c.kpi);
  std::ofstream t((out / "verification.csv.tmp").string());
  t << "scenario,status,kpi,ufno,flow,abs_error,rel_error,in_interval\n";
  t.precision(8);
  int verified = 0, failed = 0;
  std::map<std::string, double> worst;
  for (int i : scenarios_to_verify(c, n)) {
    const std::string name = scenario_name(i);
    const fs::path flow_row = dir / (name + ".csv"), ufno_row = out / "kpi" / (name + ".csv");
    if (!fs::exists(flow_row) || !fs::exists(ufno_row)) {
      std::string why = "not run";
      std::ifstream note(dir / (name + ".failed"));
      std::getline(note, why);
      std::replace(why.begin(), why.end(), ',', ';');  // one CSV field
      t << name << ",failed: " << why << ",,,,,,\n";
      ++failed;
      continue;
    }
    ++verified;
    const auto u = csv_numbers(ufno_row), f = csv_numbers(flow_row);
    // Both rows hold the KPI table's columns in its order (kpi_row).
    for (std::size_t k = 0; k < columns.size() && k < u.size() && k < f.size(); ++k) {
      if (columns[k].kpi->about_interval) continue;  // Flow's side has no interval
      const std::string& kpi = columns[k].header;
      const double abs_err = std::abs(u[k] - f[k]);
      const bool rel_ok = std::abs(f[k]) > 1e-9;
      t << name << ",ok," << kpi << "," << u[k] << "," << f[k] << "," << abs_err << ",";
      if (rel_ok) t << abs_err / std::abs(f[k]);
      t << ",";
      // Whether Flow's value lies in ufno's interval, where the KPI has one.
      const auto b = interval_columns(columns, k);
      if (b && b->first < u.size() && b->second < u.size() && std::isfinite(u[b->first]))
        t << int(f[k] >= u[b->first] && f[k] <= u[b->second]);
      t << "\n";
      if (columns[k].kpi->headline && rel_ok)
        worst[kpi] = std::max(worst[kpi], abs_err / std::abs(f[k]));
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

}  // namespace ufno
