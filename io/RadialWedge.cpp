#include "io/RadialWedge.hpp"

#include <cmath>

namespace ufno {

RadialWedge radial_wedge(const std::vector<double>& dr, const std::vector<double>& dz,
                         double inner_radius, double degrees) {
  RadialWedge w;
  w.nodes = {dz.size() + 1, dr.size() + 1, 2};
  std::vector<double> r{inner_radius}, z{0.0};
  for (double d : dr) r.push_back(r.back() + d);
  for (double d : dz) z.push_back(z.back() - d);
  const double half = 0.5 * degrees * M_PI / 180.0;
  for (double zi : z)
    for (double rj : r)
      for (double a : {-half, half}) {
        w.x.push_back(rj * std::cos(a));
        w.y.push_back(rj * std::sin(a));
        w.z.push_back(zi);
      }
  return w;
}

}  // namespace ufno
