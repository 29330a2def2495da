#include "runtime/KpiHeadFeatures.hpp"

#include <algorithm>
#include <cmath>

#include "core/InputError.hpp"
#include "io/CaseEncoding.hpp"

namespace ufno {

namespace {

constexpr int kRadialColumns[] = {0, 1, 3, 6, 12};
constexpr int kBands = 4;

}  // namespace

const std::vector<std::string>& kpi_head_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"rate", "temperature", "pressure", "swi", "lambda"};
    for (int y : kRadialColumns)
      for (const char* f : {"log_kh_perforated", "log_kh", "log_kvh"})
        n.push_back(std::string(f) + "_r" + std::to_string(y));
    for (const char* f : {"perforated_layers", "active_layers_at_well", "mean_porosity",
                          "perforation_depth", "active_depth"})
      n.push_back(f);
    for (int b = 0; b < kBands; ++b) n.push_back("log_pore_band" + std::to_string(b));
    for (const char* f : {"log_kx_perforated_max", "log_kx_perforated_min", "log_kvh_perforated"})
      n.push_back(f);
    return n;
  }();
  return names;
}

std::vector<double> kpi_head_features(const ReservoirCase& c) {
  const int X = c.nx, Y = c.ny;
  if (c.lx != X || c.ly != Y) throw InputError(c.path, "grid", "a KPI head needs the whole grid");
  const int nt = c.times_days.empty() ? 1 : int(c.times_days.size());
  const HostArray a = encode_case(c, nt);
  return kpi_head_features(a.data.data(), X, Y, std::size_t(nt) * kInputChannels, c.path);
}

std::vector<double> kpi_head_features(const float* encoded, int X, int Y, std::size_t cell_stride,
                                      const std::string& path) {
  if (Y < kRadialColumns[4] + 1 || Y % kBands)
    throw InputError(path, "grid", "a KPI head needs at least 13 radial cells, a multiple of 4");
  // Channel k of cell (x, y), as float32 widened to double.
  auto ch = [&](int x, int y, int k) {
    return double(encoded[(std::size_t(x) * Y + y) * cell_stride + k]);
  };
  auto act = [&](int x, int y) { return ch(x, y, 0) != 0; };
  auto kx = [&](int x, int y) { return act(x, y) ? std::exp(15.0 * ch(x, y, 0)) : 0.0; };
  auto kz = [&](int x, int y) { return act(x, y) ? std::exp(15.0 * ch(x, y, 1)) : 0.0; };
  auto perf = [&](int x) { return ch(x, 0, 3) > 0; };
  std::vector<double> f;
  for (int k = 4; k < 9; ++k) f.push_back(ch(0, 0, k));
  for (int y : kRadialColumns) {
    double kh_perf = 0, kh = 0, kvh = 0;
    for (int x = 0; x < X; ++x) {
      kh_perf += perf(x) ? kx(x, y) : 0.0;
      kh += kx(x, y);
      kvh += kz(x, y);
    }
    f.insert(f.end(), {std::log(kh_perf + 1e-3), std::log(kh + 1e-3), std::log(kvh + 1e-3)});
  }
  double n_perf = 0, n_act = 0, perf_depth = 0, act_depth = 0, poro = 0, n_cells = 0;
  for (int x = 0; x < X; ++x) {
    n_perf += perf(x);
    perf_depth += perf(x) ? x : 0;
    n_act += act(x, 0);
    act_depth += act(x, 0) ? x : 0;
    for (int y = 0; y < Y; ++y) {
      poro += act(x, y) ? ch(x, y, 2) : 0.0;
      n_cells += act(x, y);
    }
  }
  f.insert(f.end(), {n_perf, n_act, poro / std::max(n_cells, 1.0),
                     perf_depth / std::max(n_perf, 1.0), act_depth / std::max(n_act, 1.0)});
  const int w = Y / kBands;
  for (int b = 0; b < kBands; ++b) {
    double pore = 0;
    for (int x = 0; x < X; ++x)
      for (int y = b * w; y < (b + 1) * w; ++y) pore += act(x, y) ? ch(x, y, 2) : 0.0;
    f.push_back(std::log(pore + 1e-6));
  }
  double kmax = 0, kmin = 1e9, kvh_perf = 0;
  for (int x = 0; x < X; ++x) {
    kmax = std::max(kmax, perf(x) ? kx(x, 0) : 0.0);
    if (perf(x)) kmin = std::min(kmin, kx(x, 0));
    kvh_perf += perf(x) ? kz(x, 0) : 0.0;
  }
  f.insert(f.end(), {std::log(kmax + 1e-3), std::log(kmin + 1e-3), std::log(kvh_perf + 1e-3)});
  return f;
}

std::vector<std::string> envelope_feature_names(const std::vector<int>& columns) {
  std::vector<std::string> n;
  for (int c : columns) n.push_back("log_field_envelope_r" + std::to_string(c));
  return n;
}

std::vector<double> field_envelope_features(const ReservoirCase& c, const std::vector<float>& dp,
                                            const std::vector<int>& columns, double floor) {
  const std::size_t cells = std::size_t(c.nx) * c.ny;
  if (cells == 0 || dp.size() % cells)
    throw InputError(c.path, "dP", "the field is not a whole number of the case's grids");
  std::vector<double> f;
  for (int y : columns) {
    if (y < 0 || y >= c.ny)
      throw InputError(c.path, "grid", "has no radial column " + std::to_string(y));
    double e = -HUGE_VAL;
    for (std::size_t t = 0; t < dp.size() / cells; ++t)
      for (int x = 0; x < c.nx; ++x) {
        const std::size_t i = std::size_t(x) * c.ny + y;
        if (c.permx[i] > 0) e = std::max(e, double(dp[t * cells + i]));
      }
    f.push_back(std::log(std::max(e, floor)));
  }
  return f;
}

namespace {
std::vector<std::string> numbered(const std::string& prefix, int count) {
  std::vector<std::string> n;
  for (int t = 0; t < count; ++t) n.push_back(prefix + std::to_string(t));
  return n;
}
}  // namespace

std::vector<std::string> field_radius_feature_names(int report_times) {
  return numbered("log_field_plume_radius_t", report_times);
}

std::vector<std::string> gravity_plume_radius_feature_names(int report_times) {
  return numbered("log_rz_gravity_plume_radius_t", report_times);
}

}  // namespace ufno
