#include "runtime/PressureEstimates.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
// opm-material's fluid components (header only), as physics.py ports them.
#include <opm/material/common/UniformTabulated2DFunction.hpp>
#include <opm/material/components/Brine.hpp>
#include <opm/material/components/CO2.hpp>
#include <opm/material/components/SimpleHuDuanH2O.hpp>
#include <opm/material/components/co2tables.inc>

#include "io/CaseEncoding.hpp"
#include "runtime/Co2Density.hpp"
#include "runtime/EstimateMemo.hpp"
#include "runtime/PlumeFront.hpp"

namespace ufno {
namespace {

// Pure water for opm-material's Brine: a type of its own, so that its Brine's salinity (a static
// member, 0.1 by default and set globally by OPM's BrineCo2Pvt) is ours and constant.
struct SaltFreeWater : Opm::SimpleHuDuanH2O<double> {};

}  // namespace
}  // namespace ufno

// The decks have no SALINITY keyword: Flow's CO2STORE brine is salt free.
template <>
double Opm::Brine<double, ufno::SaltFreeWater>::salinity = 0.0;

namespace ufno {
namespace {

using Water = Opm::SimpleHuDuanH2O<double>;
using SaltFreeBrine = Opm::Brine<double, SaltFreeWater>;
using Co2 = Opm::CO2<double, ::CO2Tables>;

// physics.py's constants; those of the decks come from python/ufno/data/cases.py.
constexpr double kMdToM2 = 9.869233e-16;
constexpr double kBar = 1e5;  // Pa
constexpr double kDay = 86400.0;
constexpr double kPi = 3.141592653589793;                // math.pi
constexpr double kEulerGamma = 0.5772156649015329;       // physics.EULER_GAMMA
constexpr double kDaysPerYear = 365.25;                  // cases.DAYS_PER_YEAR
constexpr double kSecondsPerYear = kDaysPerYear * kDay;  // physics.SECONDS_PER_YEAR
constexpr double kRockCompressibility = 4.5e-5 / kBar;   // cases.ROCK_COMPRESSIBILITY [1/Pa]
constexpr double kBrineGradientBarPerM = 1000.0 * 9.80665 / 1e5;  // cases.BRINE_GRADIENT
constexpr double kWellRadius = 0.1;                               // cases.WELL_RADIUS [m]
constexpr int kPaperReportTimes = 24;                             // cases.NT (report_times())
constexpr int kSaturationSamples = 3000;  // grid_two_phase_correction_bar's n
constexpr double kFeatureFloorBar = 1e-3;
constexpr double kTwoPhaseFloorBar = 0.05;

// numpy's sum of a contiguous float64 array (pairwise, 8 accumulators per block of <= 128), so
// that sums round as physics.py's.
double np_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double r = 0.0;
    for (std::size_t i = 0; i < n; ++i) r += a[i];
    return r;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return np_sum(a, n2) + np_sum(a + n2, n - n2);
}
double np_sum(const std::vector<double>& a) { return np_sum(a.data(), a.size()); }

// numpy.interp's search (numpy/core/src/multiarray/compiled_base.c, binary_search_with_guess):
// the cumulative integral's abscissae may end with a step back, where only numpy's own search
// gives numpy's value.
std::ptrdiff_t np_search(double key, const std::vector<double>& arr, std::ptrdiff_t guess) {
  constexpr std::ptrdiff_t kCache = 8;  // LIKELY_IN_CACHE_SIZE
  const std::ptrdiff_t len = std::ptrdiff_t(arr.size());
  std::ptrdiff_t imin = 0, imax = len;
  if (key > arr[len - 1]) return len;
  if (key < arr[0]) return -1;
  if (len <= 4) {
    std::ptrdiff_t i = 1;
    while (i < len && key >= arr[i]) ++i;
    return i - 1;
  }
  guess = std::max<std::ptrdiff_t>(1, std::min(guess, len - 3));
  if (key < arr[guess]) {
    if (key < arr[guess - 1]) {
      imax = guess - 1;
      if (guess > kCache && key >= arr[guess - kCache]) imin = guess - kCache;
    } else {
      return guess - 1;
    }
  } else {
    if (key < arr[guess + 1]) return guess;
    if (key < arr[guess + 2]) return guess + 1;
    imin = guess + 2;
    if (guess < len - kCache - 1 && key < arr[guess + kCache]) imax = guess + kCache;
  }
  while (imin < imax) {
    const std::ptrdiff_t mid = imin + ((imax - imin) >> 1);
    if (key >= arr[mid])
      imin = mid + 1;
    else
      imax = mid;
  }
  return imin - 1;
}

// numpy.interp(x, xp, fp) over the keys in order (the previous index the next one's guess).
std::vector<double> np_interp(const std::vector<double>& x, const std::vector<double>& xp,
                              const std::vector<double>& fp) {
  std::vector<double> out(x.size());
  const std::ptrdiff_t len = std::ptrdiff_t(xp.size());
  std::ptrdiff_t j = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (std::isnan(v)) {
      out[i] = v;
      continue;
    }
    j = np_search(v, xp, j);
    if (j == -1) {
      out[i] = fp[0];
    } else if (j == len) {
      out[i] = fp[len - 1];
    } else if (j == len - 1 || xp[j] == v) {
      out[i] = fp[j];
    } else {
      const double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
      out[i] = slope * (v - xp[j]) + fp[j];
      if (std::isnan(out[i])) {
        out[i] = slope * (v - xp[j + 1]) + fp[j + 1];
        if (std::isnan(out[i]) && fp[j] == fp[j + 1]) out[i] = fp[j];
      }
    }
  }
  return out;
}

// numpy.geomspace(start, stop, n): 10^linspace(log10 start, log10 stop), exact endpoints.
std::vector<double> geomspace(double start, double stop, int n) {
  std::vector<double> t(n);
  const double ls = std::log10(start), le = std::log10(stop);
  const double step = (le - ls) / double(n - 1);
  for (int i = 0; i < n; ++i) t[i] = std::pow(10.0, double(i) * step + ls);
  t[0] = start;
  t[n - 1] = stop;
  return t;
}

// The decks' radii: cell edges from the well radius and the node (log-average) radii.
struct Radii {
  std::vector<double> in, out, node;
};
Radii radii(const std::vector<double>& dr) {
  Radii r;
  double s = 0;
  for (double w : dr) {
    s += w;
    r.out.push_back(kWellRadius + s);
    r.in.push_back(r.out.back() - w);
  }
  for (std::size_t y = 0; y < dr.size(); ++y) {
    const double a = r.in[y], b = r.out[y];
    r.node.push_back(std::exp((b * b * std::log(b) - a * a * std::log(a)) / (b * b - a * a) - 0.5));
  }
  return r;
}

void require_whole(const ReservoirCase& c) {
  if (c.lx != c.nx || c.ly != c.ny || c.x0 != 0 || c.y0 != 0)
    throw std::logic_error("pressure estimates need the whole case, not a block of it");
}

std::vector<double> report_times_s(const std::vector<double>& times_days) {
  std::vector<double> t = times_days.empty() ? paper_times_days(kPaperReportTimes) : times_days;
  for (double& v : t) v *= kDay;
  return t;
}

// The decks' SGOF functions (physics.py rel_perms): krg, krw at gas saturation sg.
void rel_perms(double sg, double swi, double lam, double& krg, double& krw) {
  const double s = std::clamp(1.0 - sg / (1.0 - swi), 0.0, 1.0);
  const double w = 1.0 - std::pow(1.0 - std::pow(s, 1.0 / lam), lam);
  krw = std::sqrt(s) * (w * w);
  krg = ((1.0 - s) * (1.0 - s)) * (1.0 - s * s);
}

