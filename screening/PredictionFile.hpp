#pragma once
// The one reader of a case's SG and dP fields for the KPIs: a ufno_predict output (one case,
// (1, T, X, Y)), an OPM Flow target file (ufno_export --targets, the training data's target.h5,
// (T, X, Y)), as ufno_kpis, a sweep and the web service read them. A file without SG or dP, with
// fields off the case's grid, NaN or Inf, or report times that do not fit, is refused with one
// InputError naming the file and the field: the KPIs need both fields (a missing one is not
// zero).
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

// SG and dP of one whole-grid case, (T, X, Y), and the report times in days.
struct CaseFields {
  std::vector<float> sg, dp;
  std::vector<double> times_days;
};

// The times come from the file's TIMES, else the case's, else the paper's.
CaseFields read_case_fields(const std::string& path, const ReservoirCase& c);

}  // namespace ufno
