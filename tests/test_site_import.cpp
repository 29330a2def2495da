// The import of a 3-D Cartesian deck with CARFIN nests (io/EclipseSiteDeck): the nest structure,
// every channel at a few cells computed by hand (values in the comments), the GLOBAL cells'
// centres and depths against opm-common's own grid of the same deck, and each refusal of
// docs/nested-sites.md as one InputError naming the keyword or item.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <opm/input/eclipse/EclipseState/Grid/EclipseGrid.hpp>

#include "core/InputError.hpp"
#include "io/EclipseParse.hpp"
#include "io/EclipseSiteDeck.hpp"

using namespace ufno;

namespace {

// Two wells in a 10 x 10 x 2 grid of 500 x 500 x 25 m cells, tops at 2000 m, PERMX 50 mD in
// layer 1 and 200 mD in layer 2, 200 bar datum pressure, 60 degC. Each well's nest: LGR1 a
// 2 x 2 x 2 box refined 2 x 2 x 2 (4 x 4 x 4, widened by 1 for the coarse window), LGR2 LGR1's
// middle refined 2 x 2 x 2 (4 x 4 x 8), LGR3 and LGR4 refined 2 x 2 x 1 towards the well.
const std::string kDeck = R"(RUNSPEC
DIMENS
 10 10 2 /
METRIC
OIL
GAS
DISGAS
CO2STORE
LGR
 8 /
EQLDIMS
/
TABDIMS
/
WELLDIMS
 2 2 1 2 /
START
 1 'JAN' 2030 /
GRID
DXV
 10*500 /
DYV
 10*500 /
DZV
 2*25 /
TOPS
 100*2000 /
PERMX
 100*50 100*200 /
PORO
 200*0.2 /
CARFIN
 'A1' 2 3 2 3 1 2 4 4 4 1 /
ENDFIN
CARFIN
 'A2' 2 3 2 3 1 4 4 4 8 1 'A1' /
ENDFIN
CARFIN
 'A3' 3 4 3 4 1 8 4 4 8 1 'A2' /
ENDFIN
CARFIN
 'A4' 3 4 3 4 1 8 4 4 8 1 'A3' /
ENDFIN
CARFIN
 'B1' 7 8 7 8 1 2 4 4 4 1 /
ENDFIN
CARFIN
 'B2' 2 3 2 3 1 4 4 4 8 1 'B1' /
ENDFIN
CARFIN
 'B3' 3 4 3 4 1 8 4 4 8 1 'B2' /
ENDFIN
CARFIN
 'B4' 3 4 3 4 1 8 4 4 8 1 'B3' /
ENDFIN
PROPS
SOLUTION
EQUIL
 2000 200 3000 0 1000 0 /
RTEMP
 60 /
SCHEDULE
WELSPECS
 'INJ1' 'G' 3 3 1* 'GAS' /
 'INJ2' 'G' 8 8 1* 'GAS' /
/
COMPDAT
 'INJ1' 3 3 2 2 'OPEN' /
 'INJ2' 8 8 1 2 'OPEN' /
/
WCONINJE
 'INJ1' 'GAS' 'OPEN' 'RATE' 1e6 1* 700 /
 'INJ2' 'GAS' 'OPEN' 'RATE' 5e5 1* 700 /
/
TSTEP
 12 15 19 24 30 38 48 60 76 95 119 149 187 235 294 369 463 580 727 911 1142 1431 1793 2247 /
)";

// The decks of this process, in a directory of its own that goes when the process ends.
struct DeckDirectory {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("ufno_site_import_" + std::to_string(getpid()));
  DeckDirectory() { std::filesystem::create_directories(path); }
  ~DeckDirectory() { std::filesystem::remove_all(path); }
};

std::string write_deck(const std::string& text) {
  static DeckDirectory dir;
  static int n = 0;
  const std::string p = (dir.path / ("site_" + std::to_string(n++) + ".DATA")).string();
  std::ofstream(p) << text;
  return p;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// Channel c of cell (i, j, k) at report time t of a level's input (1, nx, ny, nz, T, 8).
float channel(const ImportedSite& s, std::size_t level, int i, int j, int k, int t, int c) {
  const auto& sh = s.site.levels[level].shape;
  const std::size_t T = s.site.times_days.size();
  return s.data[level].input[((((std::size_t(i) * sh[1] + j) * sh[2] + k) * T + t) * 8) + c];
}

}  // namespace

