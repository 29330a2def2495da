#include "io/NestedSite.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/InputError.hpp"
#include "io/Hdf5File.hpp"
#include "io/OutputFile.hpp"

namespace ufno {

namespace {

constexpr const char* kFormat = "ufno-nested-site";
constexpr int kFormatVersion = 1;
// 50 times the reference's largest level (LGR 40 x 40 x 50) and bounded, so a deck or a forged
// layout cannot make the import or a reader allocate without limit (a level's channels at 24
// report times: 3.2 GB at this bound).
constexpr std::size_t kMaxLevelCells = std::size_t(1) << 22;
constexpr int kMaxWells = 64;
constexpr int kMaxTimes = 1000;

std::string level_name(int lgr) { return lgr == 0 ? "GLOBAL" : "LGR" + std::to_string(lgr); }

template <std::size_t N>
std::vector<int> as_vector(const std::array<int, N>& a) {
  return std::vector<int>(a.begin(), a.end());
}

template <std::size_t N>
std::array<int, N> int_array(const h5::File& f, const std::string& object,
                             const std::string& attr) {
  const auto v = f.numeric_attribute(attr, object);
  if (v.size() != N)
    throw InputError(f.path(), object + "@" + attr, "must hold " + std::to_string(N) + " integers");
  std::array<int, N> a{};
  for (std::size_t i = 0; i < N; ++i) {
    if (!(std::abs(v[i]) < 1e8) || v[i] != std::floor(v[i]))
      throw InputError(f.path(), object + "@" + attr, "must hold integers");
    a[i] = int(v[i]);
  }
  return a;
}

double number(const h5::File& f, const std::string& object, const std::string& attr) {
  const auto v = f.numeric_attribute(attr, object);
  if (v.size() != 1 || !std::isfinite(v[0]))
    throw InputError(f.path(), object + "@" + attr, "must be one finite number");
  return v[0];
}

// A well name that is also a safe HDF5 group name.
void check_well_name(const std::string& origin, const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 8 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  if (!ok)
    throw InputError(origin, "WELSPECS",
                     "well name '" + name +
                         "' must be 1 to 8 letters, digits, '_' or '-' (it names the well's "
                         "group in the site and prediction files)");
}

void check_level(const NestedSite& site, const NestedLevel& l, const std::string& origin) {
  const std::string where = l.group() + (l.carfin.empty() ? "" : " (CARFIN " + l.carfin + ")");
  for (int a = 0; a < 3; ++a)
    if (l.shape[a] < 1 || l.cells() > kMaxLevelCells)
      throw InputError(origin, where,
                       "the level's shape must be positive and at most " +
                           std::to_string(kMaxLevelCells) + " cells");
  if (l.lgr() == 0) return;
  const NestedLevel& src = site.source_of(l);
  for (int a = 0; a < 3; ++a) {
    const int lo = l.coarse_window[2 * a], hi = l.coarse_window[2 * a + 1];
    if (lo < 0 || hi > src.shape[a] || lo >= hi)
      throw InputError(origin, where,
                       "the coarse window lies outside " + src.group() +
                           " (widen the GLOBAL grid or move the refinement inwards)");
    if (l.coarse_repeat[a] < 1 || (hi - lo) * l.coarse_repeat[a] != l.shape[a])
      throw InputError(origin, where,
                       "the coarse window repeated does not give the level's shape along axis " +
                           std::to_string(a + 1) + ": not a nest of the reference's structure");
  }
}

}  // namespace

int NestedLevel::lgr() const {
  if (name == "GLOBAL") return 0;
  return name.size() == 4 && name.rfind("LGR", 0) == 0 ? name[3] - '0' : -1;
}

const NestedLevel& NestedSite::level(const std::string& well, int lgr) const {
  for (const auto& l : levels)
    if (l.well == well && l.lgr() == lgr) return l;
  throw InputError(well, level_name(lgr), "no such level in the site");
}

const NestedLevel& NestedSite::source_of(const NestedLevel& l) const {
  return l.lgr() == 1 ? global() : level(l.well, l.lgr() - 1);
}

void check_nested_site(const NestedSite& site, const std::string& origin) {
  if (site.levels.empty() || site.global().name != "GLOBAL")
    throw InputError(origin, "GLOBAL", "the site has no GLOBAL level");
  if (site.wells.empty() || int(site.wells.size()) > kMaxWells)
    throw InputError(origin, "WELSPECS",
                     "a site needs 1 to " + std::to_string(kMaxWells) + " injection wells");
  if (site.times_days.empty() || int(site.times_days.size()) > kMaxTimes)
    throw InputError(origin, "TSTEP",
                     "a site needs 1 to " + std::to_string(kMaxTimes) + " report times");
  for (std::size_t t = 0; t < site.times_days.size(); ++t)
    if (!(site.times_days[t] > (t ? site.times_days[t - 1] : 0.0)))
      throw InputError(origin, "TSTEP", "report times must increase (a step of 0 days)");
  if (site.levels.size() != 1 + kNestedLgrLevels * site.wells.size())
    throw InputError(origin, "CARFIN", "every well needs exactly the levels LGR1..LGR4");
  for (std::size_t w = 0; w < site.wells.size(); ++w) {
    check_well_name(origin, site.wells[w].name);
    for (int k = 1; k <= kNestedLgrLevels; ++k) {
      const NestedLevel& l = site.levels[1 + w * kNestedLgrLevels + (k - 1)];
      if (l.well != site.wells[w].name || l.lgr() != k)
        throw InputError(origin, site.wells[w].name,
                         "levels out of order (GLOBAL, then LGR1..LGR4 per well)");
      if (l.shape != site.level(site.wells[0].name, k).shape)
        throw InputError(origin, l.group() + " (CARFIN " + l.carfin + ")",
                         "has another shape than " + site.wells[0].name + "'s " + l.name +
                             ": one model per level serves every well");
    }
  }
  for (const auto& l : site.levels) check_level(site, l, origin);
}

bool is_nested_site_file(const std::string& path) {
  h5::silence_errors();
  try {
    const h5::File f = h5::File::open_read(path);
    const auto fmt = f.string_attribute("/", "format");
    return fmt && *fmt == kFormat;
  } catch (const std::exception&) {
    return false;
  }
}

NestedSite read_nested_site(const std::string& path) {
  const h5::File f = h5::File::open_read(path);
  if (f.string_attribute_required("format") != kFormat)
    throw InputError(path, "format", std::string("is not '") + kFormat + "'");
  if (number(f, "/", "format_version") != kFormatVersion)
    throw InputError(path, "format_version", "is not " + std::to_string(kFormatVersion));
  NestedSite site;
  site.times_days = f.read_numeric("times_days", kMaxTimes).values;
  std::istringstream names(f.string_attribute_required("wells"));
  for (std::string w; names >> w;) {
    check_well_name(path, w);
    if (site.wells.size() == kMaxWells) throw InputError(path, "wells", "too many wells");
    NestedWell well{w};
    const auto ij = std::array<double, 4>{number(f, w, "i"), number(f, w, "j"), number(f, w, "k1"),
                                          number(f, w, "k2")};
    well.i = int(ij[0]), well.j = int(ij[1]), well.k1 = int(ij[2]), well.k2 = int(ij[3]);
    well.rate_mt_per_year = number(f, w, "rate");
    if (f.has_attribute("surface_rate", w)) well.surface_rate = number(f, w, "surface_rate");
    site.wells.push_back(well);
  }
  auto read_level = [&](const std::string& well, int lgr) {
    NestedLevel l;
    l.name = level_name(lgr);
    l.well = well;
    const std::string g = l.group();
    const auto s = f.shape(g + "/input");
    if (s.size() != 6 || s[0] != 1 || s[4] != site.times_days.size() || s[5] != kNestedChannels)
      throw InputError(path, g + "/input",
                       "has shape " + shape_string(s) + ", not (1, nx, ny, nz, " +
                           std::to_string(site.times_days.size()) + ", 8)");
    for (int a = 0; a < 3; ++a) l.shape[a] = int(std::min<std::size_t>(s[1 + a], 1u << 30));
    if (lgr > 0) {
      l.carfin = f.string_attribute(g, "carfin").value_or("");
      l.box = int_array<6>(f, g, "box");
      l.refinement = int_array<3>(f, g, "refinement");
      l.coarse_window = int_array<6>(f, g, "coarse_window");
      l.coarse_repeat = int_array<3>(f, g, "coarse_repeat");
    }
    site.levels.push_back(l);
  };
  read_level("", 0);
  for (const auto& w : site.wells)
    for (int k = 1; k <= kNestedLgrLevels; ++k) read_level(w.name, k);
  check_nested_site(site, path);
  return site;
}

void write_nested_site(const std::string& path, const NestedSite& site,
                       const std::vector<NestedLevelData>& data, const std::string& source) {
  check_nested_site(site, source);
  OutputFile out(path);
  h5::File& f = out.h5();
  const std::size_t T = site.times_days.size();
  f.write_doubles("times_days", {T}, site.times_days.data());
  f.write_string_attribute("times_days", "units", "day");
  for (std::size_t n = 0; n < site.levels.size(); ++n) {
    const NestedLevel& l = site.levels[n];
    const std::string g = l.group();
    const std::vector<std::size_t> cells{std::size_t(l.shape[0]), std::size_t(l.shape[1]),
                                         std::size_t(l.shape[2])};
    out.write_block(g + "/input", {1, cells[0], cells[1], cells[2], T, kNestedChannels},
                    {0, 0, 0, 0, 0, 0}, {1, cells[0], cells[1], cells[2], T, kNestedChannels},
                    data[n].input, "1",
                    "input channels x, y, depth, time, injection, pressure, temperature, "
                    "permeability (docs/nested-sites.md), (case, x, y, z, time, channel)");
    for (const auto& [name, v] : {std::pair{"/cell_x", &data[n].cell_x},
                                  {"/cell_y", &data[n].cell_y},
                                  {"/cell_depth", &data[n].cell_depth}}) {
      f.write_doubles(g + name, cells, v->data());
      f.write_string_attribute(g + name, "units", "m");
    }
    f.write_string_attribute(g, "level", l.name);
    if (l.lgr() == 0) continue;
    f.write_string_attribute(g, "carfin", l.carfin);
    f.write_int_attribute(g, "box", as_vector(l.box));
    f.write_int_attribute(g, "refinement", as_vector(l.refinement));
    f.write_int_attribute(g, "coarse_window", as_vector(l.coarse_window));
    f.write_int_attribute(g, "coarse_repeat", as_vector(l.coarse_repeat));
  }
  std::string names;
  for (const auto& w : site.wells) {
    names += (names.empty() ? "" : " ") + w.name;
    for (const auto& [attr, v] : {std::pair{"i", w.i}, {"j", w.j}, {"k1", w.k1}, {"k2", w.k2}})
      f.write_int_attribute(w.name, attr, {v});
    f.write_double_attribute(w.name, "rate", w.rate_mt_per_year);
    f.write_double_attribute(w.name, "surface_rate", w.surface_rate);
  }
  out.set_attribute("format", kFormat);
  f.write_int_attribute("/", "format_version", {kFormatVersion});
  out.set_attribute("source", source);
  out.set_attribute("wells", names);
  out.set_attribute("producer", "ufno_import");
  out.commit();
}

}  // namespace ufno
