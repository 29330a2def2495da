// Planted on purpose: runtime/ may not use screening/ (the KPIs sit above the prediction). Built
// by the CTest test layering_build_refuses (WILL_FAIL): with runtime's include roots this must not
// compile.
#include "runtime/Predictor.hpp"
#include "screening/Kpis.hpp"

int ufno_layering_probe_runtime() { return 0; }