TEST_CASE("a two-well deck imports into GLOBAL and four levels per well") {
  const ImportedSite s = import_site_deck(write_deck(kDeck));
  REQUIRE(s.site.levels.size() == 9);
  REQUIRE(s.site.times_days.size() == 24);
  CHECK(s.site.times_days.back() == 11064);
  CHECK(s.site.wells[1].name == "INJ2");
  CHECK(s.site.wells[1].k1 == 1);
  CHECK(s.site.wells[1].k2 == 2);
  const NestedLevel& lgr1 = s.site.level("INJ1", 1);
  CHECK(lgr1.shape == std::array<int, 3>{4, 4, 4});
  CHECK(lgr1.refinement == std::array<int, 3>{2, 2, 2});
  CHECK(lgr1.coarse_window == std::array<int, 6>{0, 4, 0, 4, 0, 2});  // box 2..3 widened by 1
  CHECK(lgr1.coarse_repeat == std::array<int, 3>{1, 1, 2});
  CHECK(s.site.level("INJ2", 2).coarse_window == std::array<int, 6>{0, 4, 0, 4, 0, 4});
  CHECK(s.site.level("INJ2", 2).coarse_repeat == std::array<int, 3>{1, 1, 2});
  CHECK(s.site.level("INJ2", 4).coarse_repeat == std::array<int, 3>{1, 1, 1});
  CHECK(s.site.level("INJ2", 4).carfin == "B4");
}

TEST_CASE("channels at cells computed by hand") {
  const ImportedSite s = import_site_deck(write_deck(kDeck));
  // GLOBAL cell (3, 3, 2) (1-based), INJ1's perforation: centre x = y = 1250 m, top 2025 m.
  CHECK(channel(s, 0, 2, 2, 1, 0, 0) == Approx(1250.0 / 160000));
  CHECK(channel(s, 0, 2, 2, 1, 0, 1) == Approx(1250.0 / 160000));
  CHECK(channel(s, 0, 2, 2, 1, 0, 2) == Approx(25.0 / 2000));
  CHECK(channel(s, 0, 2, 2, 1, 5, 3) == Approx(138.0 / 10950));  // t_6 = 12 + 15 + ... + 38
  // The injection map holds the surface rate / 2942777.68785957: 1e6 sm3/day -> 0.339815, on
  // every layer of the well's column at GLOBAL, perforated or not (INJ1 is perforated in layer 2
  // only); INJ2's column (8, 8) holds 5e5 sm3/day -> 0.1699075; other columns 0.
  CHECK(channel(s, 0, 2, 2, 1, 0, 4) == Approx(0.339815).epsilon(1e-6));
  CHECK(channel(s, 0, 2, 2, 0, 23, 4) == Approx(0.339815).epsilon(1e-6));
  CHECK(channel(s, 0, 7, 7, 0, 0, 4) == Approx(0.1699075).epsilon(1e-6));
  CHECK(channel(s, 0, 2, 3, 1, 0, 4) == 0);
  CHECK(channel(s, 0, 7, 2, 1, 0, 4) == 0);
  CHECK(s.site.wells[0].surface_rate == 1e6);
  CHECK(s.site.wells[0].rate_mt_per_year == Approx(0.683748).epsilon(1e-5));  // at 1.872 kg/sm3
  // Water at 60 degC, 200 bar: 991.70 kg/m3 (IAPWS-97). z_datum = 198.98675 / 9.8 x 100 =
  // 2030.4770 m; at the centre, 2037.5 m: 200 + 7.0230 x 9.8 x 991.70 / 1e5 = 200.68256 bar.
  CHECK(channel(s, 0, 2, 2, 1, 0, 5) == Approx(200.68256 / 172).epsilon(2e-6));
  CHECK(channel(s, 0, 2, 2, 1, 0, 6) == Approx(60.0 / 70));
  CHECK(channel(s, 0, 2, 2, 1, 0, 7) == Approx(2.0));  // 200 mD / 100
  CHECK(channel(s, 0, 2, 2, 0, 0, 7) == Approx(0.5));
  // INJ1's LGR1 cell (1, 1, 3): the first half of GLOBAL cell 2 in x and y, the upper half of
  // layer 2: centre x = 500 + 125 = 625 m, top 2025 m, centre depth 2031.25 m.
  CHECK(channel(s, 1, 0, 0, 2, 0, 0) == Approx(625.0 / 160000));
  CHECK(channel(s, 1, 0, 0, 2, 0, 2) == Approx(25.0 / 2000));
  CHECK(s.data[1].cell_depth[(0 * 4 + 0) * 4 + 2] == Approx(2031.25));
  CHECK(channel(s, 1, 0, 0, 2, 0, 7) == Approx(2.0));
  // INJ1's point is the middle of GLOBAL column (3, 3): x = y = 1250 m. LGR1's cell centres in x
  // are 625, 875, 1125, 1375 m: 1125 and 1375 are equally near, so the lower, index 2, holds the
  // map, on all four layers, and no other column does.
  for (int k = 0; k < 4; ++k) CHECK(channel(s, 1, 2, 2, k, 0, 4) == Approx(0.339815).epsilon(1e-6));
  CHECK(channel(s, 1, 3, 3, 3, 0, 4) == 0);
  CHECK(channel(s, 1, 2, 3, 3, 0, 4) == 0);
  // LGR2 (LGR1's cells 2..3 halved): centres 812.5, 937.5, 1062.5, 1187.5 m; the nearest is
  // index 3, on all eight layers (those of the unperforated GLOBAL layer 1 too).
  for (int k = 0; k < 8; ++k) CHECK(channel(s, 2, 3, 3, k, 0, 4) == Approx(0.339815).epsilon(1e-6));
  CHECK(channel(s, 2, 2, 3, 0, 0, 4) == 0);
  // LGR3: centres 1031.25, 1093.75, 1156.25, 1218.75 m; index 3 again, every layer.
  CHECK(channel(s, 3, 3, 3, 0, 0, 4) == Approx(0.339815).epsilon(1e-6));
  CHECK(channel(s, 3, 3, 2, 0, 0, 4) == 0);
  // INJ1's LGR4 cells are 1/16 of a GLOBAL cell wide; cell 4 (0-based 3) in x is
  // [1000 + 7/16 x 500, 1000 + 8/16 x 500): centre 1234.375 m, the nearest to 1250 m, so the
  // column x = y = 3 injects, on LGR4 only on the layers of the perforated GLOBAL layer 2: 4..7.
  CHECK(channel(s, 4, 3, 3, 4, 0, 0) == Approx(1234.375 / 160000));
  for (int k = 0; k < 8; ++k) CHECK((channel(s, 4, 3, 3, k, 0, 4) > 0) == (k >= 4));
  CHECK(channel(s, 4, 2, 3, 5, 0, 4) == 0);
  // LGR4 depth of layer k: 8 layers over 50 m, tops 2000 + 6.25 k.
  CHECK(channel(s, 4, 0, 0, 5, 0, 2) == Approx(31.25 / 2000));
}

