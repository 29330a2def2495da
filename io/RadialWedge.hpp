#pragma once
// The radial r-z grid as the solid it is, for viewers: each (layer, radial cell) the block of a
// cylinder between its two radii and its two depths, over one sector of the angle: the wedge the
// Flow decks simulate (io/EclipseDeckWriter.hpp; the model has no angular variation, so one
// sector holds every value once). Node coordinates in metres: x, y horizontal with the well on
// the z axis and the sector centred on +x, z the elevation above the formation's top (0 at the
// top, negative downwards).
#include <array>
#include <vector>

namespace ufno {

struct RadialWedge {
  // (layer edges X + 1, radial edges Y + 1, 2 angles): the prediction's (layer, radial cell)
  // order, so its (X, Y) fields are the wedge's cells as they are stored.
  std::array<std::size_t, 3> nodes{};
  std::vector<double> x, y, z;  // each of nodes[0] * nodes[1] * nodes[2], row-major
};

// dr: radial cell widths from the well (Y), dz: layer thicknesses from the top (X), metres;
// inner_radius: the wellbore wall, where the first cell starts; degrees: the sector's angle.
RadialWedge radial_wedge(const std::vector<double>& dr, const std::vector<double>& dz,
                         double inner_radius, double degrees);

}  // namespace ufno
