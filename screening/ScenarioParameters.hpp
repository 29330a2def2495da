#pragma once
// The parameters a sweep's scenario may set, each once: its name in a sweep configuration's
// "parameters", what it changes (a value of the base case, the perforation, the generated
// field's parameters, or which base case), its lower limit (beyond the case fields' physical
// limits, io/PhysicalLimits.hpp) and how it is applied. The case's own scalars are named by
// io/PhysicalLimits.hpp's table; the others here. read_sweep_config checks names and values
// against this table, and make_scenario_case applies it (docs/sweeps.md).
#include <cstddef>
#include <string>

#include "io/CaseFile.hpp"
#include "screening/GeostatField.hpp"

namespace ufno {

enum class ScenarioTarget {
  Case,               // a value of the case (value), or a multiplier (scale)
  PerforationTop,     // the first perforated layer (from 1)
  PerforationBottom,  // the last perforated layer
  Geostat,            // the generated field's parameters (geostat); null: the field's seed
  BaseCase,           // an index into the sweep's base_cases
};

struct ScenarioParameter {
  const char* name;
  ScenarioTarget target;
  double ReservoirCase::*value;               // Case parameters that set a value
  void (*scale)(ReservoirCase& c, double v);  // Case parameters that are multipliers
  double GeostatParams::*geostat;             // Geostat parameters (null: the field's seed)
  // Values must be > (or, if min_inclusive, >=) min; NaN: no limit of its own.
  double min;
  bool min_inclusive;
  const char* below_min;  // the message for a value below it
};

// null for a name no scenario may set.
const ScenarioParameter* scenario_parameter(const std::string& name);
// The one parameter of a target other than Case and Geostat.
const ScenarioParameter& scenario_parameter(ScenarioTarget t);

// Applies a Case parameter's value v to c.
void set_case_parameter(const ScenarioParameter& p, ReservoirCase& c, double v);

// InputError(path, "parameters.<name>", why) for a value a scenario may not take: outside the
// case field's physical limits or below the parameter's own limit.
void check_scenario_value(const std::string& path, const ScenarioParameter& p, double v);

}  // namespace ufno
