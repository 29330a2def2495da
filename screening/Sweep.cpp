#include "screening/Sweep.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "core/Progress.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "io/CaseWriter.hpp"
#include "runtime/BatchRun.hpp"
#include "screening/BackgroundTask.hpp"
#include "screening/Evaluate.hpp"
#include "screening/KpiTable.hpp"
#include "screening/SweepVerification.hpp"

namespace ufno {

namespace fs = std::filesystem;

namespace {

// The scenario case files not yet written and the list of those still to predict
// (out/pending.txt), on rank 0; the verified scenarios' case files too, even when their
// predictions are done.
void write_scenario_cases(const SweepConfig& c, const std::vector<Scenario>& scen) {
  const fs::path out(c.out), cases = out / "cases", rows = out / "kpi";
  fs::create_directories(cases);
  fs::create_directories(out / "fields");
  fs::create_directories(rows);
  const fs::path fp = out / kSweepFingerprintFile;
  if (!fs::exists(fp)) {
    std::ofstream(fp.string() + ".tmp") << c.fingerprint << "\n";
    fs::rename(fp.string() + ".tmp", fp);
  }
  const int n = int(scen.size());
  auto write = [&](int i) {
    const fs::path cf = cases / (scenario_name(i) + ".h5");
    if (!fs::exists(cf))
      write_case(cf.string(), make_scenario_case(c, scen[i], i), scenario_name(i), "ufno_sweep");
    return cf;
  };
  std::ofstream pending(out / "pending.txt");
  for (int i = 0; i < n; ++i) {
    if (fs::exists(rows / (scenario_name(i) + ".csv"))) continue;  // done in an earlier run
    pending << write(i).string() << "\n";
  }
  for (int i : verified_scenarios(n, c.verify_scenarios)) write(i);
}

bool keeps_fields(const SweepConfig& c, int i) {
  const auto& k = c.keep_fields;
  return std::find(k.begin(), k.end(), -1) != k.end() ||
         std::find(k.begin(), k.end(), i) != k.end();
}

// The KPI row (out/kpi/<scenario>.csv) of each new prediction; its fields are then removed
// unless kept.
void write_kpi_rows(const SweepConfig& c, int n, const HeadRegistry& heads) {
  const fs::path out(c.out);
  for (int i = 0; i < n; ++i) {
    const std::string name = scenario_name(i);
    const fs::path row = out / "kpi" / (name + ".csv"), field = out / "fields" / (name + ".h5");
    if (fs::exists(row) || !fs::exists(field)) continue;
    const ReservoirCase rc = read_case((out / "cases" / (name + ".h5")).string());
    const Kpis k = evaluate(rc, read_case_fields(field.string(), rc), heads, c.kpi);
    std::ofstream r(row.string() + ".tmp");
    r.precision(6);
    for (double v : kpi_row(k)) r << "," << v;
    r << "\n";
    r.close();
    fs::rename(row.string() + ".tmp", row);
    if (!keeps_fields(c, i)) {
      fs::remove(field);
      fs::remove(fs::path(field).replace_extension(".xmf"));  // its ParaView description
    }
  }
}

// kpis.csv: every scenario with its status, parameters and KPI row; returns the failed count.
int write_kpi_table(const SweepConfig& c, const std::vector<Scenario>& scen) {
  const fs::path out(c.out);
  std::ofstream table((out / "kpis.csv.tmp").string());
  table << "scenario,status";
  for (const auto& p : c.parameters) table << "," << p.name;
  const auto header = kpi_header(c.kpi);
  for (const auto& h : header) table << "," << h;
  for (const auto& t : c.decisions) table << "," << decision_column(t);
  // Which scenarios' answers rest on OPM Flow (verified, a KPI row of Flow's own).
  if (c.verify_scenarios > 0) table << ",verified_by_flow";
  table << "\n";
  int failed = 0;
  for (int i = 0; i < int(scen.size()); ++i) {
    const fs::path row = out / "kpi" / (scenario_name(i) + ".csv");
    const bool ok = fs::exists(row);
    failed += !ok;
    table << scenario_name(i) << "," << (ok ? "ok" : "failed");
    for (const auto& p : c.parameters) table << "," << scen[i].at(p.name);
    if (ok) {
      std::ifstream r(row);
      std::string line;
      std::getline(r, line);
      table << line;
      std::vector<double> values;
      std::stringstream cells(line);
      for (std::string cell; std::getline(cells, cell, ',');)
        if (!cell.empty()) values.push_back(std::stod(cell));
      for (const auto& t : c.decisions) table << "," << int(decide(t, header, values));
    } else {
      for (std::size_t k = 0; k < header.size() + c.decisions.size(); ++k) table << ",";
    }
    if (c.verify_scenarios > 0)
      table << "," << int(fs::exists(out / "verify" / (scenario_name(i) + ".csv")));
    table << "\n";
  }
  table.close();
  fs::rename(out / "kpis.csv.tmp", out / "kpis.csv");
  return failed;
}

// The predictions of the pending scenarios, on every rank, with the registry's field stage.
BatchSummary predict_pending(const SweepConfig& c, const RunOptions& run, const HeadRegistry& heads,
                             int rank) {
  const fs::path out(c.out);
  int any_pending = 0;
  if (rank == 0) any_pending = fs::file_size(out / "pending.txt") > 0;
  MPI_Bcast(&any_pending, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!any_pending) return {};
  BatchOptions o{c.models,
                 (out / "pending.txt").string(),
                 (out / "fields").string(),
                 c.ranks_per_case,
                 "auto",
                 dist::ExchangeAlgorithm::Alltoallv,
                 run};
  o.field_heads = heads.field_stage();
  o.tool = "ufno_sweep";
  return run_batch(o);
}

}  // namespace

int run_sweep(const SweepConfig& c, const RunOptions& run) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Scenario> scen = sample_scenarios(c);
  const int n = int(scen.size());
  // The models' heads, read and checked before anything runs (not after hours of predictions).
  HeadRegistry heads;
  dist::collectively(MPI_COMM_WORLD, [&] { heads = HeadRegistry::from_model_files(c.models); });
  if (rank == 0)
    for (const auto& note : heads.notes) std::cerr << "ufno_sweep: note: " << note << "\n";
  // Scenario case files (rank 0); a scenario that cannot be made fails every rank together.
  dist::collectively(MPI_COMM_WORLD, [&] {
    if (rank == 0) write_scenario_cases(c, scen);
  });
  // OPM Flow on the verified scenarios, beside the predictions (rank 0 only). Owned: should
  // anything below throw, it stops after its current run and is joined as the error unwinds.
  // Evenly spread scenarios are known now and run beside the predictions; the uncertain ones
  // are known from the KPI rows, after the predictions.
  const bool beside = c.verify_policy == "even";
  std::vector<std::pair<std::string, ReservoirCase>> to_verify;
  std::optional<BackgroundTask> verifier;
  if (rank == 0 && c.verify_scenarios > 0 && beside) {
    to_verify = cases_to_verify(c, n);
    verifier.emplace([&](const std::atomic<bool>& stop) { verify_with_flow(c, to_verify, stop); });
  }
  const BatchSummary b = predict_pending(c, run, heads, rank);
  int failed = 0;
  if (rank == 0) {
    write_kpi_rows(c, n, heads);
    if (c.verify_scenarios > 0 && !beside) {
      to_verify = cases_to_verify(c, n);
      verify_with_flow(c, to_verify, std::atomic<bool>(false), Progress::on_terminal());
    }
    if (verifier) verifier->join();
    failed = write_kpi_table(c, scen);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "ufno_sweep: %d scenario(s): %d predicted now, %d from earlier runs, %d failed, in "
        "%.2f s (%.2f scenarios/s predicted) -> %s\n",
        n, b.done, n - failed - b.done, failed, sec, b.done / std::max(sec, 1e-9),
        (fs::path(c.out) / "kpis.csv").c_str());
  }
  if (rank == 0 && c.verify_scenarios > 0) failed += write_verification(c, n);
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return failed;
}

}  // namespace ufno
