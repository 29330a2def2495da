#pragma once
// The web page's sweep form (POST /api/sweeps) as a sweep configuration for ufno_sweep
// (docs/sweeps.md): one of the server's sites as the base case, a range [lo, hi] for each chosen
// parameter, the number of Latin-hypercube scenarios (up to the server's limit), a seed, the
// area-of-review pressure and decision thresholds. The form's own shape is checked here
// (RequestError naming the form's field); the values are then checked by the sweep's own
// reader (SweepRunner), as for a configuration file.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/WebCase.hpp"

namespace ufno {

struct SweepSite {
  std::string name, path;  // as /api/info names it; its case file
  int layers = 0;          // formation layers (perforations are checked against them)
  int perf_top = 0, perf_bottom = 0;
};

// The parameters the form may give ranges for (ScenarioParameters' names; not BASE_CASE, the
// form has one site, nor FIELD_SEED, drawn from the seed).
const std::vector<std::string>& sweep_form_parameters();

// The configuration of the form `form` (a JSON object) on one of `sites` with `models` (its
// "out" is the runner's to set). Throws RequestError for an unknown key or parameter, an unknown
// site, a value of the wrong shape, a scenario count outside 1..max_scenarios or a perforation
// outside the site.
nlohmann::json sweep_config_from_form(const nlohmann::json& form,
                                      const std::vector<SweepSite>& sites,
                                      const std::vector<std::string>& models, int max_scenarios);

// The form's field for a key of the configuration it made ("samples" -> "scenarios",
// "kpi.critical_dp_bar" -> "critical_dp_bar"; the others are the same).
std::string sweep_form_field(const std::string& config_key);

}  // namespace ufno
