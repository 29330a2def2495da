#include "io/SiteGeometry.hpp"

#include <algorithm>
#include <cmath>

namespace ufno {

namespace {

// Normalisations of the reference's data code (docs/nested-sites.md).
constexpr double kLength = 160000, kDepthOffset = 2000, kDepthScale = 2000, kTime = 10950,
                 kPressure = 172, kTemperature = 70, kPermeability = 100;

enum Channel { X, Y, Depth, Time, Injection, Pressure, Temperature, Permeability };

std::vector<double> edges(const std::vector<double>& d) {
  std::vector<double> e(d.size() + 1, 0.0);
  for (std::size_t i = 0; i < d.size(); ++i) e[i + 1] = e[i] + d[i];
  return e;
}

double centre(const std::vector<double>& e, const std::vector<double>& d, const AxisCell& c) {
  return e[c.global] + 0.5 * (c.lo + c.hi) * d[c.global];
}

// The reference's injection scale: the map holds the well's surface rate (sm3/day) / this.
constexpr double kInjectionRate = 2942777.68785957;
// Distances to the well's point within this many metres are a tie (the lower index wins), so
// rounding in the cell centres does not decide between two equally near cells.
constexpr double kTieMetres = 1e-6;

// The cell of a level axis whose centre is nearest p (the reference's argmin; the lower index on
// a tie).
int nearest_cell(const std::vector<double>& e, const std::vector<double>& d,
                 const std::vector<AxisCell>& cells, double p) {
  std::vector<double> distance(cells.size());
  for (std::size_t c = 0; c < cells.size(); ++c) distance[c] = std::abs(centre(e, d, cells[c]) - p);
  const double least = *std::min_element(distance.begin(), distance.end());
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (distance[c] <= least + kTieMetres) return int(c);
  return 0;
}

// The level's injection map (nx, ny, nz) as the reference's data code builds it: for each well
// the level serves (every well on GLOBAL, its own well on LGR1..LGR4), the column of cells whose
// centre is nearest the well's point (the middle of its GLOBAL column) in x and in y holds the
// well's surface rate / kInjectionRate on every layer; on LGR4 only on the layers inside the
// well's perforated GLOBAL layers.
std::vector<double> injection_map(const SiteGrid& g, const LevelAxes& axes, const NestedSite& site,
                                  const NestedLevel& level) {
  const auto ex = edges(g.dx), ey = edges(g.dy);
  const std::size_t ny = axes[1].size(), nz = axes[2].size();
  std::vector<double> map(axes[0].size() * ny * nz, 0.0);
  for (const auto& w : site.wells) {
    if (level.lgr() > 0 && w.name != level.well) continue;
    const double px = ex[w.i - 1] + 0.5 * g.dx[w.i - 1], py = ey[w.j - 1] + 0.5 * g.dy[w.j - 1];
    const std::size_t i = nearest_cell(ex, g.dx, axes[0], px),
                      j = nearest_cell(ey, g.dy, axes[1], py);
    for (std::size_t k = 0; k < nz; ++k) {
      const int gk = axes[2][k].global;
      if (level.lgr() == kNestedLgrLevels && (gk < w.k1 - 1 || gk > w.k2 - 1)) continue;
      map[(i * ny + j) * nz + k] = w.surface_rate / kInjectionRate;
    }
  }
  return map;
}

}  // namespace

double hydrostatic_pressure_bar(double z, const SiteConditions& c) {
  const double z_datum = (c.datum_pressure_bar - 1.01325) / 9.8 * 100;
  return c.datum_pressure_bar + (z - z_datum) * 9.8 * c.water_density / 1e5;
}

LevelAxes global_axes(const SiteGrid& g) {
  LevelAxes a;
  const std::array<int, 3> n{g.nx, g.ny, g.nz};
  for (int d = 0; d < 3; ++d)
    for (int i = 0; i < n[d]; ++i) a[d].push_back({i, 0.0, 1.0});
  return a;
}

LevelAxes refined_axes(const LevelAxes& parent, const NestedLevel& child) {
  LevelAxes a;
  for (int d = 0; d < 3; ++d) {
    const int first = child.box[2 * d] - 1, r = child.refinement[d];
    for (int c = 0; c < child.shape[d]; ++c) {
      const AxisCell& p = parent[d][first + c / r];
      const double w = (p.hi - p.lo) / r;
      a[d].push_back({p.global, p.lo + w * (c % r), p.lo + w * (c % r + 1)});
    }
  }
  return a;
}

NestedLevelData level_channels(const SiteGrid& g, const LevelAxes& axes, const NestedSite& site,
                               const NestedLevel& level, const SiteConditions& c) {
  const auto ex = edges(g.dx), ey = edges(g.dy), ez = edges(g.dz);
  const std::size_t nx = axes[0].size(), ny = axes[1].size(), nz = axes[2].size(),
                    T = site.times_days.size();
  NestedLevelData out;
  out.input.assign(nx * ny * nz * T * kNestedChannels, 0.0f);
  out.cell_x.resize(nx * ny * nz);
  out.cell_y.resize(nx * ny * nz);
  out.cell_depth.resize(nx * ny * nz);
  const std::vector<double> inj = injection_map(g, axes, site, level);
  for (std::size_t i = 0; i < nx; ++i)
    for (std::size_t j = 0; j < ny; ++j)
      for (std::size_t k = 0; k < nz; ++k) {
        const AxisCell &a = axes[0][i], &b = axes[1][j], &v = axes[2][k];
        const double top = g.tops[a.global + std::size_t(g.nx) * b.global] + ez[v.global];
        const std::size_t cell = (i * ny + j) * nz + k;
        out.cell_x[cell] = centre(ex, g.dx, a);
        out.cell_y[cell] = centre(ey, g.dy, b);
        out.cell_depth[cell] = top + 0.5 * (v.lo + v.hi) * g.dz[v.global];
        std::array<double, kNestedChannels> ch{};
        ch[X] = out.cell_x[cell] / kLength;
        ch[Y] = out.cell_y[cell] / kLength;
        ch[Depth] = (top + v.lo * g.dz[v.global] - kDepthOffset) / kDepthScale;
        ch[Injection] = inj[cell];
        ch[Pressure] = hydrostatic_pressure_bar(out.cell_depth[cell], c) / kPressure;
        ch[Temperature] = c.temperature_c / kTemperature;
        ch[Permeability] = g.perm(a.global, b.global, v.global) / kPermeability;
        for (std::size_t t = 0; t < T; ++t) {
          ch[Time] = site.times_days[t] / kTime;
          float* dst = &out.input[(cell * T + t) * kNestedChannels];
          for (int q = 0; q < kNestedChannels; ++q) dst[q] = float(ch[q]);
        }
      }
  return out;
}

}  // namespace ufno
