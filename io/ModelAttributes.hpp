#pragma once
// Checked reading of model files, shared by every architecture's reader (io/ModelFile for the
// U-FNO and FNO, io/Fno4dModelFile for the 4-D FNO): the container's format and architecture,
// integer and float attributes refused with one line naming the file and attribute, and weights
// refused when they hold NaN, Inf or magnitudes no trained model has.
#include <array>
#include <string>

#include "core/WeightSource.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

// Checks `format` and `format_version` and returns the `architecture` attribute.
std::string model_architecture(const h5::File& f);
// The same from a path: what ufno_predict looks at to pick the model kind.
std::string model_architecture(const std::string& path);

int int_attr(const h5::File& f, const std::string& attr, int min);
double double_attr(const h5::File& f, const std::string& attr);
std::vector<int> int_list_attr(const h5::File& f, const std::string& attr, std::size_t count,
                               int min, const std::string& axes);

template <std::size_t N>
std::array<int, N> int_array_attr(const h5::File& f, const std::string& attr, int min) {
  const auto v = int_list_attr(f, attr, N, min, N == 3 ? "X, Y, T" : "A1, A2, A3, T");
  std::array<int, N> r{};
  for (std::size_t a = 0; a < N; ++a) r[a] = v[a];
  return r;
}

// InputError naming `attr` when value > limit (sizes checked before anything is allocated).
void check_at_most(const h5::File& f, const std::string& attr, long value, long limit);

// Refuses a dataset's values that are not finite or beyond kMaxWeight, and negative values of a
// BatchNorm running variance or a normaliser's std.
void check_weight_values(const h5::File& f, const std::string& name,
                         const std::vector<float>& values);
// A float32 dataset, whole or its hyperslab [start, start + count), checked as above.
HostArray read_checked_weights(const h5::File& f, const std::string& name);
HostArray read_checked_block(const h5::File& f, const std::string& name,
                             const std::vector<std::size_t>& start,
                             const std::vector<std::size_t>& count);
// The same into `out`, reusing its storage (h5::File::read_block_into); the value check only
// with check_values (WeightSource::get_block_into).
void read_checked_block_into(const h5::File& f, const std::string& name,
                             const std::vector<std::size_t>& start,
                             const std::vector<std::size_t>& count, HostArray& out,
                             bool check_values = true);

}  // namespace ufno
