#include "screening/FlowRun.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <opm/io/eclipse/ESmry.hpp>
#include <opm/io/eclipse/EclFile.hpp>

#include "core/InputError.hpp"
#include "io/CaseEncoding.hpp"
#include "io/EclipseDeckWriter.hpp"
#include "io/EclipseResults.hpp"
#include "screening/ChildProcess.hpp"

namespace ufno {

namespace fs = std::filesystem;

namespace {

std::vector<int> active_cells(const ReservoirCase& c) {
  std::vector<int> a;
  for (double k : c.permx) a.push_back(k > 0 ? 1 : 0);
  return a;
}

// OPM's TRANX from an INIT file as (X, Y), 0 in inactive cells.
std::vector<double> read_tranx(const std::string& init, const ReservoirCase& c) {
  Opm::EclIO::EclFile f(init);
  if (!f.hasKey("TRANX")) throw InputError(init, "TRANX", "missing from the dry run's INIT file");
  const auto& t = f.get<float>("TRANX");
  const auto act = active_cells(c);
  std::vector<double> out(act.size(), 0.0);
  std::size_t a = 0;
  for (std::size_t i = 0; i < act.size(); ++i)
    if (act[i]) {
      if (a >= t.size()) throw InputError(init, "TRANX", "has fewer values than active cells");
      out[i] = t[a++];
    }
  return out;
}

// The cumulative injection (FGIT) against rate x time: a run that hit the injector's BHP limit
// did not simulate the case asked for.
std::string injection_shortfall(const ReservoirCase& c, const fs::path& smspec) {
  Opm::EclIO::ESmry s(smspec.string());
  if (!s.hasKey("FGIT")) return "no FGIT in the summary";
  s.loadData();
  const auto& fgit = s.get("FGIT");
  const double days = c.times_days.empty() ? paper_times_days(24).back() : c.times_days.back();
  const double want =
      c.rate_mt_per_year * 1e9 * days / 365.25 / kCo2SurfaceDensity * kDeckThetaDeg / 360.0;
  if (fgit.empty() || want <= 0) return "";
  const double rel = std::abs(fgit.back() - want) / want;
  if (rel <= 1e-3) return "";
  return "flow injected " + std::to_string(int(std::lround(100 * fgit.back() / want))) +
         " % of the rate (the injector's BHP limit)";
}

}  // namespace

std::vector<std::string> flow_solver_flags() {
  // python/ufno/data/flow_batch.py FLOW_FLAGS explains each; the data sets were made with these.
  return {"--threads-per-process=1", "--ds-max=0.1", "--tolerance-cnv-relaxed=3",
          "--relaxed-max-pv-fraction=0", "--enable-terminal-output=false"};
}

std::vector<double> flow_multx(const ReservoirCase& c, const std::string& scratch,
                               const FlowRunOptions& o) {
  const fs::path dir(scratch);
  fs::remove_all(dir);
  write_flow_deck(c, (dir / "deck").string(), {c.path, {}, ""});
  const ProcessResult p = run_process(
      {o.flow, "--enable-dry-run=true", "--threads-per-process=1", "--enable-terminal-output=false",
       "--output-dir=" + (dir / "out").string(), (dir / "deck" / "CASE.DATA").string()},
      (dir / "dry_run.log").string(), 120);
  const fs::path init = dir / "out" / "CASE.INIT";
  if (p.status != 0 || !fs::exists(init)) {
    std::error_code ec;
    fs::remove_all(dir, ec);  // the scratch directory is this call's own
    throw InputError(o.flow, "",
                     "dry run for MULTX failed: " + (p.error.empty() ? "no INIT file" : p.error));
  }
  const auto opm = read_tranx(init.string(), c);
  const auto exact = exact_radial_transmissibility(c);
  std::vector<double> m(opm.size(), 1.0);
  for (std::size_t i = 0; i < m.size(); ++i)
    if (opm[i] > 0 && exact[i] > 0) m[i] = exact[i] / opm[i];
  fs::remove_all(dir);
  return m;
}

FlowRunResult run_flow_case(const ReservoirCase& c, const std::string& dir,
                            const FlowRunOptions& o) {
  const fs::path d(dir);
  fs::create_directories(d);
  DeckOptions deck{c.path, {}, ""};
  if (o.multx) {
    deck.multx = flow_multx(c, (d / "dry").string(), o);
    deck.multx_note = "from a dry run";
  }
  fs::remove_all(d / "deck");
  write_flow_deck(c, (d / "deck").string(), deck);
  fs::remove_all(d / "run");
  std::vector<std::string> args{o.flow};
  for (const auto& f : flow_solver_flags()) args.push_back(f);
  args.push_back("--output-dir=" + (d / "run").string());
  args.push_back((d / "deck" / "CASE.DATA").string());
  FlowRunResult r;
  const auto t0 = std::chrono::steady_clock::now();
  const ProcessResult p = run_process(args, (d / "flow.log").string(), o.timeout_s);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (p.status != 0) {
    r.error = "flow: " + p.error + " (log: " + (d / "flow.log").string() + ")";
    return r;
  }
  try {
    const FlowResults f =
        read_flow_results((d / "run" / "CASE.UNRST").string(), c.nx, c.ny, active_cells(c));
    r.sg.assign(f.sg.begin(), f.sg.end());
    r.dp.assign(f.dp.begin(), f.dp.end());
    const std::size_t expected = (c.times_days.empty() ? 24 : c.times_days.size());
    if (std::size_t(f.nt) != expected) {
      r.error =
          "flow wrote " + std::to_string(f.nt) + " report steps, not " + std::to_string(expected);
      return r;
    }
    r.error = injection_shortfall(c, d / "run" / "CASE.SMSPEC");
    if (!r.error.empty()) return r;
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace ufno
