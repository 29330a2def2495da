// Planted on purpose: fft/ may not use operators/. Built by the CTest test
// layering_build_refuses (WILL_FAIL): with fft's include roots this must not compile.
#include "fft/Fft1dPlan.hpp"
#include "operators/Linear.hpp"

int ufno_layering_probe() { return 0; }
