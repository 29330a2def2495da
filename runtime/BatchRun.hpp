#pragma once
// Batch prediction over many case files (`ufno_predict --cases DIR_OR_LIST --out DIR`): the ranks
// form groups of `ranks_per_case`, each group loads the models once and takes every G-th case,
// running the distributed model on its ranks. One output file per case (OUT/<case name>.h5,
// renamed into place when complete), so a rerun skips the cases already done and loses nothing
// when a job was killed; a bad case is reported and skipped without stopping the others.
#include <mpi.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/ExecutionPlan.hpp"
#include "core/RunOptions.hpp"
#include "decomposition/Repartition.hpp"
#include "runtime/Heads.hpp"

namespace ufno {

struct BatchOptions {
  std::vector<std::string> models;
  std::string cases;  // a directory (its *.h5 files) or a text file with one path per line
  std::string out_dir;
  int ranks_per_case = 1;
  std::string grid = "auto";
  dist::ExchangeAlgorithm exchange = dist::ExchangeAlgorithm::Alltoallv;
  RunOptions run;  // the kernel choices for the models
  // Cases stacked into one pass of the models (same report times); 0: default_cases_per_pass().
  int cases_per_pass = 0;
  // The field-stage heads (a HeadRegistry's); without, the model files' own
  // (runtime/Predictor.hpp).
  std::optional<Heads> field_heads = std::nullopt;
  std::string tool = "ufno_predict";  // the program its progress lines name
};

// One case a pass on the streaming plan (a CPU gains nothing from more: its kernels are
// cache-blocked per case), 8 on the whole-tensor plan (a GPU's kernels widen with the batch;
// PyTorch on an H200 took 8.2 ms a case alone and 1.09 ms a case in batches of 8). On the
// streaming plan, twice the run's threads (at most 8) when a field-stage head computes physics
// from each whole case (the maximum-dP peak match): a pass's cases run on the threads, which a
// pass of one case leaves idle. Such heads only run on their 24 x 48 training grid, where a case
// costs a few MB. The shipped models, 8 cases on 2 threads: 2.3 s at one a pass, 1.8 s at two,
// 1.5 s at four, 1.6 s at eight.
inline int default_cases_per_pass(bool whole_case_heads = false, int threads = 1) {
  if (execution_plan().kind == PlanKind::WholeTensor) return 8;
  return whole_case_heads ? std::clamp(2 * threads, 1, 8) : 1;
}

struct BatchSummary {
  int done = 0, skipped = 0, failed = 0;
  double seconds = 0;
};

// The case files named by `cases` (sorted for a directory); InputError if none or unreadable.
std::vector<std::string> list_cases(const std::string& cases);

// Runs the batch on MPI_COMM_WORLD; rank 0 prints progress and the summary. Returns the counts.
BatchSummary run_batch(const BatchOptions& o);

}  // namespace ufno