// Gaussian elimination with partial pivoting: solves a (n x n, row-major) X = b (n x m,
// row-major) in place of b; a is overwritten.
void solve_dense(std::vector<double>& a, std::vector<double>& b, int n, int m) {
  for (int k = 0; k < n; ++k) {
    int piv = k;
    for (int i = k + 1; i < n; ++i)
      if (std::abs(a[std::size_t(i) * n + k]) > std::abs(a[std::size_t(piv) * n + k])) piv = i;
    if (piv != k) {
      for (int j = 0; j < n; ++j) std::swap(a[std::size_t(k) * n + j], a[std::size_t(piv) * n + j]);
      for (int j = 0; j < m; ++j) std::swap(b[std::size_t(k) * m + j], b[std::size_t(piv) * m + j]);
    }
    const double d = a[std::size_t(k) * n + k];
    for (int i = k + 1; i < n; ++i) {
      const double l = a[std::size_t(i) * n + k] / d;
      if (l == 0.0) continue;
      for (int j = k + 1; j < n; ++j) a[std::size_t(i) * n + j] -= l * a[std::size_t(k) * n + j];
      for (int j = 0; j < m; ++j) b[std::size_t(i) * m + j] -= l * b[std::size_t(k) * m + j];
    }
  }
  for (int k = n - 1; k >= 0; --k) {
    const double d = a[std::size_t(k) * n + k];
    for (int j = 0; j < m; ++j) {
      double s = b[std::size_t(k) * m + j];
      for (int i = k + 1; i < n; ++i) s -= a[std::size_t(k) * n + i] * b[std::size_t(i) * m + j];
      b[std::size_t(k) * m + j] = s / d;
    }
  }
}

// The r-z systems' block-tridiagonal elimination over the radial columns: column j's X x X block
// M_j and right-hand side r_j come from fill(j, M, r); columns j and j + 1 are coupled by
// -diag(tx[:, j]) (tx the radial transmissibilities, (X, Y - 1) row-major). Forward:
// M_j += diag(t) M_{j-1}^{-1} diag(t), r_j += t g_{j-1}; then back substitution into xs (Y, X).
class ColumnElimination {
 public:
  ColumnElimination(int X, int Y)
      : X_(X),
        Y_(Y),
        minv_c_(std::size_t(Y) * X * X),
        g_(std::size_t(Y) * X),
        M_(std::size_t(X) * X),
        rhs_(std::size_t(X) * (X + 1)),
        r_(X) {}

  template <class Fill>
  void solve(const std::vector<double>& tx, Fill fill, std::vector<double>& xs) {
    const int X = X_, Y = Y_;
    const std::size_t XX = std::size_t(X) * X;
    for (int j = 0; j < Y; ++j) {
      fill(j, M_, r_);
      if (j > 0)
        for (int a = 0; a < X; ++a) {
          const double t = tx[std::size_t(a) * (Y - 1) + j - 1];
          for (int b = 0; b < X; ++b)
            M_[std::size_t(a) * X + b] += t * minv_c_[std::size_t(j - 1) * XX + a * X + b];
          r_[a] += t * g_[std::size_t(j - 1) * X + a];
        }
      const int m = j + 1 < Y ? X + 1 : 1;  // [diag(C) | r], C = -t_j, or r alone
      rhs_.assign(std::size_t(X) * m, 0.0);
      for (int a = 0; a < X; ++a) {
        if (m > 1) rhs_[std::size_t(a) * m + a] = -tx[std::size_t(a) * (Y - 1) + j];
        rhs_[std::size_t(a) * m + m - 1] = r_[a];
      }
      solve_dense(M_, rhs_, X, m);
      for (int a = 0; a < X; ++a) {
        if (m > 1)
          for (int b = 0; b < X; ++b)
            minv_c_[std::size_t(j) * XX + a * X + b] = rhs_[std::size_t(a) * m + b];
        g_[std::size_t(j) * X + a] = rhs_[std::size_t(a) * m + m - 1];
      }
    }
    xs.resize(std::size_t(Y) * X);
    for (int a = 0; a < X; ++a) xs[std::size_t(Y - 1) * X + a] = g_[std::size_t(Y - 1) * X + a];
    for (int j = Y - 2; j >= 0; --j)
      for (int a = 0; a < X; ++a) {
        double s = 0.0;
        for (int b = 0; b < X; ++b)
          s += minv_c_[std::size_t(j) * XX + a * X + b] * xs[std::size_t(j + 1) * X + b];
        xs[std::size_t(j) * X + a] = g_[std::size_t(j) * X + a] - s;
      }
  }

 private:
  int X_, Y_;
  std::vector<double> minv_c_, g_, M_, rhs_, r_;
};

}  // namespace

double brine_density_kg_m3(double temperature_c, double pressure_bar) {
  // extrapolate: physics.py has no pressure limit (opm-material's is 1000 bar).
  return Water::liquidDensity(temperature_c + 273.15, pressure_bar * kBar, /*extrapolate=*/true);
}

double brine_compressibility_per_pa(double temperature_c, double pressure_bar) {
  return (brine_density_kg_m3(temperature_c, pressure_bar + 1.0) -
          brine_density_kg_m3(temperature_c, pressure_bar - 1.0)) /
         (2.0 * kBar) / brine_density_kg_m3(temperature_c, pressure_bar);
}

double brine_viscosity_pa_s(double temperature_c) {
  // Independent of pressure. Below 275 K opm-material takes 275 degC, physics.py 1.85 degC.
  return SaltFreeBrine::liquidViscosity(temperature_c + 273.15, 0.0);
}

double co2_viscosity_pa_s(double temperature_c, double pressure_bar) {
  const double t = temperature_c + 273.15, p = pressure_bar * kBar;
  if (t >= 280.0 && t <= 400.0 && p >= 1e5 && p <= 1e8) return Co2::gasViscosity(t, p, false);
  // Outside the density table opm-material would throw: physics.py's port of the same formula
  // with the clamped table density (co2_density_kg_m3).
  const double tk = std::max(t, 275.0);
  const double ts = tk / 251.196;
  const double lt = std::log(ts);
  const double sigma = std::exp(
      0.235156 + lt * (-0.491266 + lt * (5.211155e-2 + lt * (5.347906e-2 + lt * -1.537102e-2))));
  const double mu0 = 1.00697 * std::sqrt(tk) / sigma;
  const double rho = co2_density_kg_m3(temperature_c, pressure_bar);
  const double dmu = 0.4071119e-2 * rho + 0.7198037e-4 * rho * rho +
                     0.2411697e-16 * std::pow(rho, 6.0) / (ts * ts * ts) +
                     0.2971072e-22 * std::pow(rho, 8.0) - 0.1627888e-22 * std::pow(rho, 8.0) / ts;
  return (mu0 + dmu) / 1e6;
}

PressureProperties pressure_properties(const ReservoirCase& c) {
  require_whole(c);
  const int X = c.nx, Y = c.ny;
  PressureProperties p;
  p.r_centre0 = c.dr.at(0) - c.dr[0] / 2.0;
  std::vector<double> z_mid(X);
  double z = 0;
  for (int x = 0; x < X; ++x) {
    z += c.dz[x];
    z_mid[x] = z - c.dz[x] / 2.0;
  }
  std::vector<double> zp, khp(X), hp(X), php(X), zact(X), hact(X);
  for (int x = 0; x < X; ++x) {
    const std::size_t i = std::size_t(x) * Y;
    const bool act = c.permx[i] > 0;
    const double perf = (c.perforated[x] != 0 && act) ? 1.0 : 0.0;
    if (perf > 0) zp.push_back(z_mid[x]);
    khp[x] = c.permx[i] * c.dz[x] * perf;
    hp[x] = c.dz[x] * perf;
    php[x] = (act ? c.poro[i] : 0.0) * c.dz[x] * perf;
    zact[x] = z_mid[x] * (act ? 1.0 : 0.0) * c.dz[x];
    hact[x] = (act ? 1.0 : 0.0) * c.dz[x];
  }
  const double z_perf =
      zp.empty() ? std::numeric_limits<double>::quiet_NaN() : np_sum(zp) / double(zp.size());
  p.p_perf = c.pressure_bar + kBrineGradientBarPerM * z_perf;
  p.kh_perf = np_sum(khp) * kMdToM2;
  p.h_perf = np_sum(hp);
  p.phi_perf = np_sum(php) / p.h_perf;
  const double p_mid_all = c.pressure_bar + kBrineGradientBarPerM * (np_sum(zact) / np_sum(hact));
  p.mu_w = brine_viscosity_pa_s(c.temperature_c);
  p.mu_g = co2_viscosity_pa_s(c.temperature_c, p.p_perf);
  p.c_w = brine_compressibility_per_pa(c.temperature_c, p_mid_all);
  p.c_t = kRockCompressibility + p.c_w;
  p.rho_co2 = co2_density_kg_m3(c.temperature_c, p.p_perf);
  p.q = c.rate_mt_per_year * 1e9 / kSecondsPerYear / p.rho_co2;
  return p;
}

