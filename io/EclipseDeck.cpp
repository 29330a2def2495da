#include "io/EclipseDeck.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include <opm/input/eclipse/Deck/Deck.hpp>
#include <opm/input/eclipse/Deck/UDAValue.hpp>
#include <opm/input/eclipse/EclipseState/EclipseState.hpp>
#include <opm/input/eclipse/Parser/ErrorGuard.hpp>
#include <opm/input/eclipse/Parser/ParseContext.hpp>
#include <opm/input/eclipse/Parser/Parser.hpp>

#include "core/InputError.hpp"
#include "io/EclipseParse.hpp"

namespace ufno {

namespace {

constexpr double kMilliDarcy = 9.869233e-16;  // m2

// "-- UFNO KEY value" header lines written by python/ufno/data/cases.py (the parser drops
// comments).
double header_value(const std::string& path, const std::string& key, double fallback, bool* found) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream s(line);
    std::string dash, tag, k;
    double v;
    if (s >> dash >> tag >> k >> v && dash == "--" && tag == "UFNO" && k == key) {
      if (found) *found = true;
      return v;
    }
  }
  if (found) *found = false;
  return fallback;
}

}  // namespace

double fit_vg_lambda(const std::vector<double>& sg, const std::vector<double>& krw, double swi) {
  auto err = [&](double lam) {
    double e = 0;
    for (std::size_t i = 0; i < sg.size(); ++i) {
      const double s = (1 - sg[i] - swi) / (1 - swi);
      if (s <= 0 || s >= 1) continue;
      const double k = std::sqrt(s) * std::pow(1 - std::pow(1 - std::pow(s, 1 / lam), lam), 2);
      e += (k - krw[i]) * (k - krw[i]);
    }
    return e;
  };
  double a = 0.05, b = 0.99;  // golden-section search
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  for (int it = 0; it < 80; ++it) {
    if (err(c) < err(d))
      b = d;
    else
      a = c;
    c = b - g * (b - a);
    d = a + g * (b - a);
  }
  return (a + b) / 2;
}

