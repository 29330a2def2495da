#include "runtime/DpPeakMatch.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <vector>

#include "core/InputError.hpp"
#include "runtime/MaxDpHead.hpp"

namespace ufno {

std::optional<DpPeakMatch> DpPeakMatch::from_model_file(const std::string& path) {
  auto e = KpiHeadEstimator::from_model_file(path, kGroup);
  if (!e || e->head().reads_network()) return std::nullopt;
  DpPeakMatch m(std::move(*e));
  m.validate();
  return m;
}

void DpPeakMatch::validate() const {
  const KpiHead& h = e_.head();
  if (h.outputs() != 1)
    throw InputError(h.path, h.group + "@target_mean", "must be one number (one output)");
  if (!h.physics_inputs.empty() && h.physics_inputs != "max_dp")
    throw InputError(h.path, h.group + "@physics_inputs",
                     "\"max_dp\" is the only physics a maximum-dP head reads");
}

double DpPeakMatch::exponent(double field_max, double target) {
  const double a = target / field_max - 1;
  // f(w) = w (1 + a w^p) increases on [0, 1] while 1 + a (p + 1) >= 0.
  return a >= 0 ? kSharpness : std::min(kSharpness, -1 / a - 1);
}

float DpPeakMatch::matched(float dp, double field_max, double target) {
  const double a = target / field_max - 1;
  const double w = std::clamp(double(dp) / field_max, 0.0, 1.0);
  return float(dp * (1 + a * std::pow(w, exponent(field_max, target))));
}

// The head's estimate for every case of the pass, the cases on the run's OpenMP threads: one
// case's physics is a few r-z solves on one core (about 35 ms on the paper's grid), which a
// GPU's pass of the networks (a few ms a case) would otherwise wait for case after case.
std::vector<std::optional<HeadEstimate>> DpPeakMatch::head_estimates(
    const FieldHeadInput& fin) const {
  const long B = long(fin.cases.size());
  std::vector<std::optional<HeadEstimate>> out(static_cast<std::size_t>(B));
  std::exception_ptr failed;
#pragma omp parallel for schedule(dynamic, 1)
  for (long b = 0; b < B; ++b) {
    try {
      out[std::size_t(b)] =
          max_dp_head_estimate(e_, *fin.cases[std::size_t(b)], {}, *fin.times_days);
    } catch (...) {
#pragma omp critical(ufno_dp_peak_match)
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  return out;
}

void DpPeakMatch::apply(HeadInput& head_input) const {
  if (head_input.stage != HeadStage::Field)
    throw std::logic_error("DpPeakMatch::apply: given the input of another stage");
  auto& fin = static_cast<FieldHeadInput&>(head_input);
  const HostArray& in = fin.input;
  const std::size_t B = in.shape[0], lx = in.shape[1], ly = in.shape[2], T = in.shape[3],
                    C = in.shape[4];
  if (fin.cases.empty() || !fin.times_days) return;  // encoded tensors: no whole case
  if (fin.cases.size() != B || fin.dp.size() != B * T * lx * ly)
    throw std::logic_error("DpPeakMatch::apply: the cases, the input and the field disagree");
  const auto estimates = head_estimates(fin);
  for (std::size_t b = 0; b < B; ++b) {
    double field_max = -HUGE_VAL;  // over the formation (the KPIs' maximum), every rank's block
    for (std::size_t i = 0; i < lx; ++i)
      for (std::size_t j = 0; j < ly; ++j) {
        if (in.data[(((b * lx + i) * ly + j) * T) * C] == 0.f) continue;  // outside
        for (std::size_t t = 0; t < T; ++t)
          field_max = std::max(field_max, double(fin.dp[((b * T + t) * lx + i) * ly + j]));
      }
    MPI_Allreduce(MPI_IN_PLACE, &field_max, 1, MPI_DOUBLE, MPI_MAX, fin.comm);
    // Every rank estimates from the same whole case, so all take the same branch.
    const auto& h = estimates[b];
    if (!h || !(field_max > 0)) continue;
    const double target =
        std::clamp(h->value.front(), kMinRatio * field_max, kMaxRatio * field_max);
    for (std::size_t k = b * T * lx * ly; k < (b + 1) * T * lx * ly; ++k)
      fin.dp[k] = matched(fin.dp[k], field_max, target);
  }
}

}  // namespace ufno
