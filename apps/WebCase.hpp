#pragma once
// The case a web request describes: a site (one of the server's template cases, which gives the
// grid, the formation's active cells and its own permeability and porosity) with the request's
// operating and fluid parameters, perforation, and permeability field choice: the site's own
// field, a homogeneous field, or a geostatistical one (screening/GeostatField.hpp).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/CaseFile.hpp"
#include "screening/GeostatField.hpp"

namespace ufno {

// A request whose content is wrong (HTTP 422), with the JSON path of the offending field.
struct RequestError {
  std::string field, message;
};

struct CaseRequest {
  std::string site;  // template case name; empty: the first site
  double rate_mt_per_year = 1.0, temperature_c = 80.0, pressure_bar = 200.0, swi = 0.2,
         vg_lambda = 0.5;
  int perf_top = 0, perf_bottom = 0;  // 1-based layers; 0: the site's perforation
  std::string field = "site";         // "site", "homogeneous" or "geostat"
  double perm_md = 100.0, poro = 0.2, anisotropy = 0.1;  // homogeneous field
  GeostatParams geostat;                                 // geostat field
  double critical_dp_bar = 10.0;                         // for the area-of-review KPI
  // A limit on the maximum pressure buildup (a fracture or caprock margin) in bar, 0 for none:
  // the reply says whether the KPI's interval lies below, above or across it.
  double max_dp_limit_bar = 0;
};

// Parses and range-checks a request body; throws RequestError (field as a JSON path).
CaseRequest parse_case_request(const nlohmann::json& j);

// The case of a request on its site; throws RequestError for a perforation outside the formation.
ReservoirCase build_case(const CaseRequest& r, const ReservoirCase& site);

// Layers of the formation (active in any radial cell), counted from the top.
int formation_layers(const ReservoirCase& c);

}  // namespace ufno
