// The allowed counterpart of fft_includes_operators.cpp: fft/ may use core/. Built by the CTest
// test layering_build_allows, so that the refusal above is the layering's, not a broken setup.
#include "core/Gemm.hpp"
#include "fft/Fft1dPlan.hpp"

int ufno_layering_allowed() { return 0; }
