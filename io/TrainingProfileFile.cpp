#include "io/TrainingProfileFile.hpp"

#include <cmath>
#include <sstream>

#include "core/InputError.hpp"
#include "io/FiniteDataset.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

namespace {

const std::string kGroup = "training_profile";
constexpr std::size_t kMaxStatistics = 256;

std::vector<double> profile_dataset(const h5::File& f, const std::string& name,
                                    const std::vector<std::size_t>& shape) {
  return finite_dataset(f, name, shape, kMaxStatistics * kMaxStatistics);
}

// Quantiles at increasing levels never decrease.
void check_increasing(const std::string& path, const std::string& name, const double* q) {
  for (std::size_t l = 1; l < TrainingProfile::kLevels.size(); ++l)
    if (q[l] < q[l - 1]) throw InputError(path, name, "quantiles must not decrease");
}

}  // namespace

std::optional<TrainingProfile> read_training_profile(const std::string& path) {
  h5::File f = h5::File::open_read(path);
  if (!f.has_attribute("statistics", kGroup)) return std::nullopt;
  TrainingProfile p;
  p.path = path;
  std::istringstream names(f.string_attribute_required("statistics", kGroup));
  for (std::string n; std::getline(names, n, ',');) p.names.push_back(n);
  const std::size_t s = p.names.size(), nl = TrainingProfile::kLevels.size();
  if (s < 1 || s > kMaxStatistics)
    throw InputError(path, kGroup + "@statistics", "must name 1 to 256 statistics");
  const auto levels = f.numeric_attribute("levels", kGroup);
  if (levels.size() != nl)
    throw InputError(path, kGroup + "@levels", "must be the levels 0, 0.005, 0.5, 0.995, 1");
  for (std::size_t l = 0; l < nl; ++l)
    if (std::abs(levels[l] - TrainingProfile::kLevels[l]) > 1e-12)
      throw InputError(path, kGroup + "@levels", "must be the levels 0, 0.005, 0.5, 0.995, 1");
  p.data = f.string_attribute(kGroup, "data").value_or("");
  const auto cases = f.numeric_attribute("cases", kGroup);
  if (cases.size() != 1 || !(cases[0] >= 2 && cases[0] < 1e12))
    throw InputError(path, kGroup + "@cases", "must be one count of at least 2");
  p.cases = long(cases[0]);
  const auto q = profile_dataset(f, kGroup + "/quantiles", {s, nl});
  for (std::size_t i = 0; i < s; ++i) {
    check_increasing(path, kGroup + "/quantiles", &q[i * nl]);
    std::array<double, 5> row{};
    for (std::size_t l = 0; l < nl; ++l) row[l] = q[i * nl + l];
    p.quantiles.push_back(row);
  }
  p.mean = profile_dataset(f, kGroup + "/mean", {s});
  p.inverse_covariance = profile_dataset(f, kGroup + "/inverse_covariance", {s, s});
  const auto d = profile_dataset(f, kGroup + "/distance_quantiles", {nl});
  check_increasing(path, kGroup + "/distance_quantiles", d.data());
  if (!(d[0] >= 0)) throw InputError(path, kGroup + "/distance_quantiles", "must not be negative");
  for (std::size_t l = 0; l < nl; ++l) p.distance_quantiles[l] = d[l];
  return p;
}

}  // namespace ufno
