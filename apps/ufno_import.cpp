// ufno_import: turns an ECLIPSE / OPM Flow deck (radial r-z, one CO2 injector) into the project's
// case file, and optionally its Flow results (UNRST) into a target file with SG and dP at every
// report step. With --like, the case is resampled onto the grid of a reference case file (the
// model's grid) and the tool says so. A 3-D Cartesian deck with one CARFIN nest per well becomes
// a nested site file instead (docs/nested-sites.md). Exit codes: 0, 2 bad input (one line naming
// file and keyword), 1 anything else.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "apps/ToolMain.hpp"
#include "core/Progress.hpp"
#include "io/CaseWriter.hpp"
#include "io/EclipseDeck.hpp"
#include "io/EclipseParse.hpp"
#include "io/EclipseResults.hpp"
#include "io/EclipseSiteDeck.hpp"
#include "io/GridResampler.hpp"
#include "io/OutputFile.hpp"
#include "io/OutputPath.hpp"
#include "io/PhysicalLimits.hpp"

namespace {

std::string default_unrst(const std::string& deck) {
  namespace fs = std::filesystem;
  const fs::path p(deck);
  const std::string stem = p.stem().string();
  for (const fs::path& candidate :
       {p.parent_path() / (stem + ".UNRST"), p.parent_path() / "run" / (stem + ".UNRST"),
        p.parent_path().parent_path() / "run" / (stem + ".UNRST")})
    if (fs::exists(candidate)) return candidate.string();
  return (p.parent_path() / (stem + ".UNRST")).string();
}

// The imported case must be one ufno_predict accepts: physically possible values and report
// times (a negative rate or TSTEP 5*0 are refused here, not after the case file exists).
void check_imported_case(const std::string& deck, const ufno::ReservoirCase& c) {
  for (const ufno::PhysicalLimit* l : ufno::case_scalar_limits())
    ufno::check_physical(deck, l->name, c.*l->scalar);
  for (std::size_t i = 0; i < c.permx.size(); ++i) {
    ufno::check_physical(deck, "PERMX", c.permx[i]);
    ufno::check_physical(deck, "PERMZ", c.permz[i]);
    ufno::check_physical(deck, "PORO", c.poro[i]);
  }
  for (std::size_t t = 0; t < c.times_days.size(); ++t)
    if (!(c.times_days[t] > (t ? c.times_days[t - 1] : 0.0)))
      throw ufno::InputError(deck, "TSTEP", "report steps must be positive (a step of 0 days)");
  bool perforated = false;
  for (int p : c.perforated) perforated = perforated || p;
  if (!perforated) throw ufno::InputError(deck, "COMPDAT", "no layer is perforated");
}

// Flow's SG and dP at every report step, (T, X, Y) on the case's grid, and where they came from.
struct Targets {
  std::vector<float> sg, dp;
  std::string unrst;
};

Targets read_targets(const std::string& unrst, const ufno::ImportedDeck& d,
                     const ufno::ReservoirCase& c, const ufno::GridResampler* resample) {
  Targets t;
  t.unrst = unrst;
  ufno::FlowResults r = ufno::read_flow_results(unrst, d.rc.nx, d.rc.ny, d.active);
  if (r.nt != int(c.times_days.size()))
    throw ufno::InputError(unrst, "",
                           std::to_string(r.nt) + " report steps but the deck's TSTEP gives " +
                               std::to_string(c.times_days.size()));
  const std::size_t plane = std::size_t(d.rc.nx) * d.rc.ny;
  for (int k = 0; k < r.nt; ++k) {
    std::vector<double> s(r.sg.begin() + k * plane, r.sg.begin() + (k + 1) * plane);
    std::vector<double> p(r.dp.begin() + k * plane, r.dp.begin() + (k + 1) * plane);
    if (resample) {
      s = resample->map(s, d.active, ufno::Average::Arithmetic);
      p = resample->map(p, d.active, ufno::Average::Arithmetic);
    }
    t.sg.insert(t.sg.end(), s.begin(), s.end());
    t.dp.insert(t.dp.end(), p.begin(), p.end());
  }
  return t;
}

// The targets in the layout ufno_predict writes (time, layer, radial cell).
void write_targets(const std::string& path, const ufno::ReservoirCase& c, const Targets& t) {
  ufno::OutputFile f(path);
  const std::vector<std::size_t> shape{c.times_days.size(), std::size_t(c.nx), std::size_t(c.ny)};
  f.write_field("SG", shape, 0, 0, shape, t.sg, "1", "gas saturation (time, layer, radial cell)");
  f.write_field("dP", shape, 0, 0, shape, t.dp, "bar",
                "pressure buildup PRESSURE - PRESSURE(step 0) (time, layer, radial cell)");
  f.write_times(c.times_days);
  f.set_attribute("source", t.unrst);
  f.set_attribute("producer", "ufno_import");
  f.commit();
}

// A 3-D deck with CARFIN nests: every level's channels into one site file
// (docs/nested-sites.md).
int import_site(const std::string& deck, const std::string& out, const std::string& targets,
                const std::string& like, double density) {
  if (!targets.empty() || !like.empty())
    throw ufno::InputError(deck, "CARFIN",
                           "--targets and --like are for radial decks; a 3-D site takes neither");
  // The output is checked first: a refused import says one line, its error, and no progress.
  ufno::check_output_path(out, ufno::deck_files(deck));
  // Progress a level (a bar on a terminal, else a line a level), then the file's writing.
  std::optional<ufno::Progress> progress;
  auto t0 = std::chrono::steady_clock::now();
  auto step = [&](int i, const std::string& what) {
    char done[48];
    std::snprintf(done, sizeof done, "done in %.2f s",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    progress->step(i, what, done);
    t0 = std::chrono::steady_clock::now();
  };
  const ufno::ImportedSite s =
      ufno::import_site_deck(deck, density, [&](int n, int levels, const std::string& name) {
        if (!progress) progress.emplace("ufno_import", levels + 1, ufno::Progress::on_terminal());
        step(n, name + " channels");
      });
  ufno::write_nested_site(out, s.site, s.data, deck);
  step(int(s.site.levels.size()), "site file written");
  progress->finish();
  for (const auto& n : s.notes) std::cerr << "ufno_import: " << deck << ": " << n << "\n";
  const auto& g = s.site.global().shape;
  std::printf(
      "ufno_import: %s -> %s (3-D site: GLOBAL %d x %d x %d, %zu wells with LGR1..LGR4, "
      "%zu report times)\n",
      deck.c_str(), out.c_str(), g[0], g[1], g[2], s.site.wells.size(), s.site.times_days.size());
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"ufno_import: ECLIPSE/OPM deck (and its UNRST results) -> ufno case (and targets)"};
  std::string deck, out, targets, unrst, like;
  double density = 1.872;
  app.add_option("deck", deck,
                 "the .DATA file (radial, or 3-D with CARFIN nests: docs/nested-sites.md), or a "
                 "case file (.h5) to resample with --like")
      ->required();
  app.add_option("--out", out, "case or site file to write (HDF5, docs/case-format.md)")
      ->required();
  app.add_option("--targets", targets, "also write SG and dP of the Flow results here");
  app.add_option("--unrst", unrst, "unified restart file (default: next to the deck or in run/)");
  app.add_option("--like", like, "resample onto the grid (DR, DZ) of this case file");
  app.add_option("--surface-density", density, "CO2 surface density [kg/sm3] for INJ_RATE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ufno_import: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  // A case file instead of a deck: resample it onto the --like grid (a case made for another
  // grid, such as the paper's 96 x 200, for the shipped 24 x 48 models).
  const bool case_input = std::filesystem::path(deck).extension() == ".h5";
  if (case_input && like.empty())
    throw ufno::InputError(deck, "",
                           "a case file as input needs --like (the grid to resample onto)");
  if (!case_input && ufno::deck_declares_refinements(deck))
    return import_site(deck, out, targets, like, density);
  if (case_input && !targets.empty())
    throw ufno::InputError(deck, "", "--targets needs a deck with Flow results, not a case file");
  ufno::ImportedDeck d;
  if (case_input) {
    d.rc = ufno::read_case(deck);
    for (double k : d.rc.permx) d.active.push_back(k > 0 ? 1 : 0);
  } else {
    d = ufno::import_deck(deck, density);
  }
  // Notes on how the deck was read are printed once the import succeeds: a refused import says
  // one line, its error.
  std::vector<std::string> notes = d.notes;
  ufno::ReservoirCase c = d.rc;
  std::vector<int> active = d.active;
  std::unique_ptr<ufno::GridResampler> resample;
  if (!like.empty()) {
    ufno::ReservoirCase ref = ufno::read_case(like);
    resample = std::make_unique<ufno::GridResampler>(c.dz, c.dr, ref.dz, ref.dr);
    if (!resample->identity()) {
      notes.push_back(std::string("resampled the ") + (case_input ? "case" : "deck") + " grid " +
                      resample->describe() + " of " + like);
      c = resample->map_case(c, d.active);
      active = resample->map_active(d.active);
    } else {
      resample.reset();
    }
  }
  check_imported_case(deck, c);
  // Every file the run reads: the deck and its includes (or the case), --like and the results.
  ufno::InputFiles inputs(case_input ? std::vector<std::string>{deck} : ufno::deck_files(deck));
  inputs.add({like, targets.empty() ? "" : (unrst.empty() ? default_unrst(deck) : unrst)});
  ufno::check_output_path(out, inputs);
  if (!targets.empty()) {
    ufno::check_output_path(targets, inputs, "--targets");
    if (std::filesystem::weakly_canonical(targets) == std::filesystem::weakly_canonical(out) ||
        ufno::InputFiles({out}).find(targets))
      throw ufno::InputError(targets, "--targets", "is the same file as --out");
  }
  // The targets are read before anything is written: a failure leaves neither file.
  Targets t;
  if (!targets.empty())
    t = read_targets(unrst.empty() ? default_unrst(deck) : unrst, d, c, resample.get());
  ufno::write_case(out, c, "imported from " + deck, "ufno_import");
  if (!targets.empty()) {
    try {
      write_targets(targets, c, t);
    } catch (...) {
      std::filesystem::remove(out);  // both files or neither
      throw;
    }
  }
  for (const auto& n : notes) std::cerr << "ufno_import: " << deck << ": " << n << "\n";
  std::printf("ufno_import: %s -> %s%s%s (%d x %d grid, %zu report times)\n", deck.c_str(),
              out.c_str(), targets.empty() ? "" : " and ", targets.c_str(), c.nx, c.ny,
              c.times_days.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return ufno::tool_main("ufno_import", argc, argv, run); }
