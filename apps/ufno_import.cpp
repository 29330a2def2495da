// ufno_import: turns an ECLIPSE / OPM Flow deck (radial r-z, one CO2 injector) into the project's
// case file, and optionally its Flow results (UNRST) into a target file with SG and dP at every
// report step. With --like, the case is resampled onto the grid of a reference case file (the
// model's grid) and the tool says so. Exit codes: 0, 2 bad input (one line naming file and
// keyword), 1 anything else.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "io/CaseWriter.hpp"
#include "io/EclipseDeck.hpp"
#include "io/EclipseResults.hpp"
#include "io/GridResampler.hpp"
#include "io/OutputFile.hpp"

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

int run(int argc, char** argv) {
  CLI::App app{"ufno_import: ECLIPSE/OPM deck (and its UNRST results) -> ufno case (and targets)"};
  std::string deck, out, targets, unrst, like;
  double density = 1.872;
  app.add_option("deck", deck, "the .DATA file, or a case file (.h5) to resample with --like")
      ->required();
  app.add_option("--out", out, "case file to write (HDF5, docs/case-format.md)")->required();
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
  if (case_input && !targets.empty())
    throw ufno::InputError(deck, "", "--targets needs a deck with Flow results, not a case file");
  ufno::ImportedDeck d;
  if (case_input) {
    d.rc = ufno::read_case(deck);
    for (double k : d.rc.permx) d.active.push_back(k > 0 ? 1 : 0);
  } else {
    d = ufno::import_deck(deck, density);
  }
  for (const auto& n : d.notes) std::cerr << "ufno_import: " << deck << ": " << n << "\n";
  ufno::ReservoirCase c = d.rc;
  std::vector<int> active = d.active;
  std::unique_ptr<ufno::GridResampler> resample;
  if (!like.empty()) {
    ufno::ReservoirCase ref = ufno::read_case(like);
    resample = std::make_unique<ufno::GridResampler>(c.dz, c.dr, ref.dz, ref.dr);
    if (!resample->identity()) {
      std::cerr << "ufno_import: " << deck << ": resampled the " << (case_input ? "case" : "deck")
                << " grid " << resample->describe() << " of " << like << "\n";
      c = resample->map_case(c, d.active);
      active = resample->map_active(d.active);
    } else {
      resample.reset();
    }
  }
  ufno::write_case(out, c, "imported from " + deck);
  if (!targets.empty()) {
    const std::string path = unrst.empty() ? default_unrst(deck) : unrst;
    ufno::FlowResults r = ufno::read_flow_results(path, d.rc.nx, d.rc.ny, d.active);
    if (r.nt != int(c.times_days.size()))
      throw ufno::InputError(path, "",
                             std::to_string(r.nt) + " report steps but the deck's TSTEP gives " +
                                 std::to_string(c.times_days.size()));
    const std::size_t plane = std::size_t(d.rc.nx) * d.rc.ny;
    std::vector<float> sg, dp;
    for (int t = 0; t < r.nt; ++t) {
      std::vector<double> s(r.sg.begin() + t * plane, r.sg.begin() + (t + 1) * plane);
      std::vector<double> p(r.dp.begin() + t * plane, r.dp.begin() + (t + 1) * plane);
      if (resample) {
        s = resample->map(s, d.active, ufno::Average::Arithmetic);
        p = resample->map(p, d.active, ufno::Average::Arithmetic);
      }
      sg.insert(sg.end(), s.begin(), s.end());
      dp.insert(dp.end(), p.begin(), p.end());
    }
    ufno::OutputFile f(targets);
    const std::vector<std::size_t> shape{std::size_t(r.nt), std::size_t(c.nx), std::size_t(c.ny)};
    f.write_field("SG", shape, 0, 0, shape, sg, "1", "gas saturation (time, layer, radial cell)");
    f.write_field("dP", shape, 0, 0, shape, dp, "bar",
                  "pressure buildup PRESSURE - PRESSURE(step 0) (time, layer, radial cell)");
    f.write_times(c.times_days);
    f.set_attribute("source", path);
    f.set_attribute("producer", "ufno_import");
    f.commit();
  }
  std::printf("ufno_import: %s -> %s%s%s (%d x %d grid, %zu report times)\n", deck.c_str(),
              out.c_str(), targets.empty() ? "" : " and ", targets.c_str(), c.nx, c.ny,
              c.times_days.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ufno::InputError& e) {
    std::cerr << "ufno_import: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ufno_import: internal error: " << e.what() << "\n";
    return 1;
  }
}
