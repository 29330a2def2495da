#pragma once
// Import of a 3-D Cartesian ECLIPSE deck with several CO2 injectors and one CARFIN nest per well
// (docs/nested-sites.md, "The deck") into the nested site: the levels' structure from the CARFIN
// records (opm-common parses them; it builds no refined grid) and every level's input channels.
// Anything outside that subset is an InputError naming the keyword or item.
#include <functional>
#include <string>
#include <vector>

#include "io/NestedSite.hpp"

namespace ufno {

struct ImportedSite {
  NestedSite site;
  std::vector<NestedLevelData> data;  // per level of site.levels
  std::vector<std::string> notes;     // how values were obtained (for the tool's report)
};

// True when the deck declares local grid refinements (CARFIN): a 3-D site, not a radial case.
bool deck_declares_refinements(const std::string& data_file);

// Called as each level's channels are built (the long part of a large site's import): the level
// (0-based, of `levels`) and its name, e.g. "W1/LGR2", for the tool's progress.
using LevelDone = std::function<void(int level, int levels, const std::string& name)>;

// surface_density: CO2 at surface conditions [kg/sm3] to turn WCONINJE's rate into Mt/yr.
ImportedSite import_site_deck(const std::string& data_file, double surface_density = 1.872,
                              const LevelDone& level_done = {});

}  // namespace ufno
