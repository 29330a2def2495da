#include "io/EclipseDeckWriter.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/InputError.hpp"
#include "io/CaseEncoding.hpp"

namespace ufno {

namespace {

// The fixed settings of python/ufno/data/cases.py (its module docstring gives the reasons).
constexpr double kDaysPerYear = 365.25;
constexpr double kCdarcy = 0.008527;  // metric Darcy constant
constexpr double kRockCompressibility = 4.5e-5;
constexpr double kPcEntryBar = 0.2, kPcMaxBar = 5.0;
constexpr double kBhpLimitBar = 700.0;
constexpr double kBrineGradient = 1000.0 * 9.80665 / 1e5;  // bar/m
constexpr int kSgofRows = 41;

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Values six to a line, as the generator writes them.
std::string value_lines(const std::vector<double>& v, const char* f) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += i % 6 ? " " : "\n";
    s += fmt(f, v[i]);
  }
  return s;
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  if (!f.flush()) throw InputError(p.string(), "", "cannot be written");
}

void write_include(const std::filesystem::path& p, const std::string& header, const char* keyword,
                   const std::vector<double>& v, const char* f) {
  write_file(p, header + keyword + "\n" + value_lines(v, f) + "\n/\n");
}

struct Radial {
  std::vector<double> inner, outer, node;
};

Radial radial(const ReservoirCase& c) {
  Radial r;
  double edge = kDeckWellRadiusM;
  for (int y = 0; y < c.ny; ++y) {
    r.inner.push_back(edge);
    edge += c.dr[y];
    r.outer.push_back(edge);
    const double a = r.inner[y], b = edge;
    // The radius whose steady (logarithmic) pressure equals the annulus' volume average.
    r.node.push_back(std::exp((b * b * std::log(b) - a * a * std::log(a)) / (b * b - a * a) - 0.5));
  }
  return r;
}

double theta_rad() { return kDeckThetaDeg * (M_PI / 180.0); }

// Rows (Sg, krg, krw, Pc) from Sg = 0 to 1 - SWI, cosine-spaced, monotone after rounding.
std::vector<std::array<double, 4>> sgof_rows(double swi, double lam) {
  std::vector<std::array<double, 4>> rows(kSgofRows);
  const double step = 1.0 / (kSgofRows - 1);
  for (int i = 0; i < kSgofRows; ++i) {
    const double u = 0.5 * (1.0 - std::cos(M_PI * (i == kSgofRows - 1 ? 1.0 : i * step)));
    const double s = std::clamp(1.0 - u, 0.0, 1.0);  // (Sw - Swi) / (1 - Swi)
    double sg = (1.0 - swi) * u;
    double krw = std::sqrt(s) * std::pow(1.0 - std::pow(1.0 - std::pow(s, 1.0 / lam), lam), 2);
    double krg = (1.0 - s) * (1.0 - s) * (1.0 - s * s);
    double pc = kPcEntryBar * std::pow(std::max(std::pow(s, -1.0 / lam) - 1.0, 0.0), 1.0 - lam);
    if (!std::isfinite(pc)) pc = kPcMaxBar;
    pc = std::min(pc, kPcMaxBar);
    if (i == 0) krw = 1, krg = 0, pc = 0;
    if (i == kSgofRows - 1) sg = 1.0 - swi, krw = 0, krg = 1, pc = kPcMaxBar;
    rows[i] = {sg, krg, krw, pc};
    for (auto& v : rows[i]) v = std::nearbyint(v * 1e7) / 1e7;
    if (i > 0) {
      rows[i][1] = std::max(rows[i][1], rows[i - 1][1]);
      rows[i][2] = std::min(rows[i][2], rows[i - 1][2]);
      rows[i][3] = std::max(rows[i][3], rows[i - 1][3]);
    }
  }
  return rows;
}

void check_case(const ReservoirCase& c) {
  if (c.lx != c.nx || c.ly != c.ny) throw InputError(c.path, "", "needs the whole grid");
  int first = -1;
  for (int x = 0; x < c.nx; ++x)
    if (c.perforated[x]) {
      first = x;
      break;
    }
  if (first < 0) throw InputError(c.path, "PERF", "has no perforated layer");
}

