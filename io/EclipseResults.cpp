#include "io/EclipseResults.hpp"

#include <memory>
#include <opm/io/eclipse/ERst.hpp>

#include "core/InputError.hpp"

namespace ufno {

FlowResults read_flow_results(const std::string& unrst, int nx, int ny,
                              const std::vector<int>& active) {
  std::unique_ptr<Opm::EclIO::ERst> rst;
  try {
    rst = std::make_unique<Opm::EclIO::ERst>(unrst);
  } catch (const std::exception& e) {
    throw InputError(unrst, "", "is not a readable unified restart file");
  }
  const auto steps = rst->listOfReportStepNumbers();
  if (steps.size() < 2 || steps.front() != 0)
    throw InputError(unrst, "", "needs report step 0 and later steps (RPTRST 'BASIC=2')");
  std::vector<std::size_t> cells;  // active index -> (X, Y) cell (k * ny + i)
  for (std::size_t c = 0; c < active.size(); ++c)
    if (active[c]) cells.push_back(c);
  auto load = [&](const char* name, int step) {
    rst->loadReportStepNumber(step);
    if (!rst->hasArray(name, step))
      throw InputError(unrst, name, "array missing at report step " + std::to_string(step));
    const auto v = rst->getRestartData<float>(name, step);
    if (v.size() != cells.size())
      throw InputError(unrst, name,
                       "has " + std::to_string(v.size()) + " values but the deck has " +
                           std::to_string(cells.size()) + " active cells");
    std::vector<double> full(std::size_t(nx) * ny, 0.0);
    for (std::size_t a = 0; a < v.size(); ++a) full[cells[a]] = v[a];
    return full;
  };
  FlowResults r;
  r.nx = nx;
  r.ny = ny;
  const auto p0 = load("PRESSURE", 0);
  for (std::size_t s = 1; s < steps.size(); ++s) {
    const auto sg = load("SGAS", steps[s]);
    const auto p = load("PRESSURE", steps[s]);
    r.sg.insert(r.sg.end(), sg.begin(), sg.end());
    for (std::size_t c = 0; c < p.size(); ++c) r.dp.push_back(active[c] ? p[c] - p0[c] : 0.0);
  }
  r.nt = int(steps.size()) - 1;
  return r;
}

}  // namespace ufno
