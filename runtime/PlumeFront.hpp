#pragma once
// Where a gas plume reaches, by the KPI rule of docs/kpis.md ("Plume radius"): the gas above a
// threshold connected to the perforated cells, its front interpolated between cell centres per
// layer, the farthest layer. screening/Kpis.cpp reports it from the SG field; the
// buoyancy-aware pressure estimate (runtime/PressureEstimates.hpp) applies it to its own
// saturations, which a plume-radius head reads (python/ufno/heads/plume_radius.py plume_radii).
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

// The cells connected (4-neighbours in layer and radius) to the perforated cells of the well
// column through cells where `inside` (an (X, Y) mask) is set; seeds must be inside too.
std::vector<char> connected_to_perforations(const ReservoirCase& c,
                                            const std::vector<char>& inside);

// The formation's cells (PERMX > 0) where v (X, Y) exceeds the threshold, connected to the
// perforations: the plume (v the gas saturation) or the area of review (v the buildup).
std::vector<char> connected_above(const ReservoirCase& c, const std::vector<double>& v,
                                  double threshold);

// Where a front leaves the masked region, as a radius: in each layer, between the centres of its
// outermost masked cell and the next cell out, where the values v (X, Y) fall through the
// threshold (linear interpolation; the outer edge of the grid or of the formation if the front
// gets there); the farthest over the layers, 0 with no masked cell. Continuous, so a KPI does
// not jump by a log-spaced cell width. Radii from the well axis (cell edges at cumsum(DR)).
double front_radius(const ReservoirCase& c, const std::vector<double>& v,
                    const std::vector<char>& mask, double threshold);

// The plume's front radius at each of the field's report times without the mass cap, as a
// running maximum: SG counts inside the formation (PERMX > 0) and within [0, 1 - SWI]. sg:
// (T, X, Y) of one whole-grid case (InputError naming the case otherwise).
std::vector<double> plume_front_radii(const ReservoirCase& c, const std::vector<float>& sg,
                                      double threshold);
std::vector<double> plume_front_radii(const ReservoirCase& c, const std::vector<double>& sg,
                                      double threshold);

}  // namespace ufno