std::string deck_text(const ReservoirCase& c, const std::string& source, int n_active_layers) {
  const Radial r = radial(c);
  double thickness = 0;
  for (double v : c.dz) thickness += v;
  // The top of the formation is hydrostatic from the initial pressure there.
  const double depth = (c.pressure_bar - 1.01325) / kBrineGradient, bottom = depth + thickness;
  const std::vector<double> times = c.times_days.empty() ? paper_times_days(24) : c.times_days;
  std::vector<double> steps;
  for (std::size_t t = 0; t < times.size(); ++t) steps.push_back(times[t] - (t ? times[t - 1] : 0));
  std::string compdat;
  double ref_depth = -1, z = depth;
  for (int x = 0; x < c.nx; ++x) {
    if (c.perforated[x]) {
      if (ref_depth < 0) ref_depth = z + c.dz[x] / 2;
      const double cf = kCdarcy * theta_rad() * c.permx[std::size_t(x) * c.ny] * c.dz[x] /
                        std::log(r.node[0] / kDeckWellRadiusM);
      char b[160];
      std::snprintf(b, sizeof b, " 'INJ' 1 1 %d %d 'OPEN' 1* %.8g %.4f /\n", x + 1, x + 1, cf,
                    2 * kDeckWellRadiusM);
      compdat += b;
    }
    z += c.dz[x];
  }
  const double q =
      c.rate_mt_per_year * 1e9 / kDaysPerYear / kCo2SurfaceDensity * kDeckThetaDeg / 360.0;
  const std::string ny = std::to_string(c.ny), nx = std::to_string(c.nx);
  std::ostringstream d;
  d << "-- OPM Flow 2022.10 deck written by ufno_export (do not edit: regenerate)\n"
    << "-- case " << source << "\n"
    << "-- UFNO INJ_RATE_MT_PER_YEAR " << fmt("%.10g", c.rate_mt_per_year) << "\n"
    << "-- UFNO TEMP_C " << fmt("%.10g", c.temperature_c) << "\n"
    << "-- UFNO PRESSURE_BAR " << fmt("%.10g", c.pressure_bar) << "\n"
    << "-- UFNO SWI " << fmt("%.10g", c.swi) << "\n"
    << "-- UFNO VG_LAMBDA " << fmt("%.10g", c.vg_lambda) << "\n"
    << "-- UFNO THETA_DEG " << fmt("%g", kDeckThetaDeg) << "\n"
    << "-- UFNO CO2_SURFACE_DENSITY_KG_PER_SM3 " << fmt("%g", kCo2SurfaceDensity) << "\n"
    << "-- UFNO DAYS_PER_YEAR " << fmt("%g", kDaysPerYear) << "\n"
    << "-- Grid: RADIAL, I = radial (" << ny << " cells from the well), J = theta (1 wedge of "
    << fmt("%g", kDeckThetaDeg) << " deg),\n"
    << "-- K = layers from the top (" << nx << "); case arrays (X = layer, Y = radial) are K, I.\n"
    << "-- Layers " << n_active_layers + 1 << ".." << nx
    << " are outside the formation (ACTNUM 0).\n\n"
    << "RUNSPEC\nTITLE\n ufno export\nRADIAL\nDIMENS\n " << ny << " 1 " << nx << " /\n"
    << "OIL\nGAS\nDISGAS\nCO2STORE\nMETRIC\nSTART\n 1 'JAN' 2020 /\nTABDIMS\n 1 1 " << kSgofRows + 4
    << " 20 /\nEQLDIMS\n 1 /\nWELLDIMS\n 1 " << nx << " 1 1 /\nUNIFIN\nUNIFOUT\n\n"
    << "GRID\nINIT\nINRAD\n " << fmt("%.10g", kDeckWellRadiusM) << " /\n"
    << "INCLUDE\n 'include/DRV.INC' /\nDTHETAV\n " << fmt("%g", kDeckThetaDeg) << " /\n"
    << "INCLUDE\n 'include/DZV.INC' /\nTOPS\n " << ny << "*" << fmt("%.6f", depth) << " /\n"
    << "INCLUDE\n 'include/ACTNUM.INC' /\nINCLUDE\n 'include/PERMX.INC' /\n"
    << "COPY\n PERMX PERMY /\n/\nINCLUDE\n 'include/PERMZ.INC' /\n"
    << "INCLUDE\n 'include/PORO.INC' /\nINCLUDE\n 'include/MULTX.INC' /\n\n"
    << "PROPS\nINCLUDE\n 'include/SGOF.INC' /\nROCK\n " << fmt("%.6f", c.pressure_bar) << " "
    << fmt("%g", kRockCompressibility) << " /\nRTEMP\n " << fmt("%.6f", c.temperature_c) << " /\n\n"
    << "SOLUTION\nEQUIL\n " << fmt("%.6f", depth) << " " << fmt("%.6f", c.pressure_bar) << " "
    << fmt("%.6f", bottom + 10.0) << " 0 " << fmt("%.6f", depth - 5.0) << " 0 1 1* 0 /\n"
    << "RSVD\n " << fmt("%.3f", depth - 100.0) << " 0.0\n " << fmt("%.3f", bottom + 100.0)
    << " 0.0\n/\nRPTRST\n 'BASIC=2' /\n\n"
    << "SUMMARY\nFGIT\nFGIR\nFGIP\nFPR\nWBHP\n 'INJ' /\nWGIR\n 'INJ' /\nWGIT\n 'INJ' /\n\n"
    << "SCHEDULE\nRPTRST\n 'BASIC=2' /\nWELSPECS\n 'INJ' 'G1' 1 1 " << fmt("%.6f", ref_depth)
    << " 'GAS' /\n/\nCOMPDAT\n"
    << compdat << "/\nWCONINJE\n 'INJ' 'GAS' 'OPEN' 'RATE' " << fmt("%.8g", q) << " 1* "
    << fmt("%g", kBhpLimitBar) << " /\n/\nTSTEP\n"
    << value_lines(steps, "%.10g") << "\n/\nEND\n";
  return d.str();
}

}  // namespace

