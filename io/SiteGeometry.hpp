#pragma once
// The geometry and properties of a 3-D Cartesian site (the GLOBAL tensor grid) and of its refined
// levels, and from them each level's eight input channels as nested FNO builds them
// (docs/nested-sites.md, "The site file"). A level's cell is described along each axis by the
// GLOBAL cell it lies in and the fraction of that cell it covers, so refinements compose and
// every refined cell finds its parent's properties.
#include <array>
#include <vector>

#include "io/NestedSite.hpp"

namespace ufno {

struct SiteGrid {
  int nx = 0, ny = 0, nz = 0;
  std::vector<double> dx, dy, dz;  // metres, per I, per J, per K
  std::vector<double> tops;        // depth of the top of layer 1, metres, (I, J) with I fastest
  std::vector<double> permx_md;    // per GLOBAL cell, ECLIPSE order (I fastest, then J, then K)
  double perm(int i, int j, int k) const {
    return permx_md[i + std::size_t(nx) * (j + std::size_t(ny) * k)];
  }
};

struct SiteConditions {
  double datum_pressure_bar = 0;
  double temperature_c = 0;
  double water_density = 0;  // kg/m3 at (temperature, datum pressure), IAPWS-97
};

// One cell of a level along one axis: the GLOBAL cell it lies in and the part [lo, hi) of it.
struct AxisCell {
  int global = 0;
  double lo = 0, hi = 1;
};
using LevelAxes = std::array<std::vector<AxisCell>, 3>;

LevelAxes global_axes(const SiteGrid& g);
// The axes of `child`, a refinement of the level with axes `parent` (its box, evenly refined).
LevelAxes refined_axes(const LevelAxes& parent, const NestedLevel& child);

// The level's input (1, nx, ny, nz, T, 8) and cell centres.
NestedLevelData level_channels(const SiteGrid& g, const LevelAxes& axes, const NestedSite& site,
                               const NestedLevel& level, const SiteConditions& c);

// Hydrostatic pressure (bar) at centre depth z as the reference computes it: from the datum
// pressure at z_datum = (p_datum - 1.01325) / 9.8 x 100 with the water density at the datum.
double hydrostatic_pressure_bar(double z, const SiteConditions& c);

}  // namespace ufno
