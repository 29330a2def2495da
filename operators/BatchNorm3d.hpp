#pragma once
// BatchNorm3d in inference mode (running statistics) is an affine map per channel, so it is folded
// into the preceding convolution at load time: w' = w * g, b' = (b - mean) * g + beta with
// g = gamma / sqrt(var + eps). No BatchNorm pass runs at inference.
#include <cmath>
#include <string>
#include <vector>

#include "core/WeightSource.hpp"

namespace ufno {

struct BatchNorm3d {
  std::vector<float> gamma, beta, mean, var;
  double eps = 1e-5;

  static BatchNorm3d load(const WeightSource& w, const std::string& prefix, int channels,
                          double eps) {
    const std::vector<std::size_t> s{std::size_t(channels)};
    BatchNorm3d bn;
    bn.gamma = w.take(prefix + ".weight", s).data;
    bn.beta = w.take(prefix + ".bias", s).data;
    bn.mean = w.take(prefix + ".running_mean", s).data;
    bn.var = w.take(prefix + ".running_var", s).data;
    bn.eps = eps;
    return bn;
  }

  // weights (out, ...) with `per_out` values per output channel; bias (out) or empty (= zeros).
  void fold_into(std::vector<float>& weights, std::vector<float>& bias) const {
    const std::size_t out = gamma.size();
    const std::size_t per_out = weights.size() / out;
    if (bias.empty()) bias.assign(out, 0.f);
    for (std::size_t o = 0; o < out; ++o) {
      const double g = double(gamma[o]) / std::sqrt(double(var[o]) + eps);
      for (std::size_t k = 0; k < per_out; ++k)
        weights[o * per_out + k] = float(weights[o * per_out + k] * g);
      bias[o] = float((double(bias[o]) - mean[o]) * g + beta[o]);
    }
  }
};

}  // namespace ufno
