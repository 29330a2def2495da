#include "io/CaseWriter.hpp"

#include <unistd.h>

#include <cstdio>

#include "io/Hdf5File.hpp"
#include "io/PhysicalLimits.hpp"
#include "io/Temporaries.hpp"

namespace ufno {

void write_case(const std::string& path, const ReservoirCase& c, const std::string& description,
                const std::string& generator) {
  if (c.lx != c.nx || c.ly != c.ny)
    throw std::invalid_argument("write_case: not a whole-grid case");
  remove_stale_temporaries(path);
  const std::string tmp = temporary_name(path, ::getpid());
  try {
    auto f = h5::File::create(tmp, MPI_COMM_NULL, path);  // errors name the output
    const std::vector<std::size_t> xy{std::size_t(c.nx), std::size_t(c.ny)};
    auto array = [&](const char* name, const std::vector<std::size_t>& shape,
                     const std::vector<double>& v, const char* units) {
      f.write_doubles(name, shape, v.data());
      f.write_string_attribute(name, "units", units);
    };
    auto scalar = [&](const char* name, double v, const char* units) {
      f.write_doubles(name, {}, &v);
      f.write_string_attribute(name, "units", units);
    };
    array("PERMX", xy, c.permx, "mD");
    array("PERMZ", xy, c.permz, "mD");
    array("PORO", xy, c.poro, "1");
    array("DR", {std::size_t(c.ny)}, c.dr, "m");
    array("DZ", {std::size_t(c.nx)}, c.dz, "m");
    array("PERF", {std::size_t(c.nx)},
          std::vector<double>(c.perforated.begin(), c.perforated.end()), "1");
    for (const PhysicalLimit* l : case_scalar_limits()) scalar(l->name, c.*l->scalar, l->units);
    if (!c.times_days.empty()) array("TIMES", {c.times_days.size()}, c.times_days, "day");
    f.write_string_attribute("/", "description", description);
    f.write_string_attribute("/", "generator", generator);
    f.close();
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InputError(path, "", "could not be created (renaming its complete temporary failed)");
  }
}

}  // namespace ufno
