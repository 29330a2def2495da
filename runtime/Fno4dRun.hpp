#pragma once
// ufno_predict --model M.h5 --tensor IN.h5 for a 4-D FNO (architecture FNO4D): every rank reads
// its (A1, A2, A3) block of /input (B, A1, A2, A3, T, C), runs DistributedFno4d on the process
// grid `grid_spec` (PAxPBxPC or auto) and writes its block of /SG or /dP, (B, T, A1, A2, A3)
// float32 time-major with units, into the one output file (temporary name, renamed when complete).
#include <mpi.h>

#include <array>
#include <string>
#include <vector>

#include "core/Fno4dSpec.hpp"
#include "core/MemoryBudget.hpp"
#include "core/Tensor.hpp"
#include "decomposition/Repartition.hpp"
#include "operators/WeightResidency.hpp"

namespace ufno {

struct Fno4dRunSummary {
  int cases = 0;
  std::string variable, grid, process_grid;
  double seconds_load = 0, seconds_predict = 0, seconds_write = 0;
  double peak_rss_mb_max = 0;  // the largest peak resident set of any rank, MiB
};

// What a 4-D FNO run (one model, or a level of the nested chain) is made of:
// (B, 1, a1, a2, a3, t) channel-first block -> (B, t, a1, a2, a3) time-major host values.
std::vector<float> fno4d_time_major(const GridView<4>& y);
// The process grid of a run: --grid, or for "auto" one that leaves A1 whole if it can (the
// Fourier layers then stream A1 rows, DistributedFft, and per-rank memory falls about as 1/P).
std::string process_grid_spec(const std::string& grid_spec, const std::array<int, 4>& g,
                              MPI_Comm comm);
// Collective. Refuses, before anything large is allocated, a run that this node's ranks cannot
// hold: host memory on a CPU (with overcommit the allocations would succeed and the OOM killer
// would end the run when they are touched), the GPU's free memory where the tensors live on one
// (a failed allocation part-way would leave a half-done run). `input` names the input in errors.
void refuse_if_node_cannot_hold(const Fno4dSpec& s, std::size_t cases, int ranks,
                                const std::string& model, const std::string& input, MPI_Comm comm);

// Collective. Where the spectral weights of a model making `passes` forward passes over `cases`
// cases on `ranks` ranks live (operators/WeightResidency.hpp): on a GPU resident when each rank's
// share fits beside its pass in its device's free memory (the ranks sharing a device add up;
// `where` may stand in for the device's reading), else read per layer; on a CPU as before.
WeightResidency fno4d_weight_residency(const Fno4dSpec& s, std::size_t cases, int ranks, int passes,
                                       MPI_Comm comm, const MemorySources& where = {});

Fno4dRunSummary run_fno4d_tensor(const std::string& model, const std::string& tensor,
                                 const std::string& out, const std::string& grid_spec,
                                 dist::ExchangeAlgorithm alg, MPI_Comm comm);

}  // namespace ufno