double exponential_integral_e1(double x) {
  if (x <= 1.0) {
    double s = 0.0, term = 1.0;
    for (int k = 1; k < 40; ++k) {
      term = term * (-x) / k;
      s -= term / k;
    }
    return -kEulerGamma - std::log(x) + s;
  }
  // exp(-x) / (x + 1 - 1 / (x + 3 - 4 / (x + 5 - ...))), modified Lentz.
  double b = x + 1.0, c = 1e300, d = 1.0 / b, h = d;
  for (int i = 1; i < 200; ++i) {
    const double an = -double(i * i);
    b += 2.0;
    d = 1.0 / (an * d + b);
    c = b + an / c;
    h = h * c * d;
  }
  return x > 700 ? 0.0 : h * std::exp(-std::min(x, 700.0));
}

double theis_dp_pa(double r, double t, double q, double mu, double k, double h, double phi,
                   double ct) {
  const double u = phi * mu * ct * (r * r) / (4.0 * k * t);
  return q * mu / (4.0 * kPi * k * h) * exponential_integral_e1(u);
}

namespace {

double theis_from(const PressureProperties& p) {
  return theis_dp_pa(p.r_centre0, kDay, p.q, p.mu_w, p.kh_perf / p.h_perf, p.h_perf, p.phi_perf,
                     p.c_t) /
         kBar;
}

constexpr double kRelax = 0.5;  // how far each iteration moves the injection

// After an implicit step's solve (xs, Y-major, the well node eliminated): the well's pressure
// from the rate q (cfs = sum of cf), each connection's rate cf (p_well + h - p) with h the
// connection's head (none: 0), and the cells' pressures pn (X x Y, zero outside the formation:
// permx 0). tmp is scratch of X.
void well_and_cells(const std::vector<double>& xs, const std::vector<double>& cf, double cfs,
                    double q, const std::vector<double>* h, const std::vector<double>& permx, int Y,
                    std::vector<double>& tmp, std::vector<double>& qw, std::vector<double>& pn) {
  const int X = int(cf.size());
  for (int x = 0; x < X; ++x) tmp[x] = cf[x] * xs[x];
  const double pw = (q + np_sum(tmp)) / cfs;
  for (int x = 0; x < X; ++x) qw[x] = cf[x] * (h ? pw + (*h)[x] - xs[x] : pw - xs[x]);
  for (int x = 0; x < X; ++x)
    for (int y = 0; y < Y; ++y) {
      const std::size_t i = std::size_t(x) * Y + y;
      pn[i] = permx[i] > 0 ? xs[std::size_t(y) * X + x] : 0.0;
    }
}

// One column's part of the upstream saturation transport (physics.py's transport loops), for
// the implicit and the buoyancy-aware estimates: each cell's radial outflow (out_r), old
// saturation (so), new saturation (sj, from 0), and its vertical fluxes split by direction
// (down: from x to x + 1, up: from x + 1 to x) with the vertical outflow they make (out_v).
struct TransportColumn {
  explicit TransportColumn(int X) : out_r(X), out_v(X), down(X), up(X), sj(X), so(X) {}
  std::vector<double> out_r, out_v, down, up, sj, so;
  // Whether CO2 flows into column j or stands in it or beyond: the transport stops at the first
  // column it has not reached. inflow: column j's radial inflow (X).
  static bool reached(int j, int Y, const std::vector<double>& inflow,
                      const std::vector<double>& s_old) {
    const int X = int(inflow.size());
    for (int x = 0; x < X; ++x) {
      if (inflow[x] > 0) return true;
      for (int y = j; y < Y; ++y)
        if (s_old[std::size_t(x) * Y + y] > 0) return true;
    }
    return false;
  }
  // Column j of an X x Y grid: fx the radial fluxes (X x (Y - 1)), fz the vertical ones
  // (X x Y, downward positive), s_old the saturations (X x Y).
  void begin(int j, int Y, const std::vector<double>& fx, const std::vector<double>& fz,
             const std::vector<double>& s_old) {
    const int X = int(so.size());
    for (int x = 0; x < X; ++x) {
      out_r[x] = j + 1 < Y ? fx[std::size_t(x) * (Y - 1) + j] : 0.0;
      so[x] = s_old[std::size_t(x) * Y + j];
      sj[x] = 0.0;
      out_v[x] = 0.0;
    }
    for (int x = 0; x + 1 < X; ++x) {
      const double f = fz[std::size_t(x) * Y + j];
      down[x] = std::max(f, 0.0);
      up[x] = std::max(-f, 0.0);
      out_v[x] += down[x];
    }
    for (int x = 1; x < X; ++x) out_v[x] += up[x - 1];
  }
};

// The well's rate and the dissolution sink moved kRelax of the way toward what this step's gas
// and dissolved volumes (dv_gas, dv_dis since the last report) ask for.
void relax_injection(double dv_gas, double dv_dis, double dt, const std::vector<double>& wts,
                     double& q, std::vector<double>& sink) {
  q = kRelax * std::max(dv_gas / dt, 0.0) + (1 - kRelax) * q;
  const double rate = std::max(dv_dis, 0.0) / dt;
  for (std::size_t i = 0; i < sink.size(); ++i)
    sink[i] = kRelax * rate * wts[i] + (1 - kRelax) * sink[i];
}

// Block j (radial column j, its X layers) of one implicit pressure step, as physics.py's
// _rz_implicit_step builds it: storage over dt, the radial (tx, X x (Y - 1)) and vertical (tz)
// transmissibilities, the cells' sinks, and in column 0 the well node eliminated: rate q shared
// by the connections cf (sum cfs).
void implicit_step_block(int j, int X, int Y, const std::vector<double>& tx,
                         const std::vector<double>& tz, const std::vector<double>& stor, double dt,
                         const std::vector<double>& pres, const std::vector<double>& sink, double q,
                         const std::vector<double>& cf, double cfs, std::vector<double>& M,
                         std::vector<double>& rj) {
  auto at = [&](int x, int y) { return std::size_t(x) * Y + y; };
  auto txi = [&](int x, int y) { return std::size_t(x) * (Y - 1) + y; };
  std::fill(M.begin(), M.end(), 0.0);
  for (int x = 0; x < X; ++x) {
    double d = 0.0;
    if (j + 1 < Y) d += tx[txi(x, j)];
    if (j > 0) d += tx[txi(x, j - 1)];
    if (x + 1 < X) d += tz[at(x, j)];
    if (x > 0) d += tz[at(x - 1, j)];
    d += stor[at(x, j)] / dt;
    M[std::size_t(x) * X + x] = d;
    rj[x] = stor[at(x, j)] / dt * pres[at(x, j)] - sink[at(x, j)];
    if (j == 0) rj[x] += q * cf[x] / cfs;
  }
  for (int x = 0; x + 1 < X; ++x) {
    M[std::size_t(x) * X + x + 1] -= tz[at(x, j)];
    M[std::size_t(x + 1) * X + x] -= tz[at(x, j)];
  }
  if (j == 0)
    for (int a = 0; a < X; ++a)
      for (int b = 0; b < X; ++b)
        M[std::size_t(a) * X + b] += (a == b ? cf[a] : 0.0) - cf[a] * cf[b] / cfs;
}

// The decks' brine transmissibilities of a whole case [m3/(Pa s)]: radial tx (X, Y-1) between
// node radii, each half cell's 2 pi k dz / ln(r ratio) in series; vertical tz (X-1 rows of Y,
// X * Y stored) between layer centres with the harmonic kz over the ring's area; 0 where a
// neighbour is inactive.
void rz_transmissibilities(const ReservoirCase& c, const Radii& r, const std::vector<double>& area,
                           double mu, std::vector<double>& tx, std::vector<double>& tz) {
  const int X = c.nx, Y = c.ny;
  auto at = [&](int x, int y) { return std::size_t(x) * Y + y; };
  auto act = [&](int x, int y) { return c.permx[at(x, y)] > 0; };
  tx.assign(std::size_t(X) * (Y - 1), 0.0);
  tz.assign(std::size_t(X) * Y, 0.0);
  for (int x = 0; x < X; ++x)
    for (int y = 0; y + 1 < Y; ++y)
      if (act(x, y) && act(x, y + 1)) {
        const double ho =
            2 * kPi * (c.permx[at(x, y)] * kMdToM2) * c.dz[x] / std::log(r.out[y] / r.node[y]);
        const double hi = 2 * kPi * (c.permx[at(x, y + 1)] * kMdToM2) * c.dz[x] /
                          std::log(r.node[y + 1] / r.in[y + 1]);
        tx[std::size_t(x) * (Y - 1) + y] = 1 / (1 / ho + 1 / hi) / mu;
      }
  for (int x = 0; x + 1 < X; ++x)
    for (int y = 0; y < Y; ++y)
      if (act(x, y) && act(x + 1, y)) {
        const double h0 = (c.permz[at(x, y)] * kMdToM2) / (c.dz[x] / 2);
        const double h1 = (c.permz[at(x + 1, y)] * kMdToM2) / (c.dz[x + 1] / 2);
        const double v = area[y] / (1 / h0 + 1 / h1) / mu;
        tz[at(x, y)] = std::isnan(v) ? 0.0 : v;
      }
}

std::vector<double> rz_solve(const ReservoirCase& c, const PressureProperties& p,
                             const std::vector<double>& times_days, int substeps, int first_steps) {
  require_whole(c);
  const int X = c.nx, Y = c.ny;
  const std::size_t XX = std::size_t(X) * X;
  const Radii r = radii(c.dr);
  std::vector<double> area(Y);
  for (int y = 0; y < Y; ++y) area[y] = kPi * (r.out[y] * r.out[y] - r.in[y] * r.in[y]);
  auto at = [&](int x, int y) { return std::size_t(x) * Y + y; };
  auto act = [&](int x, int y) { return c.permx[at(x, y)] > 0; };
  const double mu = p.mu_w, ct = p.c_t;
  // Radial transmissibilities tx (X, Y-1), vertical tz (X-1, Y), storage (X, Y), well factors.
  std::vector<double> tx, tz;
  rz_transmissibilities(c, r, area, mu, tx, tz);
  std::vector<double> stor(std::size_t(X) * Y), cf(X, 0.0);
  for (int x = 0; x < X; ++x)
    for (int y = 0; y < Y; ++y)
      stor[at(x, y)] = act(x, y) ? c.poro[at(x, y)] * c.dz[x] * area[y] * ct : 1.0;
  const double log_w = std::log(r.node[0] / kWellRadius);
  for (int x = 0; x < X; ++x)
    if (c.perforated[x] != 0 && act(x, 0))
      cf[x] = 2 * kPi * (c.permx[at(x, 0)] * kMdToM2) * c.dz[x] / log_w / mu;
  const double cfs = std::max(np_sum(cf), 1e-300);
  // The constant part of each column's block (Y blocks of X x X).
  std::vector<double> base(std::size_t(Y) * XX, 0.0);
  for (int y = 0; y < Y; ++y) {
    double* B = &base[std::size_t(y) * XX];
    for (int x = 0; x < X; ++x) {
      double d = 0.0;
      if (y + 1 < Y) d += tx[std::size_t(x) * (Y - 1) + y];
      if (y > 0) d += tx[std::size_t(x) * (Y - 1) + y - 1];
      if (x + 1 < X) d += tz[at(x, y)];
      if (x > 0) d += tz[at(x - 1, y)];
      B[std::size_t(x) * X + x] = d;
    }
    for (int x = 0; x + 1 < X; ++x) {
      B[std::size_t(x) * X + x + 1] -= tz[at(x, y)];
      B[std::size_t(x + 1) * X + x] -= tz[at(x, y)];
    }
  }
  // The well node eliminated: + diag(cf) - cf cf^T / sum cf in column 0, source q cf / sum cf.
  for (int a = 0; a < X; ++a)
    for (int b = 0; b < X; ++b)
      base[std::size_t(a) * X + b] += (a == b ? cf[a] : 0.0) - cf[a] * cf[b] / cfs;
  std::vector<double> src(std::size_t(X) * Y, 0.0);
  for (int x = 0; x < X; ++x) src[at(x, 0)] = p.q * cf[x] / cfs;

  const std::vector<double> t_rep = report_times_s(times_days);
  const int T = int(t_rep.size());
  std::vector<double> steps = geomspace(t_rep[0] / 1e3, t_rep[0], first_steps);
  for (int k = 1; k < T; ++k) {
    const auto g = geomspace(t_rep[k - 1], t_rep[k], substeps + 1);
    steps.insert(steps.end(), g.begin() + 1, g.end());
  }
  std::vector<double> pres(std::size_t(X) * Y, 0.0), out(std::size_t(T) * X * Y, 0.0);
  ColumnElimination solver(X, Y);
  std::vector<double> xs;
  double t_now = 0.0;
  int k_rep = 0;
  for (double tn : steps) {
    const double dt = tn - t_now;
    solver.solve(
        tx,
        [&](int j, std::vector<double>& M, std::vector<double>& rj) {
          std::copy(&base[std::size_t(j) * XX], &base[std::size_t(j) * XX] + XX, M.begin());
          for (int x = 0; x < X; ++x) {
            M[std::size_t(x) * X + x] += stor[at(x, j)] / dt;
            rj[x] = stor[at(x, j)] / dt * pres[at(x, j)] + src[at(x, j)];
          }
        },
        xs);
    for (int x = 0; x < X; ++x)
      for (int y = 0; y < Y; ++y) pres[at(x, y)] = act(x, y) ? xs[std::size_t(y) * X + x] : 0.0;
    t_now = tn;
    if (k_rep < T && std::abs(tn - t_rep[k_rep]) <= 1e-9 * t_rep[k_rep]) {
      for (std::size_t i = 0; i < pres.size(); ++i)
        out[std::size_t(k_rep) * X * Y + i] = pres[i] / kBar;
      ++k_rep;
    }
  }
  return out;
}

std::vector<double> two_phase(const ReservoirCase& c, const PressureProperties& p,
                              const std::vector<double>& times_days) {
  require_whole(c);
  const int Y = c.ny, n = kSaturationSamples;
  const Radii r = radii(c.dr);
  const double swi = c.swi, lam = c.vg_lambda;
  // sg = linspace(0, 1 - swi, n + 1)[1:], and the fractional flow f and its gradient there.
  const double step = (1.0 - swi) / double(n);
  std::vector<double> sg(n), f(n), df(n);
  for (int i = 0; i < n; ++i) sg[i] = i + 1 == n ? 1.0 - swi : double(i + 1) * step;
  for (int i = 0; i < n; ++i) {
    double krg, krw;
    rel_perms(sg[i], swi, lam, krg, krw);
    const double lg = krg / p.mu_g, lw = krw / p.mu_w;
    f[i] = lg / (lg + lw);
  }
  // numpy.gradient(f, sg): second order inside, first order at the ends, non-uniform unless
  // every spacing is the same.
  std::vector<double> dx(n - 1);
  bool uniform = true;
  for (int i = 0; i + 1 < n; ++i) {
    dx[i] = sg[i + 1] - sg[i];
    uniform = uniform && dx[i] == dx[0];
  }
  for (int i = 1; i + 1 < n; ++i) {
    if (uniform) {
      df[i] = (f[i + 1] - f[i - 1]) / (2. * dx[0]);
    } else {
      const double dx1 = dx[i - 1], dx2 = dx[i];
      const double a = -(dx2) / (dx1 * (dx1 + dx2));
      const double b = (dx2 - dx1) / (dx1 * dx2);
      const double cc = dx1 / (dx2 * (dx1 + dx2));
      df[i] = a * f[i - 1] + b * f[i] + cc * f[i + 1];
    }
  }
  df[0] = (f[1] - f[0]) / dx[0];
  df[n - 1] = (f[n - 1] - f[n - 2]) / dx[n - 2];
  // The Welge tangent (the front saturation), then r^2 / a behind it, decreasing in S.
  int i_f = 0;
  for (int i = 1; i < n; ++i)
    if (f[i] / sg[i] > f[i_f] / sg[i_f]) i_f = i;
  const int nb = n - i_f;
  std::vector<double> dfb(nb);
  for (int i = 0; i < nb; ++i) {
    dfb[i] = std::max(df[i_f + i], 0.0);
    if (i > 0) dfb[i] = std::min(dfb[i], dfb[i - 1]);
  }
  std::vector<double> wlog(Y - 1), r2_out(Y), r2_in(Y);
  for (int y = 0; y + 1 < Y; ++y) wlog[y] = std::log(r.node[y + 1] / r.node[y]);
  for (int y = 0; y < Y; ++y) r2_out[y] = r.out[y] * r.out[y], r2_in[y] = r.in[y] * r.in[y];
  const std::vector<double> t = report_times_s(times_days);
  std::vector<double> out(t.size());
  std::vector<double> xp(nb + 2), yp(nb + 2), cum(nb + 2), zo(Y), zi(Y), terms(Y - 1);
  for (std::size_t k = 0; k < t.size(); ++k) {
    const double a = p.q * t[k] / (kPi * p.h_perf * p.phi_perf);
    const double r2_front = a * f[i_f] / sg[i_f];
    // The saturation against r^2 from the well to the front, and its cumulative integral.
    xp[0] = 0.0, yp[0] = sg[n - 1];
    for (int i = 0; i < nb; ++i) xp[1 + i] = a * dfb[nb - 1 - i], yp[1 + i] = sg[n - 1 - i];
    xp[nb + 1] = r2_front, yp[nb + 1] = sg[i_f];
    cum[0] = 0.0;
    for (int i = 0; i + 1 < nb + 2; ++i)
      cum[i + 1] = cum[i] + 0.5 * (yp[i + 1] + yp[i]) * (xp[i + 1] - xp[i]);
    for (int y = 0; y < Y; ++y)
      zo[y] = std::min(r2_out[y], r2_front), zi[y] = std::min(r2_in[y], r2_front);
    const auto io = np_interp(zo, xp, cum), ii = np_interp(zi, xp, cum);
    for (int y = 0; y + 1 < Y; ++y) {
      const double sbar = (io[y] - ii[y]) / (r2_out[y] - r2_in[y]);
      double krg, krw;
      rel_perms(sbar, swi, lam, krg, krw);
      const double l = krg / p.mu_g + krw / p.mu_w;
      terms[y] = wlog[y] * (1.0 / l - p.mu_w);
    }
    out[k] = p.q / (2 * kPi * p.kh_perf) * np_sum(terms) / kBar;
  }
  return out;
}

// physics.py rz_implicit_two_phase_dp_bar for one case: the r-z system of rz_solve stepped
// once per report interval, each step iterating pressure (connections at their upstream cells'
// total mobility) and upstream implicit saturations, with the injected volume at the well's
// pressure and a sink for the CO2 that dissolves. Returns (T, X, Y) bar.
constexpr double kDissolvedMassFraction = 0.05;  // physics.DISSOLVED_MASS_FRACTION
constexpr double kDissolvedDensity = 1190.0;     // physics.DISSOLVED_DENSITY [kg/m3]
constexpr double kSweptSaturation = 1e-6;        // physics.SWEPT_SATURATION

// physics.DISSOLUTION_MODELS: the gas saturation above which a cell's brine dissolves CO2, and
// whether only the brine's share 1 - S of its pore volume does.
struct DissolutionRule {
  double threshold;
  bool in_brine;
};
DissolutionRule dissolution_rule(Dissolution d) {
  switch (d) {
    case Dissolution::kBrine:
      return {0.05, true};
    case Dissolution::kPoreVolume:
      break;
  }
  return {kSweptSaturation, false};
}
constexpr int kImplicitIterations = 3, kBisections = 22, kSweeps = 2;

// The r-z system both implicit solves step (physics.py _rz_geometry): brine transmissibilities
// tx0 (X, Y-1) and tz0 (X-1 rows of Y), pore volume and storage (X, Y; 1 and c_t in inactive
// cells, which the solves keep at 0), the well's connections cf0 and its perforated layers (X).
struct RzGeometry {
  std::vector<double> tx0, tz0, pv, stor, cf0, perf;
  double nperf = 1.0;  // the perforated layers' count, at least 1
};
RzGeometry rz_geometry(const ReservoirCase& c, const PressureProperties& p) {
  const int X = c.nx, Y = c.ny;
  const Radii r = radii(c.dr);
  std::vector<double> area(Y);
  for (int y = 0; y < Y; ++y) area[y] = kPi * (r.out[y] * r.out[y] - r.in[y] * r.in[y]);
  auto at = [&](int x, int y) { return std::size_t(x) * Y + y; };
  auto act = [&](int x, int y) { return c.permx[at(x, y)] > 0; };
  RzGeometry g;
  rz_transmissibilities(c, r, area, p.mu_w, g.tx0, g.tz0);
  g.pv.resize(std::size_t(X) * Y);
  g.stor.resize(std::size_t(X) * Y);
  for (int x = 0; x < X; ++x)
    for (int y = 0; y < Y; ++y) {
      g.pv[at(x, y)] = act(x, y) ? c.poro[at(x, y)] * c.dz[x] * area[y] : 1.0;
      g.stor[at(x, y)] = g.pv[at(x, y)] * p.c_t;
    }
  g.cf0.assign(X, 0.0);
  g.perf.assign(X, 0.0);
  const double log_w = std::log(r.node[0] / kWellRadius);
  for (int x = 0; x < X; ++x)
    if (c.perforated[x] != 0 && act(x, 0)) {
      g.cf0[x] = 2 * kPi * (c.permx[at(x, 0)] * kMdToM2) * c.dz[x] / log_w / p.mu_w;
      g.perf[x] = 1.0;
    }
  g.nperf = std::max(np_sum(g.perf), 1.0);
  return g;
}

// The injected CO2's volumes at time t (physics.py `volumes`): vg, its mass as gas at the well's
// mean buildup over the perforations; vd, what the CO2 dissolved in the brine of the cells
// holding gas frees of it; wts (X, Y), those cells' shares of their pore volume, which the
// dissolution sink follows. Which cells and how much of them dissolve: `d`.
void injected_volumes(const ReservoirCase& c, const PressureProperties& p, const RzGeometry& g,
                      double t, const std::vector<double>& pres, const std::vector<double>& s,
                      double& vg, double& vd, std::vector<double>& wts,
                      Dissolution d = Dissolution::kPoreVolume) {
  const DissolutionRule rule = dissolution_rule(d);
  const int X = c.nx, Y = c.ny;
  const std::size_t XY = std::size_t(X) * Y;
  auto at = [&](int x, int y) { return std::size_t(x) * Y + y; };
  const double mdot = c.rate_mt_per_year * 1e9 / kSecondsPerYear;
  const double mass = mdot * t;
  std::vector<double> tmp(X), swept(XY);
  for (int x = 0; x < X; ++x) tmp[x] = pres[at(x, 0)] * g.perf[x];
  const double dp_well = np_sum(tmp) / g.nperf / kBar;
  const double rho = co2_density_kg_m3(c.temperature_c, p.p_perf + dp_well);
  for (int x = 0; x < X; ++x)
    for (int y = 0; y < Y; ++y)
      swept[at(x, y)] = g.pv[at(x, y)] * (s[at(x, y)] > rule.threshold ? 1.0 : 0.0) *
                        (c.permx[at(x, y)] > 0 ? 1.0 : 0.0) *
                        (rule.in_brine ? 1.0 - s[at(x, y)] : 1.0);
  const double total = np_sum(swept);
  const double m_dis = std::min(kDissolvedMassFraction * 1000.0 * total, 0.9 * mass);
  vg = mass / rho;
  vd = m_dis * (1.0 / rho - 1.0 / kDissolvedDensity);
  wts.resize(XY);
  for (std::size_t i = 0; i < XY; ++i) wts[i] = swept[i] / std::max(total, 1e-30);
}

std::vector<double> implicit_two_phase(const ReservoirCase& c, const PressureProperties& p,
                                       const std::vector<double>& times_days) {
  require_whole(c);
  const int X = c.nx, Y = c.ny;
  const std::size_t XY = std::size_t(X) * Y;
  const RzGeometry g = rz_geometry(c, p);
  const std::vector<double>&tx0 = g.tx0, &tz0 = g.tz0, &pv = g.pv, &stor = g.stor, &cf0 = g.cf0;
  auto at = [&](int x, int y) { return std::size_t(x) * Y + y; };
  auto act = [&](int x, int y) { return c.permx[at(x, y)] > 0; };
  const double mu_w = p.mu_w, mu_g = p.mu_g, swi = c.swi, lam = c.vg_lambda;
  const double smax = 1.0 - swi;
  // (total mobility relative to brine's, gas fractional flow) at gas saturation s.
  auto mobility = [&](double s, double& frac) {
    double krg, krw;
    rel_perms(s, swi, lam, krg, krw);
    const double lg = krg / mu_g, lw = krw / mu_w;
    frac = lg / (lg + lw);
    return (lg + lw) * mu_w;
  };
  auto frac_of = [&](double s) {
    double f;
    mobility(s, f);
    return f;
  };

  // One implicit pressure step (physics.py _rz_implicit_step): pn (X, Y) and well rates qw (X).
  std::vector<double> tx(tx0.size()), tz(tz0.size()), cf(X), pn(XY), qw(X);
  ColumnElimination solver(X, Y);
  std::vector<double> xs, tmp(X);
  auto step = [&](double dt, const std::vector<double>& pres, double q,
                  const std::vector<double>& sink) {
    const double cfs = std::max(np_sum(cf), 1e-300);
    solver.solve(
        tx,
        [&](int j, std::vector<double>& M, std::vector<double>& rj) {
          implicit_step_block(j, X, Y, tx, tz, stor, dt, pres, sink, q, cf, cfs, M, rj);
        },
        xs);
    well_and_cells(xs, cf, cfs, q, nullptr, c.permx, Y, tmp, qw, pn);
  };

  // Upstream implicit saturations column by column (physics.py transport).
  std::vector<double> fx(std::size_t(X) * (Y - 1)), fz(XY), sn(XY);
  std::vector<double> inflow(X), fin(X), fj(X);
  TransportColumn column(X);
  auto &out_r = column.out_r, &out_v = column.out_v, &down = column.down, &up = column.up,
       &sj = column.sj, &so = column.so;
  auto transport = [&](const std::vector<double>& s_old, double dt) {
    std::fill(sn.begin(), sn.end(), 0.0);
    for (int x = 0; x < X; ++x) inflow[x] = std::max(qw[x], 0.0);
    for (int j = 0; j < Y; ++j) {
      if (!TransportColumn::reached(j, Y, inflow, s_old)) break;
      column.begin(j, Y, fx, fz, s_old);
      for (int sweep = 0; sweep < kSweeps; ++sweep) {
        fin = inflow;
        if (sweep) {
          for (int x = 0; x < X; ++x) fj[x] = frac_of(sj[x]);
          for (int x = 1; x < X; ++x) fin[x] += down[x - 1] * fj[x - 1];
          for (int x = 0; x + 1 < X; ++x) fin[x] += up[x] * fj[x + 1];
        }
        for (int x = 0; x < X; ++x) {
          // Zero in an inactive cell and in one that holds no CO2 and receives none.
          const bool none = so[x] <= 0 && fin[x] * dt <= 1e-9 * pv[at(x, j)];
          sj[x] = 0.0;
          if (!act(x, j) || none) continue;
          const double a = pv[at(x, j)] / dt;
          const double out = out_r[x] + out_v[x];
          double lo = 0.0, hi = smax;
          for (int b = 0; b < kBisections; ++b) {
            const double mid = 0.5 * (lo + hi);
            if (a * (mid - so[x]) + out * frac_of(mid) - fin[x] > 0)
              hi = mid;
            else
              lo = mid;
          }
          sj[x] = 0.5 * (lo + hi);
        }
      }
      for (int x = 0; x < X; ++x) {
        sn[at(x, j)] = sj[x];
        inflow[x] = out_r[x] * frac_of(sj[x]);
      }
    }
  };

  std::vector<double> wts;
  auto volumes = [&](double t, const std::vector<double>& pres, const std::vector<double>& s,
                     double& vg,
                     double& vd) { injected_volumes(c, p, g, t, pres, s, vg, vd, wts); };

  const std::vector<double> t_rep = report_times_s(times_days);
  const int T = int(t_rep.size());
  std::vector<double> pres(XY, 0.0), s(XY, 0.0), out(std::size_t(T) * XY, 0.0);
  std::vector<double> mob(XY), sink(XY), s_cur(XY);
  double v_gas = 0.0, v_dis = 0.0, q = p.q, t_now = 0.0;
  auto set_mobilities = [&](const std::vector<double>& sat) {
    double f;
    for (std::size_t i = 0; i < XY; ++i) mob[i] = mobility(sat[i], f);
    for (int x = 0; x < X; ++x)
      for (int y = 0; y + 1 < Y; ++y)
        tx[std::size_t(x) * (Y - 1) + y] = tx0[std::size_t(x) * (Y - 1) + y] * mob[at(x, y)];
    for (int x = 0; x + 1 < X; ++x)
      for (int y = 0; y < Y; ++y)
        tz[at(x, y)] = tz0[at(x, y)] * 0.5 * (mob[at(x, y)] + mob[at(x + 1, y)]);
    for (int x = 0; x < X; ++x) cf[x] = cf0[x] * mob[at(x, 0)];
  };
  for (int k = 0; k < T; ++k) {
    const double tn = t_rep[k], dt = tn - t_now;
    set_mobilities(s);
    s_cur = s;
    std::fill(sink.begin(), sink.end(), 0.0);
    for (int it = 0; it <= kImplicitIterations; ++it) {
      step(dt, pres, q, sink);
      if (it == kImplicitIterations) break;
      for (int x = 0; x < X; ++x)
        for (int y = 0; y + 1 < Y; ++y)
          fx[std::size_t(x) * (Y - 1) + y] =
              std::max(tx[std::size_t(x) * (Y - 1) + y] * (pn[at(x, y)] - pn[at(x, y + 1)]), 0.0);
      for (int x = 0; x + 1 < X; ++x)
        for (int y = 0; y < Y; ++y) fz[at(x, y)] = tz[at(x, y)] * (pn[at(x, y)] - pn[at(x + 1, y)]);
      transport(s, dt);
      s_cur = sn;
      set_mobilities(s_cur);
      double vg, vd;
      volumes(tn, pn, s_cur, vg, vd);
      relax_injection(vg - v_gas, vd - v_dis, dt, wts, q, sink);
    }
    volumes(tn, pn, s_cur, v_gas, v_dis);
    pres = pn;
    s = s_cur;
    for (std::size_t i = 0; i < XY; ++i) out[std::size_t(k) * XY + i] = pres[i] / kBar;
    t_now = tn;
  }
  return out;
}

// physics.py rz_gravity_two_phase_dp_bar for one case: implicit_two_phase with buoyancy.
// Brine's potential difference between two layers is their buildup's (the buildup is over the
// brine's hydrostatic pressure); CO2's falls short of it by (rho_brine - rho_CO2) g times the
// centres' distance, which lets CO2 rise against brine's flow (counter-current).
constexpr int kGravitySweeps = 12;  // CO2 crosses up to 12 layers a step (physics.py `sweeps`)

// The two buoyancy terms of a case: head[x] (X - 1), the (rho_brine - rho_CO2) g distance
// between layers x and x + 1 [Pa]; h_well[x] (X), how much less than at the perforations' mean
// depth an injecting well's CO2-filled bore pushes on connection x [Pa] (0 when it does not
// inject: its bore then holds brine, whose gradient is the reference's).
struct Buoyancy {
  std::vector<double> head, h_well;
};
Buoyancy buoyancy(const ReservoirCase& c, const PressureProperties& p,
                  const std::vector<double>& perf, double gravity) {
  const int X = c.nx;
  const double drho_g = (brine_density_kg_m3(c.temperature_c, p.p_perf) - p.rho_co2) * gravity;
  Buoyancy b;
  b.head.resize(std::size_t(X) - 1);
  for (int x = 0; x + 1 < X; ++x) b.head[x] = drho_g * 0.5 * (c.dz[x] + c.dz[x + 1]);
  std::vector<double> zc(X), zp(X);
  double z = 0.0;
  for (int x = 0; x < X; ++x) {
    z += c.dz[x];
    zc[x] = z - c.dz[x] / 2.0;
    zp[x] = zc[x] * perf[x];
  }
  const double z_ref = np_sum(zp) / std::max(np_sum(perf), 1.0);
  const double injecting = c.rate_mt_per_year > 0 ? 1.0 : 0.0;
  b.h_well.resize(X);
  for (int x = 0; x < X; ++x) b.h_well[x] = -(drho_g * injecting) * (zc[x] - z_ref);
  return b;
}

// The buildup [bar] (T, X, Y); with `saturation`, also the gas saturation there (T, X, Y).
std::vector<double> gravity_two_phase(const ReservoirCase& c, const PressureProperties& p,
                                      const std::vector<double>& times_days, double gravity,
                                      Dissolution dissolution,
                                      std::vector<double>* saturation = nullptr) {
  require_whole(c);
  const int X = c.nx, Y = c.ny;
  const std::size_t XY = std::size_t(X) * Y;
  const RzGeometry g = rz_geometry(c, p);
  const std::vector<double>&tx0 = g.tx0, &tz0 = g.tz0, &pv = g.pv, &stor = g.stor, &cf0 = g.cf0;
  auto at = [&](int x, int y) { return std::size_t(x) * Y + y; };
  auto act = [&](int x, int y) { return c.permx[at(x, y)] > 0; };
  auto txi = [&](int x, int y) { return std::size_t(x) * (Y - 1) + y; };
  const double mu_w = p.mu_w, mu_g = p.mu_g, swi = c.swi, lam = c.vg_lambda;
  const double smax = 1.0 - swi;
  const Buoyancy b = buoyancy(c, p, g.perf, gravity);
  // Each phase's mobility relative to brine's viscosity at gas saturation s: krw, and mg (CO2's,
  // krg mu_w / mu_g); CO2's fractional flow is mg / (mg + krw).
  auto phases = [&](double s, double& krw, double& mg) {
    double krg;
    rel_perms(s, swi, lam, krg, krw);
    mg = krg * mu_w / mu_g;
  };

  // One implicit pressure step with the well's connections at p_well + h_well and the CO2's
  // buoyant fluxes (src) as sources: pn (X, Y) and well rates qw (X). The well node is
  // eliminated with the rate less sum cf h_well, and cf h_well enters each connected cell.
  std::vector<double> tx(tx0.size()), tz(tz0.size()), cf(X), pn(XY), qw(X), src(XY), tot(XY);
  ColumnElimination solver(X, Y);
  std::vector<double> xs, tmp(X);
  auto step = [&](double dt, const std::vector<double>& pres, double q,
                  const std::vector<double>& sink) {
    const double cfs = std::max(np_sum(cf), 1e-300);
    for (int x = 0; x < X; ++x) tmp[x] = cf[x] * b.h_well[x];
    const double qh = q - np_sum(tmp);
    for (std::size_t i = 0; i < XY; ++i) tot[i] = sink[i] - src[i];
    for (int x = 0; x < X; ++x) tot[at(x, 0)] -= tmp[x];
    solver.solve(
        tx,
        [&](int j, std::vector<double>& M, std::vector<double>& rj) {
          implicit_step_block(j, X, Y, tx, tz, stor, dt, pres, tot, qh, cf, cfs, M, rj);
        },
        xs);
    well_and_cells(xs, cf, cfs, qh, &b.h_well, c.permx, Y, tmp, qw, pn);
  };

  // Upstream implicit saturations column by column, outward; within a column CO2 moves
  // vertically by its own potential (wz, transmissibility x potential difference, downward
  // positive) at its upstream cell's mobility, the vertical inflows taken from the sweep before.
  std::vector<double> fx(std::size_t(X) * (Y - 1)), wz(XY), sn(XY);
  std::vector<double> inflow(X), fin(X), mgj(X);
  TransportColumn column(X);
  auto &out_r = column.out_r, &cout = column.out_v, &down = column.down, &up = column.up,
       &sj = column.sj, &so = column.so;
  auto frac_of = [&](double s) {
    double krw, mg;
    phases(s, krw, mg);
    return mg / (mg + krw);
  };
  // The saturation of cell (x, j) that balances its CO2: the residual rises with saturation.
  // Zero in an inactive cell and in one that holds no CO2 and receives none, without bisecting.
  auto balance = [&](int x, int j, double dt) {
    const bool none = so[x] <= 0 && fin[x] * dt <= 1e-9 * pv[at(x, j)];
    if (!act(x, j) || none) return 0.0;
    const double a = pv[at(x, j)] / dt;
    double lo = 0.0, hi = smax;
    for (int k = 0; k < kBisections; ++k) {
      const double mid = 0.5 * (lo + hi);
      double krw, mg;
      phases(mid, krw, mg);
      if (a * (mid - so[x]) + out_r[x] * (mg / (mg + krw)) + cout[x] * mg - fin[x] > 0)
        hi = mid;
      else
        lo = mid;
    }
    return 0.5 * (lo + hi);
  };
  auto transport = [&](const std::vector<double>& s_old, double dt) {
    std::fill(sn.begin(), sn.end(), 0.0);
    for (int x = 0; x < X; ++x) inflow[x] = std::max(qw[x], 0.0);
    for (int j = 0; j < Y; ++j) {
      if (!TransportColumn::reached(j, Y, inflow, s_old)) break;
      column.begin(j, Y, fx, wz, s_old);
      for (int sweep = 0; sweep < kGravitySweeps; ++sweep) {
        fin = inflow;
        if (sweep) {
          double krw;
          for (int x = 0; x < X; ++x) phases(sj[x], krw, mgj[x]);
          for (int x = 1; x < X; ++x) fin[x] += down[x - 1] * mgj[x - 1];
          for (int x = 0; x + 1 < X; ++x) fin[x] += up[x] * mgj[x + 1];
        }
        bool same = sweep > 0;
        for (int x = 0; x < X; ++x) {
          const double sx = balance(x, j, dt);
          same = same && sx == sj[x];
          sj[x] = sx;
        }
        // A sweep after the first that changed nothing has reached the sweeps' fixed point
        // (the next one reads the same saturations): the remaining ones would repeat it.
        if (same) break;
      }
      for (int x = 0; x < X; ++x) {
        sn[at(x, j)] = sj[x];
        inflow[x] = out_r[x] * frac_of(sj[x]);
      }
    }
  };

  std::vector<double> wts;
  auto volumes = [&](double t, const std::vector<double>& pres, const std::vector<double>& s,
                     double& vg, double& vd) {
    injected_volumes(c, p, g, t, pres, s, vg, vd, wts, dissolution);
  };

  std::vector<double> krw(XY), mg(XY), buoy(XY);
  auto set_phases = [&](const std::vector<double>& sat) {
    for (std::size_t i = 0; i < XY; ++i) phases(sat[i], krw[i], mg[i]);
  };
  // The connections' mobilities for pressures pprev: radial ones and the well's at the inner
  // cell's total mobility, vertical ones at each phase's upstream cell (brine's in brine's
  // potential, CO2's in CO2's), whose CO2 buoyancy becomes the source src.
  auto set_connections = [&](const std::vector<double>& pprev) {
    for (int x = 0; x < X; ++x)
      for (int y = 0; y + 1 < Y; ++y)
        tx[txi(x, y)] = tx0[txi(x, y)] * (krw[at(x, y)] + mg[at(x, y)]);
    for (int x = 0; x < X; ++x) cf[x] = cf0[x] * (krw[at(x, 0)] + mg[at(x, 0)]);
    for (int x = 0; x + 1 < X; ++x)
      for (int y = 0; y < Y; ++y) {
        const double dpv = pprev[at(x, y)] - pprev[at(x + 1, y)];
        const double mw_up = dpv > 0 ? krw[at(x, y)] : krw[at(x + 1, y)];
        const double mg_up = dpv - b.head[x] > 0 ? mg[at(x, y)] : mg[at(x + 1, y)];
        buoy[at(x, y)] = tz0[at(x, y)] * mg_up * b.head[x];  // CO2's buoyant flux, upward
        tz[at(x, y)] = tz0[at(x, y)] * (mw_up + mg_up);
      }
    std::fill(src.begin(), src.end(), 0.0);
    for (int x = 0; x + 1 < X; ++x)
      for (int y = 0; y < Y; ++y) src[at(x, y)] += buoy[at(x, y)];
    for (int x = 0; x + 1 < X; ++x)
      for (int y = 0; y < Y; ++y) src[at(x + 1, y)] -= buoy[at(x, y)];
  };

  const std::vector<double> t_rep = report_times_s(times_days);
  const int T = int(t_rep.size());
  std::vector<double> pres(XY, 0.0), s(XY, 0.0), out(std::size_t(T) * XY, 0.0);
  if (saturation) saturation->assign(std::size_t(T) * XY, 0.0);
  std::vector<double> sink(XY), s_cur(XY), pprev(XY);
  double v_gas = 0.0, v_dis = 0.0, q = p.q, t_now = 0.0;
  for (int k = 0; k < T; ++k) {
    const double tn = t_rep[k], dt = tn - t_now;
    set_phases(s);
    s_cur = s;
    pprev = pres;
    std::fill(sink.begin(), sink.end(), 0.0);
    for (int it = 0; it <= kImplicitIterations; ++it) {
      set_connections(pprev);
      step(dt, pres, q, sink);
      if (it == kImplicitIterations) break;
      for (int x = 0; x < X; ++x)
        for (int y = 0; y + 1 < Y; ++y)
          fx[txi(x, y)] = std::max(tx[txi(x, y)] * (pn[at(x, y)] - pn[at(x, y + 1)]), 0.0);
      for (int x = 0; x + 1 < X; ++x)
        for (int y = 0; y < Y; ++y)
          wz[at(x, y)] = tz0[at(x, y)] * ((pn[at(x, y)] - pn[at(x + 1, y)]) - b.head[x]);
      transport(s, dt);
      s_cur = sn;
      set_phases(s_cur);
      pprev = pn;
      double vg, vd;
      volumes(tn, pn, s_cur, vg, vd);
      relax_injection(vg - v_gas, vd - v_dis, dt, wts, q, sink);
    }
    volumes(tn, pn, s_cur, v_gas, v_dis);
    pres = pn;
    s = s_cur;
    for (std::size_t i = 0; i < XY; ++i) out[std::size_t(k) * XY + i] = pres[i] / kBar;
    if (saturation) std::copy(s.begin(), s.end(), saturation->begin() + std::size_t(k) * XY);
    t_now = tn;
  }
  return out;
}
}  // namespace

