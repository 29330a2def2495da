#include "runtime/TrainingStatistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ufno {

namespace {

// A variance per cell at or below this is none (python's ZERO_VARIANCE): one-pass sums leave
// about 1e-14 where a homogeneous formation has none.
constexpr double kZeroVariance = 1e-10;
const double kLn10 = std::log(10.0);

// Layout of the sums: per layer x the cell count, sum and sum of squares of ln kx, and whether
// the layer is in the formation at the well; then the totals below.
enum Total { kSumLogKzKx, kSumPoro, kSumPoro2, kSumLogKxPoro, kTotals };

}  // namespace

// The statistics and their units, in the profile's order (python's STATISTICS).
constexpr struct {
  const char* name;
  const char* unit;
} kStatistics[] = {{"INJ_RATE", "Mt/yr"},
                   {"TEMP", "degC"},
                   {"PRESSURE", "bar"},
                   {"SWI", ""},
                   {"VG_LAMBDA", ""},
                   {"formation_layers", "layers"},
                   {"perforated_layers", "layers"},
                   {"perforation_position", "(0 top, 1 bottom)"},
                   {"log10_permx_mean", "(log10 mD)"},
                   {"log10_permx_std", "(log10 mD)"},
                   {"permx_lateral_fraction", ""},
                   {"log10_kz_kx_mean", ""},
                   {"porosity_mean", ""},
                   {"porosity_std", ""},
                   {"permx_porosity_correlation", ""}};

const std::vector<std::string>& training_statistic_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& s : kStatistics) n.push_back(s.name);
    return n;
  }();
  return names;
}

std::string training_statistic_unit(const std::string& name) {
  for (const auto& s : kStatistics)
    if (name == s.name) return s.unit;
  return "";
}

FieldMoments::FieldMoments(int layers) : layers_(layers), v_(4 * std::size_t(layers) + kTotals) {}

void FieldMoments::add(const ReservoirCase& c) {
  double* total = v_.data() + 4 * std::size_t(layers_);
  for (int i = 0; i < c.lx; ++i) {
    const std::size_t x = std::size_t(c.x0 + i);
    for (int j = 0; j < c.ly; ++j) {
      if (!c.active(i, j)) continue;
      const std::size_t k = std::size_t(i) * c.ly + j;
      const double lk = std::log(c.permx[k]), p = c.poro[k];
      v_[4 * x] += 1;
      v_[4 * x + 1] += lk;
      v_[4 * x + 2] += lk * lk;
      if (c.y0 + j == 0) v_[4 * x + 3] = 1;
      total[kSumLogKzKx] += std::log(c.permz[k]) - lk;
      total[kSumPoro] += p;
      total[kSumPoro2] += p * p;
      total[kSumLogKxPoro] += lk * p;
    }
  }
}

void FieldMoments::sum_over(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  MPI_Allreduce(MPI_IN_PLACE, v_.data(), int(v_.size()), MPI_DOUBLE, MPI_SUM, comm);
}

std::vector<double> FieldMoments::finish(const ReservoirCase& c) const {
  const double* total = v_.data() + 4 * std::size_t(layers_);
  double n = 0, sk = 0, skk = 0, within = 0, formation = 0, top = HUGE_VAL, bottom = -HUGE_VAL;
  for (int x = 0; x < layers_; ++x) {
    const double nx = v_[4 * x], s = v_[4 * x + 1], ss = v_[4 * x + 2];
    n += nx, sk += s, skk += ss;
    if (nx > 0) within += ss - s * s / nx;
    if (v_[4 * x + 3] > 0) {
      formation += 1;
      top = std::min(top, double(x));
      bottom = std::max(bottom, double(x));
    }
  }
  double perforated = 0, perf_sum = 0;
  for (int x = 0; x < layers_ && x < int(c.perforated.size()); ++x)
    if (c.perforated[x]) perforated += 1, perf_sum += x;
  const double position = std::clamp(
      (perf_sum / std::max(perforated, 1.0) - top) / std::max(bottom - top, 1.0), 0.0, 1.0);
  const double cells = std::max(n, 1.0);
  const double mk = sk / cells, vk = std::max(skk / cells - mk * mk, 0.0);
  const double mp = total[kSumPoro] / cells, vp = std::max(total[kSumPoro2] / cells - mp * mp, 0.0);
  const double cov = total[kSumLogKxPoro] / cells - mk * mp;
  const bool varies_k = vk > kZeroVariance, varies_p = vp > kZeroVariance;
  return {c.rate_mt_per_year,
          c.temperature_c,
          c.pressure_bar,
          c.swi,
          c.vg_lambda,
          formation,
          perforated,
          position,
          mk / kLn10,
          std::sqrt(vk) / kLn10,
          varies_k ? std::max(within, 0.0) / (vk * cells) : 0.0,
          total[kSumLogKzKx] / cells / kLn10,
          mp,
          std::sqrt(vp),
          varies_k && varies_p ? cov / std::sqrt(vk * vp) : 0.0};
}

std::vector<double> training_statistics(const ReservoirCase& c, MPI_Comm comm) {
  FieldMoments m(c.nx);
  m.add(c);
  m.sum_over(comm);
  return m.finish(c);
}

}  // namespace ufno