TEST_CASE("GLOBAL cell centres and depths agree with opm-common's grid of the same deck") {
  const std::string path = write_deck(kDeck);
  const ImportedSite s = import_site_deck(path);
  const auto deck = parse_deck(path);
  const Opm::EclipseGrid grid(*deck);
  for (const auto& [i, j, k] : {std::array<int, 3>{0, 0, 0}, {2, 2, 1}, {9, 4, 1}, {5, 9, 0}}) {
    const auto c = grid.getCellCenter(i, j, k);
    const std::size_t cell = (std::size_t(i) * 10 + j) * 2 + k;
    CHECK(s.data[0].cell_x[cell] == Approx(c[0]));
    CHECK(s.data[0].cell_y[cell] == Approx(c[1]));
    CHECK(s.data[0].cell_depth[cell] == Approx(grid.getCellDepth(i, j, k)));
  }
}

TEST_CASE("decks outside the supported subset are refused naming the keyword or item") {
  const std::vector<std::array<std::string, 3>> cases{
      {"METRIC", "FIELD", "FIELD"},
      {"DXV\n 10*500 /", "DX\n 199*500 600 /", "DX: varies across the other axes"},
      {"'A1' 2 3 2 3 1 2 4 4 4", "'A1' 2 11 2 3 1 2 4 4 4", "CARFIN A1: I2"},
      {"'A1' 2 3 2 3 1 2 4 4 4", "'A1' 2 3 2 3 1 2 5 4 4", "CARFIN A1: NX"},
      {"'A1' 2 3 2 3 1 2 4 4 4", "'A1' 1 3 2 3 1 2 6 4 4", "CARFIN A1: NX"},
      {"'A2' 2 3 2 3 1 4 4 4 8", "'A2' 1 4 1 4 1 4 8 8 8", "CARFIN A2"},
      {"CARFIN\n 'B4' 3 4 3 4 1 8 4 4 8 1 'B3' /\nENDFIN\n", "",
       "well INJ2 has no refinement under B3"},
      {"'B1' 7 8 7 8", "'B1' 2 3 2 3", "nest branches or is shared"},
      {"CARFIN\n 'A1'", "CARFIN\n 'X' 9 10 9 10 1 2 2 2 2 1 /\nENDFIN\nCARFIN\n 'A1'",
       "CARFIN X: belongs to no well's nest"},
      {"ENDFIN\nCARFIN\n 'A2'", "PERMX\n 64*1 /\nENDFIN\nCARFIN\n 'A2'", "PERMX: inside CARFIN A1"},
      {" 'INJ2' 'GAS' 'OPEN' 'RATE' 5e5 1* 700 /\n/\n",
       " 'INJ2' 'GAS' 'OPEN' 'RATE' 5e5 1* 700 /\n/\nTSTEP\n 1 /\nWCONINJE\n 'INJ2' 'GAS' 'OPEN' "
       "'RATE' 6e5 1* 700 /\n/\n",
       "INJ2's rate changes"},
      {"'RATE' 5e5", "'RATE' 0", "WCONINJE INJ2: 0 Mt/yr is physically impossible"},
      {"TSTEP\n 12 ", "TSTEP\n ", "23 report times"},
      {"RTEMP\n 60 /", "RTEMP\n 380 /\n", "RTEMP: water is not liquid"},
      {"WELSPECS\n 'INJ1' 'G' 3 3", "WELSPECS\n 'INJ1' 'G' 11 3",
       "WELSPECS: well INJ1's column lies outside"},
  };
  for (const auto& [from, to, what] : cases) {
    INFO(to);
    const std::string path = write_deck(replaced(kDeck, from, to));
    try {
      import_site_deck(path);
      FAIL("imported: " << what);
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::StartsWith(path + ": ") && Catch::Contains(what));
    }
  }
}

