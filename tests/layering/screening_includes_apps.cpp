// Planted on purpose: screening/ may not use apps/ (the programs and the web service sit on top).
// Built by the CTest test layering_build_refuses (WILL_FAIL): with screening's include roots this
// must not compile.
#include "apps/WebCase.hpp"
#include "screening/Kpis.hpp"

int ufno_layering_probe_screening() { return 0; }