double theis_max_dp_bar(const ReservoirCase& c) { return theis_from(pressure_properties(c)); }

std::vector<double> rz_single_phase_dp_bar(const ReservoirCase& c,
                                           const std::vector<double>& times_days, int substeps,
                                           int first_steps) {
  return rz_solve(c, pressure_properties(c), times_days, substeps, first_steps);
}

std::vector<double> grid_two_phase_correction_bar(const ReservoirCase& c,
                                                  const std::vector<double>& times_days) {
  return two_phase(c, pressure_properties(c), times_days);
}

std::vector<double> rz_implicit_two_phase_dp_bar(const ReservoirCase& c,
                                                 const std::vector<double>& times_days) {
  return implicit_two_phase(c, pressure_properties(c), times_days);
}

double rz_implicit_two_phase_max_dp_bar(const ReservoirCase& c,
                                        const std::vector<double>& times_days) {
  const std::vector<double> f = rz_implicit_two_phase_dp_bar(c, times_days);
  const std::size_t X = std::size_t(c.nx), Y = std::size_t(c.ny), T = f.size() / (X * Y);
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t x = 0; x < X; ++x) m = std::max(m, f[(t * X + x) * Y]);
  return m;
}

double rz_implicit_first_report_dp_bar(const ReservoirCase& c,
                                       const std::vector<double>& times_days) {
  // A step reads the steps before it only: the first report's values are the full solve's.
  const std::vector<double> first(
      1, times_days.empty() ? paper_times_days(kPaperReportTimes).front() : times_days.front());
  const std::vector<double> f = rz_implicit_two_phase_dp_bar(c, first);
  const std::size_t X = std::size_t(c.nx), Y = std::size_t(c.ny);
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t x = 0; x < X; ++x) m = std::max(m, f[x * Y]);
  return m;
}

