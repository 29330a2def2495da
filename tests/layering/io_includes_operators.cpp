// Planted on purpose: io/ and operators/ never include each other. Built by the CTest test
// layering_build_refuses (WILL_FAIL): with io's include roots this must not compile.
#include "io/CaseFile.hpp"
#include "operators/DistributedNet3d.hpp"

int ufno_layering_probe_io() { return 0; }
