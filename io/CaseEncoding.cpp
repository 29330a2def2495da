#include "io/CaseEncoding.hpp"

#include <cmath>

namespace ufno {

namespace {
// Rate scaling of the paper: the stored value a maps to a surface volume rate
// q = a (3e6 - 3e5) + 3e5 [m3/day] and rate [Mt/yr] = q / (1e6/365 * 1000/1.862).
constexpr double kRateQMin = 3e5, kRateQMax = 3e6;
constexpr double kMtPerYearToQ = 1e6 / 365.0 * 1000.0 / 1.862;
}  // namespace

double encoded_rate(double r) { return (r * kMtPerYearToQ - kRateQMin) / (kRateQMax - kRateQMin); }
double decoded_rate(double a) { return (a * (kRateQMax - kRateQMin) + kRateQMin) / kMtPerYearToQ; }

double decoded_swi(double a) { return 0.1 + 0.2 * a; }

std::vector<double> paper_times_days(int n) {
  std::vector<double> t(n);
  double sum = 0;
  for (int k = 0; k < n; ++k) {
    sum += std::pow(1.421245, k);
    t[k] = sum;
  }
  return t;
}

HostArray encode_case(const ReservoirCase& c, int nt) {
  const int X = c.nx, Y = c.ny, T = nt;  // global grid; the block is c.x0.., c.y0..
  std::vector<double> times = c.times_days.empty() ? paper_times_days(T) : c.times_days;
  if (int(times.size()) != T)
    throw InputError(c.path, "TIMES",
                     "has " + std::to_string(times.size()) +
                         " report times but the model predicts " + std::to_string(T));
  // Radial coordinate: cumulative cell widths, normalised to [0, 1] (min-max).
  std::vector<double> r(Y);
  double cum = 0;
  for (int y = 0; y < Y; ++y) r[y] = (cum += c.dr[y]);
  const double r0 = r[0], rspan = Y > 1 ? r[Y - 1] - r[0] : 1.0;

  const double scalars[5] = {encoded_rate(c.rate_mt_per_year), (c.temperature_c - 30.0) / 150.0,
                             (c.pressure_bar - 100.0) / 200.0,
                             (c.swi - 0.1) / 0.2,  // decoded_swi() inverts it
                             (c.vg_lambda - 0.3) / 0.4};
  HostArray a;
  a.shape = {1, std::size_t(c.lx), std::size_t(c.ly), std::size_t(T), std::size_t(kInputChannels)};
  a.data.assign(std::size_t(c.lx) * c.ly * T * kInputChannels, 0.f);
  for (int i = 0; i < c.lx; ++i)
    for (int j = 0; j < c.ly; ++j) {
      const int x = c.x0 + i, y = c.y0 + j;
      const std::size_t cell = std::size_t(i) * c.ly + j;
      const bool act = c.permx[cell] > 0;
      float ch[kInputChannels];
      ch[0] = act ? float(std::log(c.permx[cell]) / 15.0) : 0.f;
      ch[1] = act ? float(std::log(c.permz[cell]) / 15.0) : 0.f;
      ch[2] = act ? float(c.poro[cell]) : 0.f;
      ch[3] = (y == 0 && c.perforated[x]) ? 1.f : 0.f;
      for (int k = 0; k < 5; ++k) ch[4 + k] = float(scalars[k]);
      ch[9] = float((r[y] - r0) / rspan);
      ch[10] = X > 1 ? float(double(x) / (X - 1)) : 0.f;
      for (int t = 0; t < T; ++t) {
        ch[11] = float(times[t] / times[T - 1]);
        float* dst = a.data.data() + ((cell * T) + t) * kInputChannels;
        for (int k = 0; k < kInputChannels; ++k) dst[k] = ch[k];
      }
    }
  return a;
}

void check_encoded(const HostArray& a, const std::string& path, const std::string& field) {
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    if (!std::isfinite(a.data[i]))
      throw InputError(
          path, field,
          "contains NaN or Inf (first in this block at flat index " + std::to_string(i) + ")");
    if (std::abs(a.data[i]) > kMaxEncodedValue)
      throw InputError(path, field,
                       "value " + std::to_string(a.data[i]) + " at flat index " +
                           std::to_string(i) + " is far outside the encoded range (|v| <= " +
                           std::to_string(int(kMaxEncodedValue)) + ")");
  }
}

}  // namespace ufno
