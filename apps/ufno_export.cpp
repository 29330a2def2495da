// ufno_export: a case file as an OPM Flow deck, the inverse of ufno_import, so that any
// prediction can be checked against the simulator: `ufno_export CASE.h5 --deck DIR` writes
// DIR/CASE.DATA and DIR/include/; with --targets T.h5 it also runs Flow (the training data's
// solver flags, MULTX from a dry run) and writes Flow's SG and dP in the prediction layout, which
// ufno_predict's output can be compared with. Exit codes: 0; 2 bad input (one line naming file
// and field); 3 Flow failed on the case; 1 anything else.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "apps/FiniteRange.hpp"
#include "apps/ToolMain.hpp"
#include "io/CaseEncoding.hpp"
#include "io/EclipseDeckWriter.hpp"
#include "io/OutputFile.hpp"
#include "io/OutputPath.hpp"
#include "io/Temporaries.hpp"
#include "screening/FlowRun.hpp"

namespace {

namespace fs = std::filesystem;

void write_targets(const std::string& path, const ufno::ReservoirCase& c,
                   const ufno::FlowRunResult& r) {
  const auto times = c.times_days.empty() ? ufno::paper_times_days(24) : c.times_days;
  const std::vector<std::size_t> shape{1, times.size(), std::size_t(c.nx), std::size_t(c.ny)};
  ufno::OutputFile f(path);
  f.write_field("SG", shape, 0, 0, shape, r.sg, "1",
                "gas saturation, OPM Flow (case, time, layer, radial cell)");
  f.write_field("dP", shape, 0, 0, shape, r.dp, "bar",
                "pressure buildup, OPM Flow (case, time, layer, radial cell)");
  f.write_times(times);
  f.set_attribute("source", c.path);
  f.set_attribute("producer", "ufno_export (OPM Flow)");
  f.commit();
}

// An existing --deck is replaced only when it is empty or an earlier export (CASE.DATA and
// include/*.INC, nothing else): a directory of the user's is never deleted.
// The case itself is never inside what is replaced (a case file named CASE.DATA).
void check_deck_directory(const std::string& deck, const std::string& case_path) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(deck, ec);
  if (ec || !fs::exists(st)) return;
  if (fs::is_symlink(st) || !fs::is_directory(st))
    throw ufno::InputError(deck, "--deck", "exists and is not a directory");
  auto refuse = [&](const fs::path& p) {
    throw ufno::InputError(deck, "--deck",
                           "holds " + p.filename().string() +
                               ", not only an earlier export's CASE.DATA and include/; it is "
                               "never deleted (give a new directory)");
  };
  const ufno::InputFiles input({case_path});
  for (const auto& e : fs::recursive_directory_iterator(deck))
    if (input.find(e.path().string()))
      throw ufno::InputError(deck, "--deck",
                             "holds the input case " + case_path + "; it would be deleted");
  for (const auto& e : fs::directory_iterator(deck)) {
    const std::string name = e.path().filename().string();
    if (name == "CASE.DATA" && e.is_regular_file() && !e.is_symlink()) continue;
    if (name != "include" || e.is_symlink() || !e.is_directory()) refuse(e.path());
    for (const auto& i : fs::directory_iterator(e.path()))
      if (i.is_symlink() || !i.is_regular_file() || i.path().extension() != ".INC")
        refuse(i.path());
  }
}

// Replaces `deck` by the complete directory `ready` (renamed: the deck is never half written).
void move_deck_into_place(const fs::path& ready, const std::string& deck) {
  fs::remove_all(deck);
  fs::rename(ready, deck);
}

int run(int argc, char** argv) {
  CLI::App app{
      "ufno_export: ufno case file -> OPM Flow deck (and, with --targets, Flow's results)"};
  std::string case_path, deck, targets;
  ufno::FlowRunOptions fo;
  bool no_multx = false;
  app.add_option("case", case_path, "the case file (HDF5, docs/case-format.md)")->required();
  app.add_option("--deck", deck, "directory for CASE.DATA and include/ (created)")->required();
  app.add_option("--targets", targets, "also run Flow and write its SG and dP here");
  app.add_option("--flow", fo.flow, "the flow executable");
  app.add_option("--timeout", fo.timeout_s, "seconds before a Flow run is killed")
      ->check(ufno::finite_range(1.0, 1e6));
  app.add_flag("--no-multx", no_multx, "keep OPM's own radial transmissibilities (no dry run)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ufno_export: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  fo.multx = !no_multx;
  while (deck.size() > 1 && deck.back() == '/') deck.pop_back();
  const ufno::ReservoirCase c = ufno::read_case(case_path);
  check_deck_directory(deck, case_path);
  if (!targets.empty()) {
    ufno::check_output_path(targets, {case_path}, "--targets");
    const fs::path t = fs::absolute(targets).lexically_normal(),
                   d = fs::absolute(deck).lexically_normal();
    if (t.string().rfind(d.string() + "/", 0) == 0)
      throw ufno::InputError(targets, "--targets", "lies inside --deck, which is replaced");
    // Scratch under a name of this process only: no directory of the user's is ever reused.
    const std::string work_name = ufno::temporary_name(deck + ".flow", getpid());
    ufno::remove_stale_temporaries(deck + ".flow");
    const fs::path work(work_name);
    ufno::FlowRunResult r = ufno::run_flow_case(c, work.string(), fo);
    if (!r.ok) {
      fs::remove_all(work);
      std::cerr << "ufno_export: " << case_path << ": " << r.error << "\n";
      return 3;
    }
    try {
      write_targets(targets, c, r);
    } catch (...) {
      fs::remove_all(work);
      throw;
    }
    move_deck_into_place(work / "deck", deck);
    fs::remove_all(work);
    std::printf("ufno_export: %s -> %s and %s (OPM Flow %.1f s)\n", case_path.c_str(), deck.c_str(),
                targets.c_str(), r.wall_s);
    return 0;
  }
  ufno::DeckOptions o{case_path, {}, ""};
  if (fo.multx) {
    ufno::remove_stale_temporaries(deck + ".dry");
    o.multx = ufno::flow_multx(c, ufno::temporary_name(deck + ".dry", getpid()), fo);
    o.multx_note = "from a dry run";
  }
  // Written beside the target and renamed: an interrupted export leaves no half deck.
  ufno::remove_stale_temporaries(deck);
  const std::string tmp = ufno::temporary_name(deck, getpid());
  try {
    ufno::write_flow_deck(c, tmp, o);
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
  move_deck_into_place(tmp, deck);
  std::printf("ufno_export: %s -> %s/CASE.DATA (%d x %d grid%s)\n", case_path.c_str(), deck.c_str(),
              c.nx, c.ny, fo.multx ? ", MULTX from a dry run" : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return ufno::tool_main("ufno_export", argc, argv, run); }
