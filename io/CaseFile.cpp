#include "io/CaseFile.hpp"

#include <cmath>

#include "core/NumberText.hpp"
#include "io/Hdf5File.hpp"
#include "io/PhysicalLimits.hpp"

namespace ufno {

namespace {

void check_units(const h5::File& f, const std::string& name, const std::string& units) {
  auto u = f.string_attribute(name, "units");
  if (!u) throw InputError(f.path(), name, "has no units attribute (expected \"" + units + "\")");
  if (*u != units)
    throw InputError(f.path(), name,
                     "units \"" + *u + "\" are not supported (expected \"" + units + "\")");
}

// Checks type, shape and units (the same on every rank), then reads [start, start + count).
std::vector<double> read_array(const h5::File& f, const std::string& name,
                               const std::vector<std::size_t>& shape, const std::string& units,
                               const std::vector<std::size_t>& start,
                               const std::vector<std::size_t>& count) {
  if (!f.has_dataset(name)) throw InputError(f.path(), name, "dataset is missing");
  const h5::Kind k = f.kind(name);
  if (k != h5::Kind::Float)
    throw InputError(
        f.path(), name,
        k == h5::Kind::Integer ? "must be a floating-point dataset" : "has a non-numeric datatype");
  const auto s = f.shape(name);
  if (s != shape)
    throw InputError(f.path(), name,
                     "shape " + shape_string(s) + " but expected " + shape_string(shape));
  check_units(f, name, units);
  return f.read_block_double(name, start, count);
}

std::vector<double> read_whole(const h5::File& f, const std::string& name,
                               const std::vector<std::size_t>& shape, const std::string& units) {
  return read_array(f, name, shape, units, std::vector<std::size_t>(shape.size(), 0), shape);
}

void check_finite(const std::string& path, const std::string& name, const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) throw InputError(path, name, "contains NaN or Inf");
}

double read_scalar(const h5::File& f, const std::string& name, const std::string& units) {
  if (!f.has_dataset(name)) throw InputError(f.path(), name, "dataset is missing");
  h5::Numeric n = f.read_numeric(name);
  if (n.values.size() != 1)
    throw InputError(f.path(), name, "must be a scalar, has shape " + shape_string(n.shape));
  if (!std::isfinite(n.values[0])) throw InputError(f.path(), name, "is NaN or Inf");
  check_units(f, name, units);
  return n.values[0];
}

// The grid's values of this rank's block: finite, physically possible, consistent (messages name
// the cell, counted from 1 as in ECLIPSE).
void check_grid_values(const std::string& path, const ReservoirCase& c) {
  check_finite(path, "PERMX", c.permx);
  check_finite(path, "PERMZ", c.permz);
  check_finite(path, "PORO", c.poro);
  check_finite(path, "DR", c.dr);
  check_finite(path, "DZ", c.dz);
  for (std::size_t i = 0; i < c.permx.size(); ++i) {
    const int x = c.x0 + int(i / c.ly), y = c.y0 + int(i % c.ly);
    // 1-based, as ECLIPSE users count cells (K for layers, I for radial cells).
    const std::string at =
        " at layer " + std::to_string(x + 1) + ", radial cell " + std::to_string(y + 1);
    if (c.permx[i] < 0)
      throw InputError(path, "PERMX", "negative permeability " + number_text(c.permx[i]) + at);
    if (c.permz[i] < 0)
      throw InputError(path, "PERMZ", "negative permeability " + number_text(c.permz[i]) + at);
    if (c.permx[i] > 0 && c.permz[i] == 0)
      throw InputError(path, "PERMZ", "zero in an active cell (PERMX > 0)" + at);
    if (c.permx[i] > 0 && !(c.poro[i] > 0 && c.poro[i] <= 1))
      throw InputError(path, "PORO", "porosity " + number_text(c.poro[i]) + " outside (0, 1]" + at);
    check_physical(path, "PERMX", c.permx[i], at);
    check_physical(path, "PERMZ", c.permz[i], at);
  }
  for (double v : c.dr)
    if (v <= 0) throw InputError(path, "DR", "cell widths must be positive");
  for (double v : c.dz)
    if (v <= 0) throw InputError(path, "DZ", "layer thicknesses must be positive");
  for (double v : c.dr) check_physical(path, "DR", v);
  for (double v : c.dz) check_physical(path, "DZ", v);
}

// Perforation: a per-layer flag, or the first and last perforated layer (1-based, inclusive,
// as ECLIPSE COMPDAT K1/K2); a perforated layer must be active at the well.
void read_perforation(const h5::File& f, const std::string& path, ReservoirCase& c) {
  c.perforated.assign(c.nx, 0);
  if (f.has_dataset("PERF")) {
    h5::Numeric p = f.read_numeric("PERF");
    check_units(f, "PERF", "1");
    if (p.shape != std::vector<std::size_t>{std::size_t(c.nx)})
      throw InputError(
          path, "PERF",
          "shape " + shape_string(p.shape) + " but expected (" + std::to_string(c.nx) + ")");
    for (int x = 0; x < c.nx; ++x) {
      if (p.values[x] != 0 && p.values[x] != 1)
        throw InputError(path, "PERF", "flags must be 0 or 1");
      c.perforated[x] = int(p.values[x]);
    }
  } else if (f.has_dataset("PERF_TOP") || f.has_dataset("PERF_BOTTOM")) {
    const double top = read_scalar(f, "PERF_TOP", "1");
    const double bottom = read_scalar(f, "PERF_BOTTOM", "1");
    if (top != std::floor(top) || top < 1 || top > c.nx)
      throw InputError(path, "PERF_TOP", "must be a layer index in 1.." + std::to_string(c.nx));
    if (bottom != std::floor(bottom) || bottom < top || bottom > c.nx)
      throw InputError(path, "PERF_BOTTOM",
                       "must be a layer index in PERF_TOP.." + std::to_string(c.nx));
    for (int x = int(top) - 1; x < int(bottom); ++x) c.perforated[x] = 1;
  } else {
    throw InputError(path, "PERF", "dataset is missing (give PERF, or PERF_TOP and PERF_BOTTOM)");
  }
  int n_perf = 0;
  for (int x = 0; x < c.nx; ++x)
    if (c.perforated[x]) {
      ++n_perf;
      // Checked by the block that holds the well column.
      const bool here = c.y0 == 0 && c.ly > 0 && x >= c.x0 && x < c.x0 + c.lx;
      if (here && !c.active(x - c.x0, 0))
        throw InputError(path, "PERF",
                         "layer " + std::to_string(x + 1) +
                             " is perforated but inactive (PERMX = 0 at the well)");
    }
  if (n_perf == 0) throw InputError(path, "PERF", "no layer is perforated");
}

// The scalars of the case and its report times (TIMES, optional).
void read_conditions(const h5::File& f, const std::string& path, ReservoirCase& c) {
  const auto scalars = case_scalar_limits();  // every one read before any is checked
  for (const PhysicalLimit* l : scalars) c.*l->scalar = read_scalar(f, l->name, l->units);
  for (const PhysicalLimit* l : scalars) check_physical(path, l->name, c.*l->scalar);
  if (f.has_dataset("TIMES")) {
    h5::Numeric t = f.read_numeric("TIMES");
    if (t.shape.size() != 1 || t.values.empty())
      throw InputError(path, "TIMES", "must be a 1-D list of report times");
    check_units(f, "TIMES", "day");
    for (std::size_t i = 0; i < t.values.size(); ++i)
      if (!std::isfinite(t.values[i]) || t.values[i] <= 0 || (i && t.values[i] <= t.values[i - 1]))
        throw InputError(path, "TIMES", "must be positive and increasing");
    c.times_days = t.values;
  }
}

}  // namespace

