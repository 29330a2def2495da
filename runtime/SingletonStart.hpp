#pragma once
// A process that no launcher started (no mpirun, mpiexec or srun) runs as an MPI "singleton".
// Open MPI then forks a daemon (orted) and probes every network transport it was built with
// (libfabric's providers among them): 0.3-0.5 s before the first line of work, for a process that
// talks to no other. Such a process starts isolated (no daemon) on the ob1 layer with the
// process itself as its only transport instead. A launched process, or a setting the user made, is
// left as it is; other MPI libraries ignore these variables.
#include <cstdlib>
#include <utility>
#include <vector>

namespace ufno {

// Whether a launcher started this process: each puts the rank or the job step in the environment.
inline bool started_by_mpi_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
                        "SLURM_STEP_ID", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

// Sets the singleton's start-up settings for MPI_Init and returns the names it set, to be unset
// once MPI has started: a child process (ufno_sweep's OPM Flow) inherits the usual environment.
inline std::vector<const char*> set_quick_singleton_start() {
  std::vector<const char*> set;
  if (started_by_mpi_launcher()) return set;
  static const std::pair<const char*, const char*> kSettings[] = {
      {"OMPI_MCA_ess_singleton_isolated", "1"},  // no orted daemon
      {"OMPI_MCA_pml", "ob1"},  // not the cm layer, whose start probes libfabric and PSM
      // The process alone: no shared-memory transport, so no session directory. Isolated
      // singletons would all share one (jf.0), and one's clean-up at exit could remove what
      // another still uses; one-rank files skip MPI-IO (io/Hdf5File.hpp) for the same reason.
      {"OMPI_MCA_btl", "self"},
  };
  for (const auto& [name, value] : kSettings)
    if (!std::getenv(name) && setenv(name, value, 0) == 0) set.push_back(name);
  return set;
}

inline void unset_quick_singleton_start(const std::vector<const char*>& names) {
  for (const char* name : names) unsetenv(name);
}

}  // namespace ufno