namespace {

// The radial grid (DIMENS, DRV, DZV) into c; returns the sector angle in degrees (DTHETAV).
double read_grid(const Opm::Deck& deck, const std::string& path, ReservoirCase& c) {
  for (const char* units : {"FIELD", "LAB", "PVT-M"})
    if (deck.hasKeyword(units))
      throw InputError(path, units, "unit system not supported; write the deck in METRIC");
  if (!deck.hasKeyword("RADIAL"))
    throw InputError(path, "RADIAL",
                     "keyword is missing: only radial (r-z) decks map onto the model grid");
  if (!deck.hasKeyword("CO2STORE"))
    throw InputError(path, "CO2STORE", "keyword is missing: not a CO2 storage deck");
  const auto& dims = required_keyword(deck, path, "DIMENS", "grid size").getRecord(0);
  const int nr = dims.getItem("NX").get<int>(0), nth = dims.getItem("NY").get<int>(0),
            nz = dims.getItem("NZ").get<int>(0);
  // Bounded before OPM builds the grid state, which allocates per cell (the paper's grid has
  // 19,200 cells; a radial r-z deck of more than a million is no input of this program).
  if (nr < 1 || nz < 1 || nth < 1 || double(nr) * nz * nth > 1e6)
    throw InputError(path, "DIMENS",
                     "NX x NY x NZ = " + std::to_string(nr) + " x " + std::to_string(nth) + " x " +
                         std::to_string(nz) + " is outside 1 .. 1,000,000 cells");
  if (nth != 1)
    throw InputError(path, "DIMENS",
                     "has " + std::to_string(nth) +
                         " theta sectors: not radially symmetric (the model needs one sector)");
  c.nx = c.lx = nz;
  c.ny = c.ly = nr;
  c.dr = required_keyword(deck, path, "DRV", "radial cell widths").getSIDoubleData();
  c.dz = required_keyword(deck, path, "DZV", "layer thicknesses").getSIDoubleData();
  if (int(c.dr.size()) != nr)
    throw InputError(path, "DRV", "must hold NR = " + std::to_string(nr) + " values");
  if (int(c.dz.size()) != nz)
    throw InputError(path, "DZV", "must hold NZ = " + std::to_string(nz) + " values");
  const auto theta = required_keyword(deck, path, "DTHETAV", "sector angle").getRawDoubleData();
  return theta.empty() ? 360.0 : theta[0];
}

// PERMX, PERMZ and PORO as OPM evaluates them (COPY, MULTIPLY, BOX ... applied), on active
// cells; out.active marks them.
void read_properties(const Opm::Deck& deck, const std::string& path, ImportedDeck& out) {
  ReservoirCase& c = out.rc;
  std::unique_ptr<Opm::EclipseState> state;
  try {
    state = std::make_unique<Opm::EclipseState>(deck);
  } catch (const std::exception& e) {
    throw InputError(path, "", "OPM cannot set up the deck: " + printable(e));
  }
  const auto& grid = state->getInputGrid();
  const auto& fp = state->fieldProps();
  for (const char* kw : {"PERMX", "PERMZ", "PORO"})
    if (!fp.has_double(kw)) throw InputError(path, kw, "keyword is missing");
  const auto permx = fp.get_double("PERMX"), permz = fp.get_double("PERMZ"),
             poro = fp.get_double("PORO");
  const int nr = c.ny, nz = c.nx;
  const std::size_t cells = std::size_t(nz) * nr;
  c.permx.assign(cells, 0.0);
  c.permz.assign(cells, 0.0);
  c.poro.assign(cells, 0.0);
  out.active.assign(cells, 0);
  for (std::size_t a = 0; a < permx.size(); ++a) {
    const std::size_t g = grid.getGlobalIndex(a);  // i + nr * k (one theta sector)
    const std::size_t i = g % nr, k = g / nr;
    const std::size_t cell = k * nr + i;  // case layout (X = k, Y = i)
    c.permx[cell] = permx[a] / kMilliDarcy;
    c.permz[cell] = permz[a] / kMilliDarcy;
    c.poro[cell] = poro[a];
    out.active[cell] = 1;
  }
}

// The injector: one gas injector under rate control (INJ_RATE of the whole circle, the deck's
// sector scaled by 360 / theta_deg), completed at the centre (the perforated layers).
void read_injector(const Opm::Deck& deck, const std::string& path, double theta_deg,
                   double surface_density, ImportedDeck& out) {
  ReservoirCase& c = out.rc;
  const auto& inj = required_keyword(deck, path, "WCONINJE", "injection rate");
  if (inj.size() != 1 || deck.count("WCONINJE") != 1)
    throw InputError(path, "WCONINJE", "must define exactly one injector (found more)");
  const auto& rec = inj.getRecord(0);
  if (rec.getItem("TYPE").get<std::string>(0) != "GAS")
    throw InputError(path, "WCONINJE", "the injector must inject GAS (CO2)");
  // RATE is a UDA value; in a METRIC deck its raw value is sm3/day (of the sector).
  const auto rate = rec.getItem("RATE").get<Opm::UDAValue>(0);
  if (!rate.is<double>())
    throw InputError(path, "WCONINJE", "the rate must be a number, not a user-defined quantity");
  const double q = rate.get<double>();
  c.rate_mt_per_year = q * (360.0 / theta_deg) * surface_density * 365.25 / 1e9;
  out.notes.push_back("INJ_RATE from WCONINJE x 360/" + std::to_string(theta_deg) + " deg x " +
                      std::to_string(surface_density) + " kg/sm3");
  const int nz = c.nx;
  c.perforated.assign(nz, 0);
  for (const auto& rec2 : required_keyword(deck, path, "COMPDAT", "perforation")) {
    const int i = rec2.getItem("I").get<int>(0);
    if (i != 1)
      throw InputError(path, "COMPDAT",
                       "connection at I = " + std::to_string(i) +
                           ": the well must be in the centre column (I = 1)");
    const int k1 = rec2.getItem("K1").get<int>(0), k2 = rec2.getItem("K2").get<int>(0);
    if (k1 < 1 || k2 > nz || k1 > k2)
      throw InputError(path, "COMPDAT", "layer range out of the grid");
    for (int k = k1; k <= k2; ++k) c.perforated[k - 1] = 1;
  }
}

// Temperature, initial pressure, SWI and VG_LAMBDA (SGOF, or the deck's header) and the report
// times (TSTEP).
void read_conditions(const Opm::Deck& deck, const std::string& path, ImportedDeck& out) {
  ReservoirCase& c = out.rc;
  c.temperature_c = reservoir_temperature_c(deck, path);
  c.pressure_bar = datum_pressure_bar(deck, path);
  const auto sgof = required_keyword(deck, path, "SGOF", "saturation functions")
                        .getRecord(0)
                        .getItem(0)
                        .getData<double>();
  if (sgof.size() < 8 || sgof.size() % 4 != 0)
    throw InputError(path, "SGOF", "must be one table of (Sg, krg, krw, Pc) rows");
  std::vector<double> sg, krw;
  for (std::size_t r = 0; r < sgof.size(); r += 4) {
    sg.push_back(sgof[r]);
    krw.push_back(sgof[r + 2]);
  }
  c.swi = 1.0 - sg.back();
  bool from_header = false;
  c.vg_lambda = header_value(path, "VG_LAMBDA", 0.0, &from_header);
  if (!from_header) {
    c.vg_lambda = fit_vg_lambda(sg, krw, c.swi);
    out.notes.push_back("VG_LAMBDA fitted to the SGOF brine relative permeability: " +
                        std::to_string(c.vg_lambda));
  }
  double t = 0;
  for (const auto& kw : deck["TSTEP"])
    for (double d : kw.getRecord(0).getItem(0).getData<double>()) c.times_days.push_back(t += d);
  if (c.times_days.empty()) throw InputError(path, "TSTEP", "keyword is missing (report times)");
}

}  // namespace

ImportedDeck import_deck(const std::string& path, double surface_density) {
  const std::unique_ptr<Opm::Deck> deckp = parse_deck(path);
  const Opm::Deck& deck = *deckp;
  ImportedDeck out;
  out.rc.path = path;
  const double theta_deg = read_grid(deck, path, out.rc);
  read_properties(deck, path, out);
  read_injector(deck, path, theta_deg, surface_density, out);
  read_conditions(deck, path, out);
  return out;
}

}  // namespace ufno
