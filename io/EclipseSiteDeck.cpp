#include "io/EclipseSiteDeck.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <opm/input/eclipse/Deck/Deck.hpp>
#include <opm/input/eclipse/Deck/UDAValue.hpp>
#include <opm/material/components/H2O.hpp>

#include "core/InputError.hpp"
#include "io/EclipseParse.hpp"
#include "io/PhysicalLimits.hpp"
#include "io/SiteGeometry.hpp"

namespace ufno {

namespace {

// A deck value checked against the limit of the case quantity it becomes (`limit`, such as
// INJ_RATE), named by the deck's own keyword (WCONINJE INJ2), which is what a user can find.
void check_deck_value(const std::string& path, const char* limit, double v,
                      const std::string& keyword) {
  const std::string why = physical_violation(limit, v);
  if (!why.empty()) throw InputError(path, keyword, why);
}

constexpr int kReportTimes = 24;  // the reference's nests: 24 report times
const std::string kGlobal = "GLOBAL";

struct Carfin {
  std::string name, parent;
  std::array<int, 6> box{};    // I1, I2, J1, J2, K1, K2
  std::array<int, 3> shape{};  // NX, NY, NZ
};

// Keywords that would change the grid or its properties in ways this import does not read.
void refuse_unread_keywords(const Opm::Deck& deck, const std::string& path) {
  for (const char* units : {"FIELD", "LAB", "PVT-M"})
    if (deck.hasKeyword(units))
      throw InputError(path, units, "unit system not supported; write the deck in METRIC");
  for (const char* grid : {"RADIAL", "COORD", "ZCORN", "SPECGRID"})
    if (deck.hasKeyword(grid))
      throw InputError(path, grid, "only Cartesian grids (DX/DY/DZ or DXV/DYV/DZV, TOPS) are read");
  for (const char* op : {"EQUALS", "MULTIPLY", "COPY", "ADD", "BOX", "NXFIN", "NYFIN", "NZFIN"})
    if (deck.hasKeyword(op))
      throw InputError(path, op,
                       "not read by the site import: give DX..DZ, TOPS and PERMX in full "
                       "and refine each CARFIN evenly");
}

std::vector<double> keyword_data(const Opm::Deck& deck, const std::string& path,
                                 const std::string& kw, std::size_t size) {
  const auto v = deck[kw].back().getRecord(0).getItem(0).getData<double>();
  if (v.size() < size)
    throw InputError(
        path, kw,
        std::to_string(v.size()) + " values where " + std::to_string(size) + " are needed");
  return v;
}

// The cell sizes along one axis (DXV, or DX constant across the other axes: a tensor grid).
std::vector<double> axis_sizes(const Opm::Deck& deck, const std::string& path, int axis,
                               const std::array<int, 3>& n) {
  const std::string cell = std::string("D") + "XYZ"[axis], vec = cell + "V";
  std::vector<double> d(n[axis], -1);
  if (deck.hasKeyword(vec)) {
    const auto v = keyword_data(deck, path, vec, n[axis]);
    std::copy(v.begin(), v.begin() + n[axis], d.begin());
  } else {
    if (!deck.hasKeyword(cell))
      throw InputError(path, cell, "keyword is missing (give " + cell + " or " + vec + ")");
    const auto v = keyword_data(deck, path, cell, std::size_t(n[0]) * n[1] * n[2]);
    const std::array<std::size_t, 3> stride{1, std::size_t(n[0]), std::size_t(n[0]) * n[1]};
    for (std::size_t c = 0; c < std::size_t(n[0]) * n[1] * n[2]; ++c) {
      double& di = d[(c / stride[axis]) % n[axis]];
      if (di < 0) di = v[c];
      if (std::abs(v[c] - di) > 1e-9 * std::abs(di))
        throw InputError(path, cell,
                         "varies across the other axes at cell " + std::to_string(c + 1) +
                             ": not a Cartesian tensor grid");
    }
  }
  for (double x : d)
    if (!(x > 0 && x <= 1e5))
      throw InputError(path, cell, "cell sizes must be positive and at most 100 km");
  return d;
}

SiteGrid read_site_grid(const Opm::Deck& deck, const std::string& path) {
  const auto& dims = required_keyword(deck, path, "DIMENS", "grid size").getRecord(0);
  SiteGrid g;
  g.nx = dims.getItem("NX").get<int>(0), g.ny = dims.getItem("NY").get<int>(0),
  g.nz = dims.getItem("NZ").get<int>(0);
  if (g.nx < 1 || g.ny < 1 || g.nz < 1 || double(g.nx) * g.ny * g.nz > double(1 << 24))
    throw InputError(path, "DIMENS", "the grid must have 1 to 16.7 million cells");
  const std::array<int, 3> n{g.nx, g.ny, g.nz};
  g.dx = axis_sizes(deck, path, 0, n), g.dy = axis_sizes(deck, path, 1, n);
  g.dz = axis_sizes(deck, path, 2, n);
  required_keyword(deck, path, "TOPS", "depth of the top layer");
  const auto tops = keyword_data(deck, path, "TOPS", std::size_t(g.nx) * g.ny);
  g.tops.assign(tops.begin(), tops.begin() + std::size_t(g.nx) * g.ny);
  for (double t : g.tops)
    if (!(std::abs(t) <= 2e4)) throw InputError(path, "TOPS", "depths must be within 20 km");
  required_keyword(deck, path, "PERMX", "permeability");
  g.permx_md = keyword_data(deck, path, "PERMX", std::size_t(g.nx) * g.ny * g.nz);
  g.permx_md.resize(std::size_t(g.nx) * g.ny * g.nz);
  for (double k : g.permx_md) check_physical(path, "PERMX", k);
  return g;
}

Carfin read_carfin(const Opm::DeckKeyword& kw) {
  const auto& r = kw.getRecord(0);
  Carfin c;
  c.name = r.getItem("NAME").get<std::string>(0);
  c.parent =
      r.getItem("PARENT").defaultApplied(0) ? kGlobal : r.getItem("PARENT").get<std::string>(0);
  const char* box[] = {"I1", "I2", "J1", "J2", "K1", "K2"};
  for (int i = 0; i < 6; ++i) c.box[i] = r.getItem(box[i]).get<int>(0);
  const char* shape[] = {"NX", "NY", "NZ"};
  for (int i = 0; i < 3; ++i) c.shape[i] = r.getItem(shape[i]).get<int>(0);
  return c;
}

// The CARFIN records in deck order; nothing may stand between CARFIN and ENDFIN (refined cells
// take their parent's properties).
std::vector<Carfin> read_carfins(const Opm::Deck& deck, const std::string& path) {
  std::vector<Carfin> out;
  bool inside = false;
  for (std::size_t n = 0; n < deck.size(); ++n) {
    const auto& kw = deck[n];
    if (kw.name() == "CARFIN") {
      if (inside) throw InputError(path, "CARFIN", "CARFIN inside another CARFIN (missing ENDFIN)");
      out.push_back(read_carfin(kw));
      inside = true;
    } else if (kw.name() == "ENDFIN") {
      inside = false;
    } else if (inside) {
      throw InputError(path, kw.name(),
                       "inside CARFIN " + out.back().name +
                           ": the site import takes refined cells' properties from their parent "
                           "cells; end the CARFIN with ENDFIN before other keywords");
    }
  }
  if (inside) throw InputError(path, "ENDFIN", "CARFIN " + out.back().name + " has no ENDFIN");
  if (out.empty()) throw InputError(path, "CARFIN", "the deck declares no local grid refinement");
  for (std::size_t a = 0; a < out.size(); ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (out[a].name == out[b].name)
        throw InputError(path, "CARFIN", "the name " + out[a].name + " is used twice");
  return out;
}

// Temperature (RTEMP), datum pressure (EQUIL) and the IAPWS-97 water density between them.
SiteConditions read_conditions(const Opm::Deck& deck, const std::string& path) {
  SiteConditions c;
  c.temperature_c = reservoir_temperature_c(deck, path);
  c.datum_pressure_bar = datum_pressure_bar(deck, path);
  check_deck_value(path, "TEMP", c.temperature_c, "RTEMP");
  check_deck_value(path, "PRESSURE", c.datum_pressure_bar, "EQUIL");
  try {
    c.water_density =
        Opm::H2O<double>::liquidDensity(c.temperature_c + 273.15, c.datum_pressure_bar * 1e5);
  } catch (const std::exception&) {
    throw InputError(
        path, "RTEMP",
        "water is not liquid at RTEMP and the EQUIL datum pressure (IAPWS-97 region 1)");
  }
  return c;
}

std::vector<double> read_times(const Opm::Deck& deck, const std::string& path) {
  if (deck.hasKeyword("DATES"))
    throw InputError(path, "DATES", "give the report times with TSTEP (days)");
  required_keyword(deck, path, "TSTEP", "report times");
  std::vector<double> t;
  double sum = 0;
  for (const auto& kw : deck["TSTEP"])
    for (double d : kw.getRecord(0).getItem(0).getData<double>()) {
      if (!(d > 0 && d <= 1e5)) throw InputError(path, "TSTEP", "steps must be 0 to 1e5 days");
      t.push_back(sum += d);
    }
  if (t.size() != kReportTimes)
    throw InputError(path, "TSTEP",
                     std::to_string(t.size()) + " report times; the nested models take " +
                         std::to_string(kReportTimes));
  return t;
}

NestedWell& well_named(std::vector<NestedWell>& wells, const std::string& path,
                       const std::string& kw, const std::string& name) {
  for (auto& w : wells)
    if (w.name == name) return w;
  throw InputError(path, kw, "well '" + name + "' is not declared in WELSPECS");
}

void read_completions(const Opm::Deck& deck, const std::string& path, const SiteGrid& g,
                      std::vector<NestedWell>& wells) {
  for (const auto& kw : deck["COMPDAT"])
    for (const auto& r : kw) {
      NestedWell& w = well_named(wells, path, "COMPDAT", r.getItem("WELL").get<std::string>(0));
      const int i = r.getItem("I").get<int>(0), j = r.getItem("J").get<int>(0);
      if ((i != 0 && i != w.i) || (j != 0 && j != w.j))
        throw InputError(path, "COMPDAT",
                         "well " + w.name +
                             " is completed outside its WELSPECS column (only "
                             "vertical wells)");
      const int k1 = r.getItem("K1").get<int>(0), k2 = r.getItem("K2").get<int>(0);
      if (k1 < 1 || k2 < k1 || k2 > g.nz)
        throw InputError(path, "COMPDAT",
                         "well " + w.name + ": K1..K2 outside 1.." + std::to_string(g.nz));
      w.k1 = w.k1 ? std::min(w.k1, k1) : k1;
      w.k2 = std::max(w.k2, k2);
    }
}

void read_rates(const Opm::Deck& deck, const std::string& path, double surface_density,
                std::vector<NestedWell>& wells) {
  std::map<std::string, double> rate;
  for (const auto& kw : deck["WCONINJE"])
    for (const auto& r : kw) {
      NestedWell& w = well_named(wells, path, "WCONINJE", r.getItem("WELL").get<std::string>(0));
      if (r.getItem("TYPE").get<std::string>(0) != "GAS")
        throw InputError(path, "WCONINJE", "well " + w.name + " must inject GAS (CO2)");
      const auto q = r.getItem("RATE").get<Opm::UDAValue>(0);
      if (!q.is<double>())
        throw InputError(path, "WCONINJE", "well " + w.name + ": RATE must be a number");
      const double mt = q.get<double>() * surface_density * 365.25 / 1e9;
      if (rate.count(w.name) && rate[w.name] != mt)
        throw InputError(path, "WCONINJE",
                         "well " + w.name +
                             "'s rate changes; the nested "
                             "models take one constant rate");
      rate[w.name] = w.rate_mt_per_year = mt;
      w.surface_rate = q.get<double>();
      check_deck_value(path, "INJ_RATE", mt, "WCONINJE " + w.name);
    }
  for (const auto& w : wells)
    if (!rate.count(w.name)) throw InputError(path, "WCONINJE", "well " + w.name + " has no rate");
}

std::vector<NestedWell> read_wells(const Opm::Deck& deck, const std::string& path,
                                   const SiteGrid& g, double surface_density) {
  std::vector<NestedWell> wells;
  for (const auto& kw : deck["WELSPECS"])
    for (const auto& r : kw) {
      NestedWell w;
      w.name = r.getItem("WELL").get<std::string>(0);
      w.i = r.getItem("HEAD_I").get<int>(0), w.j = r.getItem("HEAD_J").get<int>(0);
      if (w.i < 1 || w.i > g.nx || w.j < 1 || w.j > g.ny)
        throw InputError(path, "WELSPECS", "well " + w.name + "'s column lies outside the grid");
      for (const auto& o : wells)
        if (o.name == w.name) throw InputError(path, "WELSPECS", "well " + w.name + " twice");
      wells.push_back(w);
    }
  if (wells.empty()) throw InputError(path, "WELSPECS", "the deck has no wells");
  read_completions(deck, path, g, wells);
  for (const auto& w : wells)
    if (!w.k1) throw InputError(path, "COMPDAT", "well " + w.name + " has no completion");
  read_rates(deck, path, surface_density, wells);
  return wells;
}

// The level a CARFIN makes, its box checked against its parent's shape and evenly refined.
NestedLevel carfin_level(const std::string& path, const Carfin& c, const std::array<int, 3>& parent,
                         const std::string& well, int lgr) {
  NestedLevel l;
  l.name = "LGR" + std::to_string(lgr), l.well = well, l.carfin = c.name;
  l.shape = c.shape, l.box = c.box;
  const char* lo[] = {"I1", "J1", "K1"};
  const char* hi[] = {"I2", "J2", "K2"};
  const char* n[] = {"NX", "NY", "NZ"};
  for (int a = 0; a < 3; ++a) {
    const int b = c.box[2 * a + 1] - c.box[2 * a] + 1;
    // The item named is the one at fault: a lower bound below 1 or above the upper one, else
    // the upper bound beyond the parent.
    const bool low_at_fault = c.box[2 * a] < 1 || b < 1;
    if (low_at_fault || c.box[2 * a + 1] > parent[a])
      throw InputError(path,
                       std::string("CARFIN ") + c.name + ": " + (low_at_fault ? lo[a] : hi[a]),
                       (b < 1 ? std::string("is above ") + hi[a] + "; the box is empty"
                              : "the refinement lies outside its parent " + c.parent + " (1.." +
                                    std::to_string(parent[a]) + ")"));
    if (c.shape[a] < 1 || c.shape[a] % b)
      throw InputError(
          path, std::string("CARFIN ") + c.name + ": " + n[a],
          "must be a multiple of the box's " + std::to_string(b) + " cells (even refinement)");
    l.refinement[a] = c.shape[a] / b;
  }
  return l;
}

// The coarse channel's window and repeat (docs/nested-sites.md): LGR1's box widened to its
// own horizontal size, every layer repeated; deeper levels take their whole parent.
void set_coarse_window(const std::string& path, NestedLevel& l, const std::array<int, 3>& parent) {
  const std::string item = "CARFIN " + l.carfin;
  if (l.lgr() == 1) {
    for (int a = 0; a < 2; ++a) {
      const int b = l.box[2 * a + 1] - l.box[2 * a] + 1, widen = (l.shape[a] - b) / 2;
      if ((l.shape[a] - b) % 2)
        throw InputError(path, item + ": " + (a ? "NY" : "NX"),
                         "the box widened equally on both sides cannot give the level's size");
      l.coarse_window[2 * a] = l.box[2 * a] - 1 - widen;
      l.coarse_window[2 * a + 1] = l.box[2 * a + 1] + widen;
    }
    l.coarse_window[4] = l.box[4] - 1, l.coarse_window[5] = l.box[5];
    l.coarse_repeat = {1, 1, l.refinement[2]};
    return;
  }
  if (l.shape[0] != parent[0] || l.shape[1] != parent[1] || l.shape[2] % parent[2] ||
      (l.lgr() > 2 && l.shape[2] != parent[2]))
    throw InputError(path, item,
                     "LGR" + std::to_string(l.lgr()) + " must have its parent's NX and NY and " +
                         (l.lgr() == 2 ? "a multiple of its NZ" : "its NZ") +
                         " (the reference's nest structure)");
  l.coarse_window = {0, parent[0], 0, parent[1], 0, parent[2]};
  l.coarse_repeat = {1, 1, l.shape[2] / parent[2]};
}

const Carfin& only_child(const std::string& path, const std::vector<Carfin>& carfins,
                         const std::string& parent, const NestedWell& w, std::vector<int>& used) {
  const Carfin* found = nullptr;
  for (std::size_t n = 0; n < carfins.size(); ++n) {
    const Carfin& c = carfins[n];
    const bool holds = parent != kGlobal ||
                       (c.box[0] <= w.i && w.i <= c.box[1] && c.box[2] <= w.j && w.j <= c.box[3]);
    if (c.parent != parent || !holds) continue;
    if (found || used[n])
      throw InputError(path, "CARFIN " + c.name,
                       "well " + w.name + "'s nest branches or is shared (" + c.name +
                           (found ? " and " + found->name : "") + " under " + parent + ")");
    found = &c, used[n] = 1;
  }
  if (!found)
    throw InputError(path, "CARFIN",
                     "well " + w.name + " has no refinement under " + parent +
                         (parent == kGlobal ? " containing its column" : "") +
                         ": each well needs a nest of four levels");
  return *found;
}

// Nested FNO's levels refine one well's surroundings each: two wells' LGR1 boxes that share
// GLOBAL cells would refine those cells twice, with two predictions for them.
void check_disjoint_nests(const std::string& path, const std::vector<NestedLevel>& levels) {
  auto overlap = [](const NestedLevel& a, const NestedLevel& b) {
    for (int ax = 0; ax < 3; ++ax)
      if (a.box[2 * ax + 1] < b.box[2 * ax] || b.box[2 * ax + 1] < a.box[2 * ax]) return false;
    return true;
  };
  for (std::size_t m = 0; m < levels.size(); ++m)
    for (std::size_t n = m + 1; n < levels.size(); ++n)
      if (levels[m].lgr() == 1 && levels[n].lgr() == 1 && overlap(levels[m], levels[n]))
        throw InputError(path, "CARFIN " + levels[n].carfin,
                         "shares GLOBAL cells with CARFIN " + levels[m].carfin + " (wells " +
                             levels[m].well + " and " + levels[n].well +
                             "): each well's nest must be disjoint from the others'");
}

std::vector<NestedLevel> assemble_nests(const std::string& path, const SiteGrid& g,
                                        const std::vector<Carfin>& carfins,
                                        const std::vector<NestedWell>& wells) {
  std::vector<NestedLevel> levels(1);
  levels[0].name = kGlobal, levels[0].shape = {g.nx, g.ny, g.nz};
  std::vector<int> used(carfins.size(), 0);
  for (const auto& w : wells) {
    std::string parent = kGlobal;
    std::array<int, 3> shape = levels[0].shape;
    for (int k = 1; k <= kNestedLgrLevels; ++k) {
      const Carfin& c = only_child(path, carfins, parent, w, used);
      NestedLevel l = carfin_level(path, c, shape, w.name, k);
      set_coarse_window(path, l, shape);
      levels.push_back(l);
      parent = c.name, shape = l.shape;
    }
    for (const auto& c : carfins)
      if (c.parent == parent)
        throw InputError(path, "CARFIN " + c.name,
                         "refines LGR4 of well " + w.name + ": a nest has four levels");
  }
  for (std::size_t n = 0; n < carfins.size(); ++n)
    if (!used[n])
      throw InputError(path, "CARFIN " + carfins[n].name,
                       "belongs to no well's nest (parent " + carfins[n].parent + ")");
  check_disjoint_nests(path, levels);
  return levels;
}

// The well's point (the middle of its GLOBAL column) must lie in each level of its nest, or its
// LGR4 injection map would be empty.
void check_well_inside(const std::string& path, const NestedSite& site, const NestedLevel& l,
                       const LevelAxes& axes) {
  const NestedWell* w = nullptr;
  for (const auto& x : site.wells)
    if (x.name == l.well) w = &x;
  auto holds = [](const std::vector<AxisCell>& cells, int g) {
    return std::any_of(cells.begin(), cells.end(), [&](const AxisCell& c) {
      return c.global == g && c.lo < 0.5 && 0.5 <= c.hi;
    });
  };
  if (!holds(axes[0], w->i - 1) || !holds(axes[1], w->j - 1))
    throw InputError(path, "CARFIN " + l.carfin,
                     "does not contain the middle of well " + w->name + "'s column");
}

}  // namespace

bool deck_declares_refinements(const std::string& data_file) {
  return parse_deck(data_file)->hasKeyword("CARFIN");
}

ImportedSite import_site_deck(const std::string& path, double surface_density,
                              const LevelDone& level_done) {
  const auto deckp = parse_deck(path);
  const Opm::Deck& deck = *deckp;
  refuse_unread_keywords(deck, path);
  ImportedSite out;
  // The refinements first: they refuse any keyword inside a CARFIN block, so the grid's
  // keywords read next are the GLOBAL grid's.
  const std::vector<Carfin> carfins = read_carfins(deck, path);
  const SiteGrid grid = read_site_grid(deck, path);
  const SiteConditions cond = read_conditions(deck, path);
  out.site.wells = read_wells(deck, path, grid, surface_density);
  out.site.times_days = read_times(deck, path);
  out.site.levels = assemble_nests(path, grid, carfins, out.site.wells);
  check_nested_site(out.site, path);
  // Every level's axes, from its parent's (levels are in chain order within a well).
  std::vector<LevelAxes> axes{global_axes(grid)};
  for (std::size_t n = 1; n < out.site.levels.size(); ++n) {
    const NestedLevel& l = out.site.levels[n];
    axes.push_back(refined_axes(axes[l.lgr() == 1 ? 0 : n - 1], l));
    check_well_inside(path, out.site, l, axes.back());
  }
  const int levels = int(out.site.levels.size());
  for (int n = 0; n < levels; ++n) {
    out.data.push_back(level_channels(grid, axes[n], out.site, out.site.levels[n], cond));
    if (level_done) level_done(n, levels, out.site.levels[n].group());
  }
  out.notes.push_back("water density " + std::to_string(cond.water_density) +
                      " kg/m3 (IAPWS-97 at RTEMP and the EQUIL datum pressure)");
  return out;
}

}  // namespace ufno