ReservoirCase read_case(const std::string& path, int ex, int ey, CaseBlock block, MPI_Comm comm) {
  h5::File f = h5::File::open_read(path, comm);
  ReservoirCase c;
  c.path = path;
  if (!f.has_dataset("PERMX")) throw InputError(path, "PERMX", "dataset is missing");
  auto s = f.shape("PERMX");
  if (s.size() != 2) throw InputError(path, "PERMX", "must be 2-D (X layers, Y radial cells)");
  c.nx = int(s[0]);
  c.ny = int(s[1]);
  if ((ex && c.nx != ex) || (ey && c.ny != ey))
    throw InputError(
        path, "PERMX",
        "grid " + shape_string(s) + " differs from the model grid (" + std::to_string(ex) + "," +
            std::to_string(ey) +
            "); resample it: ufno_import CASE.h5 --like A_CASE_ON_THE_MODEL_GRID.h5 --out NEW.h5");
  if (block.lx < 0) block = {0, 0, c.nx, c.ny};
  c.x0 = block.x0;
  c.y0 = block.y0;
  c.lx = block.lx;
  c.ly = block.ly;
  // Every collective read comes before any check of the values a rank read, so that one rank's
  // bad block cannot leave the others waiting in a read.
  const std::vector<std::size_t> xy{s[0], s[1]}, at{std::size_t(c.x0), std::size_t(c.y0)},
      n{std::size_t(c.lx), std::size_t(c.ly)};
  c.permx = read_array(f, "PERMX", xy, "mD", at, n);
  c.permz = read_array(f, "PERMZ", xy, "mD", at, n);
  c.poro = read_array(f, "PORO", xy, "1", at, n);
  c.dr = read_whole(f, "DR", {s[1]}, "m");
  c.dz = read_whole(f, "DZ", {s[0]}, "m");
  check_grid_values(path, c);
  read_perforation(f, path, c);
  read_conditions(f, path, c);
  return c;
}

