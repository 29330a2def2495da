#include "io/ModelAttributes.hpp"

#include <algorithm>
#include <cmath>

#include "core/InputError.hpp"
#include "core/Parallel.hpp"
#include "io/ModelFile.hpp"

namespace ufno {

namespace {

// Integer attributes beyond the int range are refused before the cast, which would be undefined
// for them (the sizes they describe are checked against each other afterwards).
int as_int(const h5::File& f, const std::string& attr, double v) {
  if (!std::isfinite(v) || v != std::floor(v))
    throw InputError(f.path(), attr, "attribute is not an integer");
  if (std::abs(v) > 2147483647.0)
    throw InputError(f.path(), attr, "attribute " + std::to_string(v) + " is out of range");
  return int(v);
}

}  // namespace

std::string model_architecture(const h5::File& f) {
  const std::string fmt = f.string_attribute("/", "format").value_or("");
  if (fmt != "ufno-model")
    throw InputError(f.path(), "format",
                     "not a ufno model file (attribute format != \"ufno-model\")");
  if (int_attr(f, "format_version", 1) != 1)
    throw InputError(f.path(), "format_version", "unsupported version (this build reads 1)");
  return f.string_attribute_required("architecture");
}

std::string model_architecture(const std::string& path) {
  return model_architecture(h5::File::open_read(path));
}

int int_attr(const h5::File& f, const std::string& attr, int min) {
  auto v = f.numeric_attribute(attr);
  if (v.size() != 1) throw InputError(f.path(), attr, "attribute must be a scalar");
  const int i = as_int(f, attr, v[0]);
  if (i < min) throw InputError(f.path(), attr, "attribute must be >= " + std::to_string(min));
  return i;
}

std::vector<int> int_list_attr(const h5::File& f, const std::string& attr, std::size_t count,
                               int min, const std::string& axes) {
  auto v = f.numeric_attribute(attr);
  if (v.size() != count)
    throw InputError(f.path(), attr,
                     "attribute must hold " + std::to_string(count) + " values (" + axes + ")");
  std::vector<int> r(count);
  for (std::size_t a = 0; a < count; ++a) {
    r[a] = as_int(f, attr, v[a]);
    if (r[a] < min) throw InputError(f.path(), attr, "values must be >= " + std::to_string(min));
  }
  return r;
}

double double_attr(const h5::File& f, const std::string& attr) {
  auto v = f.numeric_attribute(attr);
  if (v.size() != 1 || !std::isfinite(v[0]))
    throw InputError(f.path(), attr, "attribute must be a finite scalar");
  return v[0];
}

void check_at_most(const h5::File& f, const std::string& attr, long value, long limit) {
  if (value > limit)
    throw InputError(f.path(), attr,
                     "value " + std::to_string(value) + " exceeds " + std::to_string(limit));
}

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

void check_weight_values(const h5::File& f, const std::string& name,
                         const std::vector<float>& values) {
  // Variances and standard deviations (BatchNorm running_var, normaliser std) are never negative.
  const bool spread = ends_with(name, "running_var") || ends_with(name, ".std");
  // A branch-free scan first (it vectorises: a 4-D FNO layer's weights are 300 MB, read at every
  // pass); NaN fails the comparison. Only a file that fails it is walked again for the message.
  // On the host threads, a piece each: the scan is a memory-bound pass the load waits on.
  const float limit = float(kMaxWeight);
  constexpr std::size_t kPiece = std::size_t(1) << 20;
  const long pieces = long((values.size() + kPiece - 1) / kPiece);
  std::vector<char> out_of_range(pieces, 0), negative(pieces, 0);
  ufno::host_parallel_for("ufno::check_weight_values", pieces, [&](const int64_t p) {
    const std::size_t end = std::min(values.size(), std::size_t(p + 1) * kPiece);
    bool o = false, n = false;
    for (std::size_t i = std::size_t(p) * kPiece; i < end; ++i) {
      o |= !(std::abs(values[i]) <= limit);
      n |= values[i] < 0.f;
    }
    out_of_range[p] = o;
    negative[p] = n;
  });
  const auto any = [](const std::vector<char>& f) {
    return std::find(f.begin(), f.end(), 1) != f.end();
  };
  if (!any(out_of_range) && !(spread && any(negative))) return;
  for (float v : values) {
    if (!std::isfinite(v)) throw InputError(f.path(), name, "contains NaN or Inf");
    if (std::abs(v) > kMaxWeight)
      throw InputError(f.path(), name,
                       "holds a value of magnitude " + std::to_string(std::abs(v)) +
                           ", beyond any trained model (limit " + std::to_string(kMaxWeight) + ")");
    if (spread && v < 0)
      throw InputError(f.path(), name,
                       ends_with(name, ".std") ? "a standard deviation is negative"
                                               : "a BatchNorm running variance is negative");
  }
}

HostArray read_checked_weights(const h5::File& f, const std::string& name) {
  HostArray a;
  a.data = f.read_floats(name, &a.shape);
  check_weight_values(f, name, a.data);
  return a;
}

HostArray read_checked_block(const h5::File& f, const std::string& name,
                             const std::vector<std::size_t>& start,
                             const std::vector<std::size_t>& count) {
  HostArray b;
  read_checked_block_into(f, name, start, count, b);
  return b;
}

void read_checked_block_into(const h5::File& f, const std::string& name,
                             const std::vector<std::size_t>& start,
                             const std::vector<std::size_t>& count, HostArray& out,
                             bool check_values) {
  out.shape = count;
  std::size_t n = 1;
  for (std::size_t c : count) n *= c;
  if (n == 0) {  // a rank that owns no cells
    out.data.clear();
    return;
  }
  f.read_block_into(name, start, count, out.data);  // checks the block against the dataset
  if (check_values) check_weight_values(f, name, out.data);
}

}  // namespace ufno
