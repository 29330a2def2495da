#pragma once
// Import of an ECLIPSE deck (as OPM Flow reads it, with opm-common) into a ReservoirCase on the
// deck's own radial grid: RADIAL r-z grids only (one theta sector), one CO2 injector at the
// centre. Everything the case format needs is taken from standard keywords; a deck that cannot be
// mapped gets an InputError naming the keyword.
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

struct ImportedDeck {
  ReservoirCase rc;                // whole deck grid: X = layers (K), Y = radial cells (I)
  std::vector<int> active;         // (X, Y) ACTNUM
  std::vector<std::string> notes;  // how values were obtained (for the tool's report)
};

// surface_density: CO2 at surface conditions [kg/sm3] to turn WCONINJE's rate into Mt/yr.
ImportedDeck import_deck(const std::string& data_file, double surface_density = 1.872);

// Van Genuchten lambda that best fits the brine relative permeability column of SGOF,
// krw(S*) = sqrt(S*) (1 - (1 - S*^(1/lambda))^lambda)^2 with S* = (1 - Sg - Swi) / (1 - Swi).
double fit_vg_lambda(const std::vector<double>& sg, const std::vector<double>& krw, double swi);

}  // namespace ufno
