#pragma once
// OPM Flow / ECLIPSE results (unified restart file, UNRST) as training targets: gas saturation SG
// and pressure buildup dP = PRESSURE - PRESSURE of report step 0 at every later report step, on
// the deck's (X = layers, Y = radial cells) grid, inactive cells 0.
#include <string>
#include <vector>

namespace ufno {

struct FlowResults {
  int nx = 0, ny = 0, nt = 0;
  std::vector<double> sg, dp;  // (T, X, Y), SG [1], dP [bar]
};

// active: the deck's (X, Y) ACTNUM (restart arrays hold active cells only, in global order).
FlowResults read_flow_results(const std::string& unrst, int nx, int ny,
                              const std::vector<int>& active);

}  // namespace ufno
