#pragma once
// Runs OPM Flow on a case, as the training data were made (python/ufno/data/flow_batch.py): the
// same solver flags, MULTX from a dry run so the radial transmissibilities are the exact two-point
// ones, and the results as SG and dP at every report time. Used by ufno_export --targets and by
// the sweeps' verification.
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

struct FlowRunOptions {
  std::string flow = "flow";  // executable (PATH is searched)
  double timeout_s = 600;     // a run still going then is killed and counts as failed
  bool multx = true;          // correct OPM's radial transmissibilities (a 0.5 s dry run)
};

struct FlowRunResult {
  bool ok = false;
  std::string error;  // why not ok: exit status, timeout, missing results
  double wall_s = 0;
  std::vector<float> sg, dp;  // (T, X, Y) on the case's grid, inactive cells 0
};

// The flags every run uses (dataset.json of the training data records the same).
std::vector<std::string> flow_solver_flags();

// Writes the deck into dir/deck, runs Flow into dir/run and reads its results. Never throws for
// a failed simulation (result.ok false); throws InputError for a case that cannot be a deck.
FlowRunResult run_flow_case(const ReservoirCase& c, const std::string& dir,
                            const FlowRunOptions& o);

// MULTX (X, Y) = exact / OPM radial transmissibility, from a dry run in a scratch directory.
std::vector<double> flow_multx(const ReservoirCase& c, const std::string& scratch,
                               const FlowRunOptions& o);

}  // namespace ufno
