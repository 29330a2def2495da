#include "screening/GeostatField.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/InputError.hpp"

namespace ufno {

namespace {

// The kernel whose self-convolution is exp(-(h/L)^2): exp(-2 (h/L)^2), scaled to unit sum of
// squares so that filtered unit white noise keeps unit variance.
std::vector<double> gaussian_kernel(double length, int* half) {
  *half = std::max(1, int(std::ceil(2.0 * length)));
  std::vector<double> k(2 * *half + 1);
  double ss = 0;
  for (int h = -*half; h <= *half; ++h) {
    const double v = std::exp(-2.0 * (h / length) * (h / length));
    k[h + *half] = v;
    ss += v * v;
  }
  for (auto& v : k) v /= std::sqrt(ss);
  return k;
}

// Stratigraphic units: consecutive groups of 1-6 layers sharing one N(0, 1) offset.
std::vector<double> unit_offsets(int nx, std::mt19937_64& gen) {
  std::uniform_int_distribution<int> thickness(1, 6);
  std::normal_distribution<double> n01;
  std::vector<double> o(nx);
  for (int x = 0; x < nx;) {
    const int h = thickness(gen);
    const double v = n01(gen);
    for (int i = x; i < std::min(nx, x + h); ++i) o[i] = v;
    x += h;
  }
  return o;
}

void check_range(double v, double lo, double hi, const char* name) {
  if (!(v >= lo && v <= hi))
    throw InputError(
        "geostat", name,
        std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

}  // namespace

std::vector<double> gaussian_random_field(int nx, int ny, double lz, double lr,
                                          unsigned long seed) {
  int hz = 0, hr = 0;
  const auto kz = gaussian_kernel(lz, &hz), kr = gaussian_kernel(lr, &hr);
  const int px = nx + 2 * hz, py = ny + 2 * hr;
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> n01;
  std::vector<double> noise(std::size_t(px) * py);
  for (auto& v : noise) v = n01(gen);
  // Radial pass on every padded layer, then the vertical pass on the kept cells.
  std::vector<double> radial(std::size_t(px) * ny, 0.0);
  for (int x = 0; x < px; ++x)
    for (int y = 0; y < ny; ++y) {
      double s = 0;
      for (int h = -hr; h <= hr; ++h) s += kr[h + hr] * noise[std::size_t(x) * py + y + hr + h];
      radial[std::size_t(x) * ny + y] = s;
    }
  std::vector<double> out(std::size_t(nx) * ny, 0.0);
  for (int x = 0; x < nx; ++x)
    for (int y = 0; y < ny; ++y) {
      double s = 0;
      for (int h = -hz; h <= hz; ++h) s += kz[h + hz] * radial[std::size_t(x + hz + h) * ny + y];
      out[std::size_t(x) * ny + y] = s;
    }
  return out;
}

void validate_geostat_params(const GeostatParams& p) {
  for (const auto& r : kGeostatRanges) check_range(p.*r.value, r.valid.lo, r.valid.hi, r.name);
  if (p.structure != "gaussian" && p.structure != "layered")
    throw InputError("geostat", "structure", "must be \"gaussian\" or \"layered\"");
}

void apply_geostat_field(ReservoirCase& rc, const GeostatParams& p) {
  validate_geostat_params(p);
  const int nx = rc.nx, ny = rc.ny;
  // Independent streams for the field, the units and the porosity noise.
  std::seed_seq seq{p.seed, 0x9e3779b97f4a7c15ul};
  std::vector<unsigned long> s(3);
  seq.generate(s.begin(), s.end());
  std::vector<double> g = gaussian_random_field(nx, ny, p.corr_z_cells, p.corr_r_cells, s[0]);
  if (p.structure == "layered") {
    std::mt19937_64 gen(s[1]);
    const auto units = unit_offsets(nx, gen);
    const auto lateral = gaussian_random_field(nx, ny, 0.3, 2.0 * p.corr_r_cells, s[1] + 1);
    for (int x = 0; x < nx; ++x)
      for (int y = 0; y < ny; ++y) {
        const std::size_t i = std::size_t(x) * ny + y;
        g[i] = 0.9 * units[x] + 0.45 * lateral[i];
      }
  }
  const auto noise = gaussian_random_field(nx, ny, p.corr_z_cells, p.corr_r_cells, s[2]);
  const double lk0 = std::log(p.kgeo_md);
  for (std::size_t i = 0; i < rc.permx.size(); ++i) {
    if (rc.permx[i] <= 0) continue;  // outside the formation
    const double kr =
        std::clamp(std::exp(lk0 + p.sigma_lnk * g[i]), kGeostatKrClipMd.lo, kGeostatKrClipMd.hi);
    rc.permx[i] = kr;
    rc.permz[i] = kr * p.anisotropy;
    rc.poro[i] = std::clamp(p.poro_mean + 0.03 * (std::log(kr) - lk0) + 0.01 * noise[i],
                            kGeostatPoroClip.lo, kGeostatPoroClip.hi);
  }
}

}  // namespace ufno
