#pragma once
// ufno_predict --model M.h5 --tensor IN.h5 for a 4-D FNO (architecture FNO4D): every rank reads
// its (A1, A2, A3) block of /input (B, A1, A2, A3, T, C), runs DistributedFno4d on the process
// grid `grid_spec` (PAxPBxPC or auto) and writes its block of /SG or /dP, (B, T, A1, A2, A3)
// float32 time-major with units, into the one output file (temporary name, renamed when complete).
#include <mpi.h>

#include <string>

#include "decomposition/Repartition.hpp"

namespace ufno {

struct Fno4dRunSummary {
  int cases = 0;
  std::string variable, grid, process_grid;
  double seconds_load = 0, seconds_predict = 0, seconds_write = 0;
  double peak_rss_mb_max = 0;  // the largest peak resident set of any rank, MiB
};

Fno4dRunSummary run_fno4d_tensor(const std::string& model, const std::string& tensor,
                                 const std::string& out, const std::string& grid_spec,
                                 dist::ExchangeAlgorithm alg, MPI_Comm comm);

}  // namespace ufno
