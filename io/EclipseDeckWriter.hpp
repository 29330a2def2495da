#pragma once
// A case file as an OPM Flow deck: the inverse of io/EclipseDeck.cpp (ufno_import), and the same
// deck the training-data generator (python/ufno/data/cases.py write_deck) writes, line for line: a
// radial 10-degree wedge with INRAD 0.1 m, CO2STORE (brine as OIL, CO2 as GAS with DISGAS), the
// van Genuchten-Mualem / Corey SGOF table, the injector in the well column with one connection per
// perforated layer, and the case's report times as TSTEP. Comments carry the exact scalars as
// "-- UFNO KEY value" lines, which ufno_import reads back.
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

struct DeckOptions {
  std::string source;         // named in the deck's header (the case file)
  std::vector<double> multx;  // (X, Y) radial transmissibility multipliers; empty: all 1
  std::string multx_note;     // how the multipliers were made, for MULTX.INC's comment
};

// Writes CASE.DATA and include/*.INC into dir (created). The case must be whole-grid.
void write_flow_deck(const ReservoirCase& c, const std::string& dir, const DeckOptions& o);

// Exact two-point radial transmissibilities of the wedge between cells (x, y) and (x, y + 1) in
// OPM's metric units, from the volume-average node radii; (X, Y), 0 in the last column and
// between inactive cells. MULTX = this / OPM's own TRANX (from a dry run's INIT file).
std::vector<double> exact_radial_transmissibility(const ReservoirCase& c);

// The well radius, wedge angle and CO2 surface density the decks use.
constexpr double kDeckWellRadiusM = 0.1;
constexpr double kDeckThetaDeg = 10.0;
constexpr double kCo2SurfaceDensity = 1.872;  // kg/sm3, as OPM's CO2STORE

}  // namespace ufno
