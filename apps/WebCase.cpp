#include "apps/WebCase.hpp"

#include <cmath>

#include "core/InputError.hpp"

namespace ufno {

using json = nlohmann::json;

namespace {

// A number at key (when present) within [lo, hi]; hard physical limits, not the training ranges
// (those only warn, as for case files).
void number(const json& j, const char* key, double lo, double hi, double& v,
            const std::string& prefix = "") {
  if (!j.contains(key)) return;
  const auto& x = j.at(key);
  if (!x.is_number()) throw RequestError{prefix + key, "must be a number"};
  const double d = x.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi)
    throw RequestError{prefix + key, "must be within [" + json(lo).dump() + ", " + json(hi).dump() +
                                         "], got " + x.dump()};
  v = d;
}

void integer(const json& j, const char* key, int lo, int hi, int& v) {
  double d = v;
  number(j, key, lo, hi, d);
  if (j.contains(key) && d != std::floor(d)) throw RequestError{key, "must be a whole number"};
  v = int(d);
}

}  // namespace

CaseRequest parse_case_request(const json& j) {
  if (!j.is_object()) throw RequestError{"", "the request body must be a JSON object"};
  static const std::vector<std::string> known{
      "site",      "rate_mt_per_year", "temperature_c", "pressure_bar",    "swi",
      "vg_lambda", "perf_top",         "perf_bottom",   "field",           "perm_md",
      "poro",      "anisotropy",       "geostat",       "critical_dp_bar", "max_dp_limit_bar"};
  for (const auto& [k, v] : j.items())
    if (std::find(known.begin(), known.end(), k) == known.end())
      throw RequestError{k, "is not a known parameter"};
  CaseRequest r;
  if (j.contains("site")) {
    if (!j["site"].is_string()) throw RequestError{"site", "must be a string"};
    r.site = j["site"].get<std::string>();
  }
  number(j, "rate_mt_per_year", 0.01, 10.0, r.rate_mt_per_year);
  number(j, "temperature_c", 1.0, 250.0, r.temperature_c);
  number(j, "pressure_bar", 1.0, 1000.0, r.pressure_bar);
  number(j, "swi", 0.0, 0.9, r.swi);
  number(j, "vg_lambda", 0.05, 1.0, r.vg_lambda);
  integer(j, "perf_top", 0, 100000, r.perf_top);
  integer(j, "perf_bottom", 0, 100000, r.perf_bottom);
  number(j, "critical_dp_bar", 0.0, 1000.0, r.critical_dp_bar);
  number(j, "max_dp_limit_bar", 0.0, 10000.0, r.max_dp_limit_bar);
  if (j.contains("field")) {
    if (!j["field"].is_string()) throw RequestError{"field", "must be a string"};
    r.field = j["field"].get<std::string>();
    if (r.field != "site" && r.field != "homogeneous" && r.field != "geostat")
      throw RequestError{"field", "must be \"site\", \"homogeneous\" or \"geostat\""};
  }
  number(j, "perm_md", 2.0, 10000.0, r.perm_md);
  number(j, "poro", 0.01, 0.6, r.poro);
  number(j, "anisotropy", 1e-3, 1.0, r.anisotropy);
  if (j.contains("geostat")) {
    const auto& g = j["geostat"];
    if (!g.is_object()) throw RequestError{"geostat", "must be an object"};
    auto& p = r.geostat;
    for (const auto& range : kGeostatRanges)  // screening/GeostatField.hpp
      number(g, range.name, range.valid.lo, range.valid.hi, p.*range.value, "geostat.");
    double seed = double(p.seed);
    number(g, "seed", 0.0, 4294967295.0, seed, "geostat.");
    p.seed = (unsigned long)seed;
    if (g.contains("structure")) {
      if (!g["structure"].is_string()) throw RequestError{"geostat.structure", "must be a string"};
      p.structure = g["structure"].get<std::string>();
      if (p.structure != "gaussian" && p.structure != "layered")
        throw RequestError{"geostat.structure", "must be \"gaussian\" or \"layered\""};
    }
  }
  return r;
}

int formation_layers(const ReservoirCase& c) {
  int n = 0;
  for (int x = 0; x < c.nx; ++x)
    for (int y = 0; y < c.ny; ++y)
      if (c.active(x, y)) {
        n = x + 1;
        break;
      }
  return n;
}

ReservoirCase build_case(const CaseRequest& r, const ReservoirCase& site) {
  ReservoirCase c = site;
  c.path = "request";
  c.rate_mt_per_year = r.rate_mt_per_year;
  c.temperature_c = r.temperature_c;
  c.pressure_bar = r.pressure_bar;
  c.swi = r.swi;
  c.vg_lambda = r.vg_lambda;
  const int layers = formation_layers(site);
  if (r.perf_top || r.perf_bottom) {
    const int top = r.perf_top ? r.perf_top : 1, bottom = r.perf_bottom ? r.perf_bottom : layers;
    if (top < 1 || bottom > layers || top > bottom)
      throw RequestError{"perf_top",
                         "the perforation must lie within the formation's layers 1 to " +
                             std::to_string(layers) + " with top <= bottom (got " +
                             std::to_string(top) + " to " + std::to_string(bottom) + ")"};
    for (int x = 0; x < c.nx; ++x) c.perforated[x] = x + 1 >= top && x + 1 <= bottom;
  }
  if (r.field == "homogeneous") {
    for (std::size_t i = 0; i < c.permx.size(); ++i)
      if (c.permx[i] > 0) {
        c.permx[i] = r.perm_md;
        c.permz[i] = r.perm_md * r.anisotropy;
        c.poro[i] = r.poro;
      }
  } else if (r.field == "geostat") {
    try {
      apply_geostat_field(c, r.geostat);
    } catch (const InputError& e) {
      throw RequestError{"geostat." + e.field(), e.what()};
    }
  }
  return c;
}

}  // namespace ufno
