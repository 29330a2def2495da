#pragma once
// Shared helpers of the unit tests: random data, host <-> device copies, error norms, fixtures.
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/Tensor.hpp"
#include "core/WeightSource.hpp"
#include "io/Hdf5File.hpp"

namespace ufno::test {

// The fixtures: tests/data of the source tree, or $UFNO_TEST_DATA_DIR (a bundle run elsewhere,
// scripts/gpu-run.sh).
inline std::string data_path(const std::string& name) {
  const char* dir = std::getenv("UFNO_TEST_DATA_DIR");
  return std::string(dir && *dir ? dir : UFNO_TEST_DATA_DIR) + "/" + name;
}

inline std::vector<float> random_vector(std::size_t n, unsigned seed, float lo = -1.f,
                                        float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

inline HostArray random_array(std::vector<std::size_t> shape, unsigned seed, float scale = 1.f) {
  std::size_t n = 1;
  for (auto s : shape) n *= s;
  HostArray a{shape, random_vector(n, seed, -scale, scale)};
  return a;
}

inline Tensor to_device(const std::vector<float>& v, const Shape5& s) {
  Tensor t = make_tensor("test", s);
  auto h = Kokkos::create_mirror_view(t);
  std::copy(v.begin(), v.end(), h.data());
  Kokkos::deep_copy(t, h);
  return t;
}

inline std::vector<float> to_host(const Tensor& t) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t);
  return std::vector<float>(h.data(), h.data() + h.span());
}

struct ErrorNorms {
  double rel_l2 = 0, max_abs = 0, max_ref = 0;
};

inline ErrorNorms compare(const std::vector<float>& got, const std::vector<float>& ref) {
  ErrorNorms e;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = double(got[i]) - ref[i];
    num += d * d;
    den += double(ref[i]) * ref[i];
    e.max_abs = std::max(e.max_abs, std::abs(d));
    e.max_ref = std::max(e.max_ref, std::abs(double(ref[i])));
  }
  e.rel_l2 = std::sqrt(num / (den > 0 ? den : 1));
  return e;
}

// Weights held in memory, under their state_dict names.
class MapWeights : public WeightSource {
 public:
  std::map<std::string, HostArray> arrays;
  bool has(const std::string& n) const override { return arrays.count(n) != 0; }
  HostArray get(const std::string& n) const override {
    auto it = arrays.find(n);
    if (it == arrays.end()) throw InputError(origin(), n, "dataset is missing");
    return it->second;
  }
  std::vector<std::size_t> shape(const std::string& n) const override { return get(n).shape; }
  std::string origin() const override { return "test-weights"; }
};

// Every dataset of a fixture file, by name (optionally only those under a key prefix).
inline MapWeights read_all(const std::string& path) {
  auto f = h5::File::open_read(path);
  MapWeights w;
  for (const auto& n : f.dataset_names()) {
    HostArray a;
    a.data = f.read_floats(n, &a.shape);
    w.arrays[n] = a;
  }
  return w;
}

}  // namespace ufno::test
