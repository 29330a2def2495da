#include "runtime/DpFieldScale.hpp"

#include <algorithm>
#include <cmath>

#include <stdexcept>

#include "core/InputError.hpp"
#include "io/CaseEncoding.hpp"
#include "runtime/KpiHeadFeatures.hpp"

namespace ufno {

std::optional<DpFieldScale> DpFieldScale::from_model_file(const std::string& path,
                                                          std::string& note) {
  auto e = KpiHeadEstimator::from_model_file(path, kGroup);
  if (!e) return std::nullopt;
  DpFieldScale scale(std::move(*e));
  scale.validate();
  const KpiHead& h = scale.e_.head();
  if (network_digest(path) != h.network_digest) {
    note = path + ": " + h.group + " was fitted to another network; the dP field is the network's";
    return std::nullopt;
  }
  return scale;
}

void DpFieldScale::validate() const {
  const KpiHead& h = e_.head();
  if (h.outputs() != h.grid[1])
    throw InputError(h.path, h.group + "@target_mean", "must have one value per radial column");
  if (h.envelope_columns.empty() || h.field_plume_radius_floor_m > 0)
    throw InputError(h.path, h.group + "@envelope_columns",
                     "a dP field-scale head reads the network's envelope and nothing else");
  for (int c : h.envelope_columns)
    if (c < 0 || c >= h.grid[1])
      throw InputError(h.path, h.group + "@envelope_columns",
                       "names radial column " + std::to_string(c) + " outside the grid");
}

std::optional<std::vector<double>> DpFieldScale::factors(
    const std::vector<float>& first_input, int X, int Y,
    const std::vector<double>& envelope) const {
  const KpiHead& h = e_.head();
  std::vector<double> x =
      kpi_head_features(first_input.data(), X, Y, kInputChannels, h.path + " (a case)");
  for (int c : h.envelope_columns)
    x.push_back(std::log(std::max(envelope[c], h.envelope_floor_bar)));
  auto s = e_.estimate(std::move(x));
  if (s)
    for (double& v : *s) v = std::clamp(v, kMinFactor, kMaxFactor);
  return s;
}

void DpFieldScale::apply(HeadInput& head_input) const {
  if (head_input.stage != HeadStage::Field)
    throw std::logic_error("DpFieldScale::apply: given the input of another stage");
  auto& fin = static_cast<FieldHeadInput&>(head_input);
  std::vector<float>& dp = fin.dp;
  const HostArray& in = fin.input;
  const CaseBlock& blk = fin.block;
  const int X = fin.X, Y = fin.Y;
  const MPI_Comm comm = fin.comm;
  const std::size_t B = in.shape[0], lx = in.shape[1], ly = in.shape[2], T = in.shape[3],
                    C = in.shape[4];
  if (C != std::size_t(kInputChannels) || dp.size() != B * T * lx * ly)
    throw std::logic_error("DpFieldScale::apply: the input and the field are not one block");
  for (std::size_t b = 0; b < B; ++b) {
    // The whole grid's input at the first report time and the network's envelope: blocks are
    // disjoint, so a sum and a maximum over the ranks assemble them.
    std::vector<float> first(std::size_t(X) * Y * C, 0.f);
    std::vector<double> envelope(Y, -HUGE_VAL);
    for (std::size_t i = 0; i < lx; ++i)
      for (std::size_t j = 0; j < ly; ++j) {
        const float* ch = &in.data[(((b * lx + i) * ly + j) * T) * C];
        std::copy(ch, ch + C, &first[((blk.x0 + i) * Y + blk.y0 + j) * C]);
        if (ch[0] == 0.f) continue;  // outside the formation
        double& e = envelope[blk.y0 + j];
        for (std::size_t t = 0; t < T; ++t)
          e = std::max(e, double(dp[((b * T + t) * lx + i) * ly + j]));
      }
    MPI_Allreduce(MPI_IN_PLACE, first.data(), int(first.size()), MPI_FLOAT, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, envelope.data(), Y, MPI_DOUBLE, MPI_MAX, comm);
    const auto s = factors(first, X, Y, envelope);
    if (!s) continue;  // outside the head's ranges: the network's field
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t i = 0; i < lx; ++i)
        for (std::size_t j = 0; j < ly; ++j)
          dp[((b * T + t) * lx + i) * ly + j] *= float((*s)[blk.y0 + j]);
  }
}

}  // namespace ufno
