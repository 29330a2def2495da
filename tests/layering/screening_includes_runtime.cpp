// The allowed counterpart of runtime_includes_screening.cpp: screening/ may use runtime/ and,
// through it, operators/ and io/. Built by the CTest test layering_build_allows_screening.
#include "io/CaseFile.hpp"
#include "runtime/Predictor.hpp"
#include "screening/Kpis.hpp"

int ufno_layering_allowed_screening() { return 0; }