std::vector<double> exact_radial_transmissibility(const ReservoirCase& c) {
  const Radial r = radial(c);
  std::vector<double> t(std::size_t(c.nx) * c.ny, 0.0);
  for (int x = 0; x < c.nx; ++x)
    for (int y = 0; y + 1 < c.ny; ++y) {
      const std::size_t i = std::size_t(x) * c.ny + y;
      const double k0 = c.permx[i], k1 = c.permx[i + 1];
      if (!(k0 > 0 && k1 > 0)) continue;
      const double out_half = theta_rad() * k0 * c.dz[x] / std::log(r.outer[y] / r.node[y]);
      const double in_half = theta_rad() * k1 * c.dz[x] / std::log(r.node[y + 1] / r.inner[y + 1]);
      t[i] = kCdarcy / (1.0 / out_half + 1.0 / in_half);
    }
  return t;
}

void write_flow_deck(const ReservoirCase& c, const std::string& dir, const DeckOptions& o) {
  namespace fs = std::filesystem;
  check_case(c);
  const fs::path inc = fs::path(dir) / "include";
  fs::create_directories(inc);
  const std::size_t n = std::size_t(c.nx) * c.ny;
  const std::string hdr = "-- ufno_export: " + o.source + "\n";
  write_include(inc / "DRV.INC", hdr, "DRV", c.dr, "%.10g");
  write_include(inc / "DZV.INC", hdr, "DZV", c.dz, "%.10g");
  std::vector<double> act(n);
  int n_active_layers = 0;
  for (std::size_t i = 0; i < n; ++i) act[i] = c.permx[i] > 0 ? 1 : 0;
  for (int x = 0; x < c.nx; ++x) n_active_layers += act[std::size_t(x) * c.ny] > 0;
  write_include(inc / "ACTNUM.INC", hdr, "ACTNUM", act, "%.0f");
  write_include(inc / "PERMX.INC", hdr, "PERMX", c.permx, "%.8g");
  write_include(inc / "PERMZ.INC", hdr, "PERMZ", c.permz, "%.8g");
  write_include(inc / "PORO.INC", hdr, "PORO", c.poro, "%.8g");
  const std::vector<double> multx = o.multx.empty() ? std::vector<double>(n, 1.0) : o.multx;
  write_include(inc / "MULTX.INC",
                hdr + "-- radial transmissibility multipliers: exact / OPM (" +
                    (o.multx.empty() ? "all 1: not corrected" : o.multx_note) + ")\n",
                "MULTX", multx, "%.8g");
  std::string sgof = hdr + "-- SWI " + fmt("%.6f", c.swi) + ", van Genuchten lambda " +
                     fmt("%.6f", c.vg_lambda) + "; Sg krg krw(brine) Pc[bar]\nSGOF\n";
  for (const auto& r : sgof_rows(c.swi, c.vg_lambda)) {
    char b[128];
    std::snprintf(b, sizeof b, "%.7f %.7f %.7f %.7f\n", r[0], r[1], r[2], r[3]);
    sgof += b;
  }
  write_file(inc / "SGOF.INC", sgof + "/\n");
  write_file(fs::path(dir) / "CASE.DATA", deck_text(c, o.source, n_active_layers));
}

}  // namespace ufno
