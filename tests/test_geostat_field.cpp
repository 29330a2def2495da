// The geostatistical field generator: unit variance and the Gaussian covariance exp(-(h/L)^2) of
// the underlying random field (estimated over many realisations), the statistics of ln kr, kz and
// porosity, determinism from the seed, inactive cells left alone, and refused parameters.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/InputError.hpp"
#include "screening/GeostatField.hpp"

using namespace ufno;

namespace {

ReservoirCase blank_case(int nx, int ny, int inactive_layers) {
  ReservoirCase rc;
  rc.nx = rc.lx = nx;
  rc.ny = rc.ly = ny;
  rc.permx.assign(std::size_t(nx) * ny, 50.0);
  rc.permz.assign(rc.permx.size(), 5.0);
  rc.poro.assign(rc.permx.size(), 0.2);
  for (int x = nx - inactive_layers; x < nx; ++x)
    for (int y = 0; y < ny; ++y) {
      const std::size_t i = std::size_t(x) * ny + y;
      rc.permx[i] = rc.permz[i] = rc.poro[i] = 0.0;
    }
  return rc;
}

}  // namespace

TEST_CASE("the random field has unit variance and the Gaussian covariance", "[geostat]") {
  const int nx = 24, ny = 48, n = 200;
  const double lz = 2.0, lr = 6.0;
  double sum = 0, sum2 = 0, cr = 0, cz = 0, cfar = 0;
  long cells = 0, pairs_r = 0, pairs_z = 0, pairs_far = 0;
  for (int s = 0; s < n; ++s) {
    const auto g = gaussian_random_field(nx, ny, lz, lr, 1000 + s);
    for (int x = 0; x < nx; ++x)
      for (int y = 0; y < ny; ++y) {
        const double v = g[x * ny + y];
        sum += v;
        sum2 += v * v;
        ++cells;
        if (y + 6 < ny) cr += v * g[x * ny + y + 6], ++pairs_r;    // lag L_r radially
        if (x + 2 < nx) cz += v * g[(x + 2) * ny + y], ++pairs_z;  // lag L_z vertically
        if (y + 30 < ny) cfar += v * g[x * ny + y + 30], ++pairs_far;
      }
  }
  const double mean = sum / cells, var = sum2 / cells - mean * mean;
  CHECK(std::abs(mean) < 0.05);
  CHECK(var == Approx(1.0).epsilon(0.05));
  // exp(-1) at one correlation length, in each direction; nothing left at five lengths.
  CHECK(cr / pairs_r == Approx(std::exp(-1.0)).margin(0.04));
  CHECK(cz / pairs_z == Approx(std::exp(-1.0)).margin(0.04));
  CHECK(std::abs(cfar / pairs_far) < 0.03);
}

TEST_CASE("generated kr, kz and porosity follow the parameters", "[geostat]") {
  GeostatParams p;
  p.kgeo_md = 80;
  p.sigma_lnk = 0.7;
  p.corr_r_cells = 4;
  p.corr_z_cells = 1;
  p.anisotropy = 0.2;
  p.poro_mean = 0.2;
  double slk = 0, slk2 = 0;
  long n = 0;
  for (unsigned long seed = 1; seed <= 40; ++seed) {
    p.seed = seed;
    auto rc = blank_case(24, 48, 4);
    apply_geostat_field(rc, p);
    for (int x = 0; x < 24; ++x)
      for (int y = 0; y < 48; ++y) {
        const std::size_t i = std::size_t(x) * 48 + y;
        if (x >= 20) {  // the inactive layers stay inactive
          CHECK(rc.permx[i] == 0.0);
          CHECK(rc.poro[i] == 0.0);
          continue;
        }
        CHECK(rc.permz[i] == Approx(0.2 * rc.permx[i]));
        CHECK(rc.poro[i] >= 0.05);
        CHECK(rc.poro[i] <= 0.35);
        // Porosity follows ln kr with slope 0.03 (plus 0.01 x unit noise).
        CHECK(std::abs(rc.poro[i] - (0.2 + 0.03 * std::log(rc.permx[i] / 80))) < 0.06);
        slk += std::log(rc.permx[i]);
        slk2 += std::log(rc.permx[i]) * std::log(rc.permx[i]);
        ++n;
      }
  }
  const double m = slk / n, sd = std::sqrt(slk2 / n - m * m);
  CHECK(std::exp(m) == Approx(80).epsilon(0.05));
  CHECK(sd == Approx(0.7).epsilon(0.07));
}

TEST_CASE("fields are deterministic from the seed, and layered fields are layered", "[geostat]") {
  GeostatParams p;
  auto a = blank_case(24, 48, 0), b = blank_case(24, 48, 0), c = blank_case(24, 48, 0);
  apply_geostat_field(a, p);
  apply_geostat_field(b, p);
  p.seed = 2;
  apply_geostat_field(c, p);
  CHECK(a.permx == b.permx);
  CHECK(a.poro == b.poro);
  CHECK(a.permx != c.permx);
  // Layered: most of the variance of ln kr is between layers, not along them.
  p.structure = "layered";
  p.corr_r_cells = 20;
  double within = 0, total = 0;
  for (unsigned long seed = 1; seed <= 20; ++seed) {
    p.seed = seed;
    auto l = blank_case(24, 48, 0);
    apply_geostat_field(l, p);
    double gm = 0;
    for (double k : l.permx) gm += std::log(k);
    gm /= double(l.permx.size());
    for (int x = 0; x < 24; ++x) {
      double lm = 0;
      for (int y = 0; y < 48; ++y) lm += std::log(l.permx[x * 48 + y]) / 48;
      for (int y = 0; y < 48; ++y) {
        const double v = std::log(l.permx[x * 48 + y]);
        within += (v - lm) * (v - lm);
        total += (v - gm) * (v - gm);
      }
    }
  }
  CHECK(within < 0.4 * total);
}

TEST_CASE("geostatistical parameters outside their ranges are refused", "[geostat]") {
  auto rc = blank_case(8, 16, 0);
  GeostatParams p;
  p.kgeo_md = -3;
  CHECK_THROWS_WITH(apply_geostat_field(rc, p),
                    Catch::Contains("kgeo_md") && Catch::Contains("outside"));
  p = GeostatParams();
  p.anisotropy = 2;
  CHECK_THROWS_WITH(apply_geostat_field(rc, p), Catch::Contains("anisotropy"));
  p = GeostatParams();
  p.structure = "fractal";
  CHECK_THROWS_WITH(apply_geostat_field(rc, p), Catch::Contains("structure"));
}
