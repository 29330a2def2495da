#pragma once
// The bounds outside which a case's scalar or cell value is physically impossible for a CO2
// storage site (not merely outside the models' training ranges, which only warn): one source for
// the case reader and the sweep configurations. A value outside is refused naming the field, so
// no 1e300 degC or 1e30 mD reaches a network and comes out as an ordinary-looking field. The
// table names the case's fields once: the case reader and the sweep's scenario parameters
// (screening/ScenarioParameters.hpp) take the scalars' names from it.
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

// A scalar member of a case (an alias: nvcc's front end rewrites the bare pointer-to-member
// declaration with parentheses that the host compiler then warns about).
using CaseScalar = double ReservoirCase::*;

struct PhysicalLimit {
  const char* name;
  double lo, hi;  // allowed: lo < v <= hi if lo_open, else lo <= v <= hi
  bool lo_open;
  const char* units;
  CaseScalar scalar;  // the case's value of this name; null for a per-cell field
};

// INJ_RATE, TEMP, PRESSURE, SWI, VG_LAMBDA, PERMX, PERMZ, PORO, DR, DZ; nullptr for other names.
const PhysicalLimit* physical_limit(const std::string& name);

// The limits of the case's scalars (INJ_RATE, TEMP, PRESSURE, SWI, VG_LAMBDA), in that order.
std::vector<const PhysicalLimit*> case_scalar_limits();

// Why v is not a possible value of `name` ("" if it is): not finite, or outside its limit.
std::string physical_violation(const std::string& name, double v);

// Throws InputError(file, name, ...) unless v is finite and within the limit of `name`.
void check_physical(const std::string& file, const std::string& name, double v,
                    const std::string& where = "");

}  // namespace ufno
