#include "runtime/PlumeFront.hpp"

#include <algorithm>

#include "core/InputError.hpp"

namespace ufno {

namespace {

template <class T>
std::vector<double> front_radii(const ReservoirCase& c, const std::vector<T>& sg,
                                double threshold) {
  const std::size_t n = std::size_t(c.nx) * c.ny;
  if (n == 0 || sg.size() % n)
    throw InputError(c.path, "SG", "the field is not a whole number of the case's grids");
  std::vector<double> radii;
  std::vector<double> v(n);
  for (std::size_t off = 0; off < sg.size(); off += n) {
    for (std::size_t i = 0; i < n; ++i)
      v[i] = c.permx[i] > 0 ? std::clamp(double(sg[off + i]), 0.0, 1.0 - c.swi) : 0.0;
    const auto plume = connected_above(c, v, threshold);
    const double r = front_radius(c, v, plume, threshold);
    radii.push_back(radii.empty() ? r : std::max(r, radii.back()));
  }
  return radii;
}

}  // namespace

std::vector<char> connected_to_perforations(const ReservoirCase& c,
                                            const std::vector<char>& inside) {
  const int X = c.nx, Y = c.ny;
  std::vector<char> mask(std::size_t(X) * Y, 0);
  std::vector<int> stack;
  for (int x = 0; x < X; ++x)
    if (c.perforated[x] && inside[std::size_t(x) * Y]) {
      mask[std::size_t(x) * Y] = 1;
      stack.push_back(x * Y);
    }
  while (!stack.empty()) {
    const int cell = stack.back(), x = cell / Y, y = cell % Y;
    stack.pop_back();
    const int nx[4] = {x - 1, x + 1, x, x}, ny[4] = {y, y, y - 1, y + 1};
    for (int k = 0; k < 4; ++k) {
      if (nx[k] < 0 || nx[k] >= X || ny[k] < 0 || ny[k] >= Y) continue;
      const std::size_t n = std::size_t(nx[k]) * Y + ny[k];
      if (mask[n] || !inside[n]) continue;
      mask[n] = 1;
      stack.push_back(int(n));
    }
  }
  return mask;
}

std::vector<char> connected_above(const ReservoirCase& c, const std::vector<double>& v,
                                  double threshold) {
  std::vector<char> m(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) m[i] = c.permx[i] > 0 && v[i] > threshold;
  return connected_to_perforations(c, m);
}

double front_radius(const ReservoirCase& c, const std::vector<double>& v,
                    const std::vector<char>& mask, double threshold) {
  std::vector<double> r_in(c.ny), r_out(c.ny);
  double r = 0;
  for (int y = 0; y < c.ny; ++y) {
    r_in[y] = r;
    r_out[y] = r += c.dr[y];
  }
  double radius = 0;
  for (int x = 0; x < c.nx; ++x) {
    const std::size_t row = std::size_t(x) * c.ny;
    int y = c.ny - 1;
    while (y >= 0 && !mask[row + y]) --y;
    if (y < 0) continue;
    double front = r_out[y];
    if (y + 1 < c.ny && c.permx[row + y + 1] > 0) {
      const double a = v[row + y], b = v[row + y + 1];
      const double f = a > b ? std::clamp((a - threshold) / (a - b), 0.0, 1.0) : 1.0;
      const double c0 = (r_in[y] + r_out[y]) / 2, c1 = (r_in[y + 1] + r_out[y + 1]) / 2;
      front = c0 + f * (c1 - c0);
    }
    radius = std::max(radius, front);
  }
  return radius;
}

std::vector<double> plume_front_radii(const ReservoirCase& c, const std::vector<float>& sg,
                                      double threshold) {
  return front_radii(c, sg, threshold);
}

std::vector<double> plume_front_radii(const ReservoirCase& c, const std::vector<double>& sg,
                                      double threshold) {
  return front_radii(c, sg, threshold);
}

}  // namespace ufno
