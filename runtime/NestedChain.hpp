#pragma once
// ufno_predict --case SITE.h5 --models DIR: the nested chain of docs/nested-sites.md. GLOBAL dP,
// then for each well LGR1..LGR4 for dP and SG, each LGR level fed its source level's prediction
// as its last channel (cropped to the level's window and repeated), all on one process grid:
// every rank reads its block of each level's channels and writes its block of each prediction
// into the one output file (temporary name, renamed when complete). One level's network exists
// at a time; a level's prediction is kept whole on every rank while finer levels need it.
#include <mpi.h>

#include <string>

#include "decomposition/Repartition.hpp"

namespace ufno {

struct NestedChainSummary {
  int levels = 0, wells = 0;
  std::string process_grid;       // of the largest level
  std::size_t largest_level = 0;  // its cells
  double seconds_load = 0, seconds_predict = 0, seconds_write = 0;
  double peak_rss_mb_max = 0;  // the largest peak resident set of any rank, MiB
};

NestedChainSummary run_nested_chain(const std::string& site, const std::string& models_dir,
                                    const std::string& out, const std::string& grid_spec,
                                    dist::ExchangeAlgorithm alg, MPI_Comm comm);

}  // namespace ufno
