#include "screening/PredictionFile.hpp"

#include <cmath>

#include "core/InputError.hpp"
#include "io/CaseEncoding.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

namespace {

// At most this many report times of the case's grid are read (not whatever size a file
// declares).
constexpr std::size_t kMaxReportTimes = 4096;

// One field as (T, X, Y) of the case's grid, finite; T from the file, the same for both fields.
std::vector<float> read_field(const h5::File& f, const std::string& name, const ReservoirCase& c,
                              std::size_t& nt) {
  if (!f.has_dataset(name)) throw InputError(f.path(), name, "dataset is missing");
  std::vector<std::size_t> s;
  auto v = f.read_floats(name, &s, kMaxReportTimes * c.nx * c.ny);
  if (s.size() == 4 && s[0] == 1) s.erase(s.begin());
  if (s.size() != 3 || s[1] != std::size_t(c.nx) || s[2] != std::size_t(c.ny) || s[0] < 1)
    throw InputError(f.path(), name,
                     "must be (T, X, Y) or (1, T, X, Y) on the case's " + std::to_string(c.nx) +
                         " x " + std::to_string(c.ny) + " grid");
  if (nt && s[0] != nt)
    throw InputError(f.path(), name, "has another number of report times than SG");
  nt = s[0];
  for (float x : v)
    if (!std::isfinite(x)) throw InputError(f.path(), name, "contains NaN or Inf");
  return v;
}

}  // namespace

CaseFields read_case_fields(const std::string& path, const ReservoirCase& c) {
  const auto f = h5::File::open_read(path);
  CaseFields r;
  std::size_t nt = 0;
  r.sg = read_field(f, "SG", c, nt);
  r.dp = read_field(f, "dP", c, nt);
  if (f.has_dataset("TIMES")) {
    const auto t = f.read_numeric("TIMES", kMaxReportTimes);
    if (t.shape.size() != 1) throw InputError(path, "TIMES", "must be one-dimensional");
    r.times_days = t.values;
  } else {
    r.times_days = c.times_days.empty() ? paper_times_days(int(nt)) : c.times_days;
  }
  if (r.times_days.size() != nt)
    throw InputError(path, "TIMES", "must give one time per report of SG and dP");
  for (std::size_t t = 0; t < nt; ++t)
    if (!(r.times_days[t] > (t ? r.times_days[t - 1] : 0.0)))
      throw InputError(path, "TIMES", "must be positive and increasing");
  return r;
}

}  // namespace ufno