std::vector<std::string> out_of_training_range(const ReservoirCase& c) {
  std::vector<std::string> w;
  auto check = [&](const char* name, double v, double lo, double hi, const char* units) {
    if (v < lo || v > hi)
      w.push_back(std::string(name) + " = " + number_text(v) + " " + units +
                  " is outside the training range [" + number_text(lo) + ", " + number_text(hi) +
                  "]");
  };
  check("INJ_RATE", c.rate_mt_per_year, 0.2, 2.0, "Mt/yr");
  check("TEMP", c.temperature_c, 30, 180, "degC");
  check("PRESSURE", c.pressure_bar, 100, 300, "bar");
  check("SWI", c.swi, 0.1, 0.3, "");
  check("VG_LAMBDA", c.vg_lambda, 0.3, 0.7, "");
  for (auto& line : permeability_out_of_training_range(c)) w.push_back(std::move(line));
  return w;
}

std::vector<std::string> permeability_out_of_training_range(const ReservoirCase& c) {
  std::vector<std::string> w;
  // Permeability: the training sampler's kr lies in [2, 10000] mD and kz down to 0.002 mD
  // (kz/kr >= 0.001); the count of active cells beyond is what the user needs to judge.
  long kr_out = 0, kz_out = 0;
  for (std::size_t i = 0; i < c.permx.size(); ++i) {
    if (!(c.permx[i] > 0)) continue;
    kr_out += c.permx[i] < 2.0 || c.permx[i] > 10000.0;
    kz_out += c.permz[i] < 0.002 || c.permz[i] > 10000.0;
  }
  if (kr_out)
    w.push_back("PERMX outside the training range [2, 10000] mD in " + std::to_string(kr_out) +
                " active cell(s)");
  if (kz_out)
    w.push_back("PERMZ outside the training range [0.002, 10000] mD in " + std::to_string(kz_out) +
                " active cell(s)");
  return w;
}

long low_permeability_cells(const ReservoirCase& c) {
  long n = 0;
  for (double k : c.permx)
    if (k > 0 && k <= 1.0) ++n;
  return n;
}

std::string low_permeability_warning(long cells) {
  return "PERMX <= 1 mD in " + std::to_string(cells) +
         " active cell(s): the paper's encoding ln(k)/15 maps 1 mD to 0, which the network reads "
         "as outside the formation";
}

}  // namespace ufno
