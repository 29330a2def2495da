#pragma once
// The maximum-dP head a dP model file may carry (group /max_dp_head, docs/model-format.md): an
// ensemble of small MLPs (features -> hidden -> hidden -> 1, exact GELU) that estimates
// log(max dP) from features of the case (python/max_dp_head.py trains it). Read and checked
// here; apps/MaxDpHead.hpp computes the features and evaluates it.
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace ufno {

struct DenseLayer {
  int in = 0, out = 0;
  std::vector<double> weight;  // (out, in) row-major, as torch.nn.Linear
  std::vector<double> bias;    // out
};

struct MaxDpHead {
  std::string path;
  std::vector<std::string> features;  // names, in input order
  std::array<int, 2> grid{};          // (X, Y) the features are defined on
  std::vector<double> feature_mean, feature_std;
  std::vector<double> feature_min, feature_max;  // over the training cases
  double target_mean = 0, target_std = 1;
  std::vector<std::array<DenseLayer, 3>> members;
};

// The head in the model file at `path`, or nothing when the file has none. A head that is there
// but malformed (shapes that do not chain, non-finite values, a zero std, sizes beyond any head
// this project trains) is an InputError naming the file and the field.
std::optional<MaxDpHead> read_max_dp_head(const std::string& path);

}  // namespace ufno