std::vector<double> rz_gravity_two_phase_dp_bar(const ReservoirCase& c,
                                                const std::vector<double>& times_days,
                                                double gravity, Dissolution dissolution) {
  return gravity_two_phase(c, pressure_properties(c), times_days, gravity, dissolution);
}

std::vector<double> estimate_times_days(const ReservoirCase& c,
                                        const std::vector<double>& times_days) {
  auto same_to_float = [&](const std::vector<double>& a) {
    if (a.size() != times_days.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (float(a[i]) != float(times_days[i])) return false;
    return true;
  };
  if (!c.times_days.empty() && same_to_float(c.times_days)) return c.times_days;
  std::vector<double> paper = paper_times_days(int(times_days.size()));
  if (same_to_float(paper)) return paper;
  return times_days;
}

GravitySummary rz_gravity_two_phase_summary(const ReservoirCase& c,
                                            const std::vector<double>& times_days,
                                            Dissolution dissolution) {
  std::vector<double> sat;
  const std::vector<double> f =
      gravity_two_phase(c, pressure_properties(c), times_days, kStandardGravity, dissolution, &sat);
  const std::size_t X = std::size_t(c.nx), Y = std::size_t(c.ny), T = f.size() / (X * Y);
  GravitySummary s;
  s.plume_radius_m = plume_front_radii(c, sat, kGravityPlumeThreshold);
  s.max_bar = -std::numeric_limits<double>::infinity();
  s.envelope_bar.assign(Y, -std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < T * X; ++i)
    for (std::size_t y = 0; y < Y; ++y)
      s.envelope_bar[y] = std::max(s.envelope_bar[y], f[i * Y + y]);
  for (std::size_t t = 0; t < T; ++t) {
    double column = -std::numeric_limits<double>::infinity();  // over the well column's layers
    for (std::size_t x = 0; x < X; ++x) column = std::max(column, f[(t * X + x) * Y]);
    if (t == 0) s.first_report_bar = column;
    if (column > s.max_bar) {
      s.max_bar = column;
      s.max_day = times_days[t];
    }
  }
  return s;
}

double rz_gravity_two_phase_max_dp_bar(const ReservoirCase& c,
                                       const std::vector<double>& times_days) {
  return rz_gravity_two_phase_summary(c, times_days).max_bar;
}

namespace {
MaxDpPhysics compute_max_dp_physics_features(const ReservoirCase& c,
                                             const std::vector<double>& times_days) {
  const PressureProperties p = pressure_properties(c);
  const std::vector<double> rz = rz_solve(c, p, times_days, 4, 8);
  const std::vector<double> g2 = two_phase(c, p, times_days);
  const int X = c.nx, Y = c.ny, T = int(g2.size());
  std::vector<double> col0(T, -std::numeric_limits<double>::infinity());
  for (int t = 0; t < T; ++t)
    for (int x = 0; x < X; ++x) col0[t] = std::max(col0[t], rz[(std::size_t(t) * X + x) * Y]);
  double two = -std::numeric_limits<double>::infinity();
  for (int t = 0; t < T; ++t) two = std::max(two, std::max(col0[t] + g2[t], kTwoPhaseFloorBar));
  MaxDpPhysics m;
  m.rz_envelope_bar.assign(Y, -std::numeric_limits<double>::infinity());
  for (int t = 0; t < T; ++t)
    for (int x = 0; x < X; ++x)
      for (int y = 0; y < Y; ++y)
        m.rz_envelope_bar[y] = std::max(m.rz_envelope_bar[y], rz[(std::size_t(t) * X + x) * Y + y]);
  m.theis_bar = theis_from(p);
  m.features = {std::log(std::max(m.theis_bar, kFeatureFloorBar)),
                std::log(std::max(two, kFeatureFloorBar)),
                std::log(std::max(col0[0], kFeatureFloorBar))};
  return m;
}
}  // namespace

MaxDpPhysics max_dp_physics_features(const ReservoirCase& c,
                                     const std::vector<double>& times_days) {
  // Once a case in a process: the peak match and the KPI stage both read them.
  return max_dp_physics_memo().get(0, c, times_days,
                                   [&] { return compute_max_dp_physics_features(c, times_days); });
}

const std::vector<std::string>& max_dp_physics_feature_names() {
  static const std::vector<std::string> names = {
      "log_theis_max_dp_bar", "log_rz_two_phase_max_dp_bar", "log_rz_first_report_dp_bar"};
  return names;
}

}  // namespace ufno