TEST_CASE("a CARFIN item and two nests that share GLOBAL cells are refused by name") {
  // I1 = 0 is the item at fault (I2 is valid).
  const std::string zero = write_deck(replaced(kDeck, "'A1' 2 3 2 3", "'A1' 0 3 2 3"));
  CHECK_THROWS_WITH(import_site_deck(zero), Catch::Contains("CARFIN A1: I1"));
  // INJ1 at (6, 6) with A1 over I 5..6, J 5..6; INJ2 at (7, 5) with B1 over I 6..7, J 4..5: each
  // nest holds its own well only, and both refine GLOBAL cell (6, 5).
  std::string deck = kDeck;
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"'A1' 2 3 2 3", "'A1' 5 6 5 6"},
                                                        {"'B1' 7 8 7 8", "'B1' 6 7 4 5"},
                                                        {"'INJ1' 'G' 3 3", "'INJ1' 'G' 6 6"},
                                                        {"'INJ2' 'G' 8 8", "'INJ2' 'G' 7 5"},
                                                        {"'INJ1' 3 3", "'INJ1' 6 6"},
                                                        {"'INJ2' 8 8", "'INJ2' 7 5"}})
    deck = replaced(deck, from, to);
  const std::string path = write_deck(deck);
  CHECK_THROWS_WITH(import_site_deck(path),
                    Catch::StartsWith(path + ": CARFIN B1: shares GLOBAL cells with CARFIN A1"));
  // INJ2 and its nest one row down: disjoint, imported.
  std::string apart = replaced(deck, "'B1' 6 7 4 5", "'B1' 6 7 3 4");
  apart = replaced(replaced(apart, "'INJ2' 'G' 7 5", "'INJ2' 'G' 7 4"), "'INJ2' 7 5", "'INJ2' 7 4");
  CHECK_NOTHROW(import_site_deck(write_deck(apart)));
}

TEST_CASE("a GLOBAL grid beyond a level's cell bound is refused before its channels exist") {
  std::string big = replaced(kDeck, " 10 10 2 /", " 2048 2048 2 /");
  big = replaced(big, "DXV\n 10*500 /", "DXV\n 2048*50 /");
  big = replaced(big, "DYV\n 10*500 /", "DYV\n 2048*50 /");
  big = replaced(big, " 100*2000 /", " 4194304*2000 /");
  big = replaced(big, " 100*50 100*200 /", " 8388608*50 /");
  CHECK_THROWS_WITH(import_site_deck(write_deck(big)), Catch::Contains("at most 4194304 cells"));
}

TEST_CASE("a deck without wells or without refinements is refused") {
  std::string no_wells = kDeck.substr(0, kDeck.find("WELSPECS")) + "TSTEP\n 24*10 /\n";
  CHECK_THROWS_WITH(import_site_deck(write_deck(no_wells)), Catch::Contains("no wells"));
  const std::string no_carfin =
      kDeck.substr(0, kDeck.find("CARFIN")) + kDeck.substr(kDeck.find("PROPS"));
  CHECK_FALSE(deck_declares_refinements(write_deck(no_carfin)));
  CHECK_THROWS_WITH(import_site_deck(write_deck(no_carfin)),
                    Catch::Contains("CARFIN: the deck declares no local grid refinement"));
  CHECK(deck_declares_refinements(write_deck(kDeck)));
}
