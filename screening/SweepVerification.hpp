#pragma once
// A sweep's verification with OPM Flow (`"verify": {"scenarios": N}`, docs/sweeps.md): Flow runs
// N evenly spread scenarios beside the predictions, each writing one KPI row under out/verify/
// (a failed run a .failed note), and verification.csv compares them with ufno's rows KPI by KPI.
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "io/CaseFile.hpp"
#include "screening/Sweep.hpp"

namespace ufno {

// The scenarios the sweep verifies with Flow, by its policy: evenly spread, or (uncertain-first)
// those whose decision is uncertain or whose input lies beyond the intervals' calibration
// first, read from their KPI rows (which must exist then).
std::vector<int> scenarios_to_verify(const SweepConfig& c, int n);

// Whether scenario i's answer is uncertain: a decision across its threshold (or on a KPI
// without an interval), or an interval beyond the calibration cases; false without a KPI row.
bool uncertain_scenario(const SweepConfig& c, int i);

// The verified scenarios still to run, read on the calling thread: HDF5 is not thread-safe,
// and the predictions use it while the Flow runs go on.
std::vector<std::pair<std::string, ReservoirCase>> cases_to_verify(const SweepConfig& c, int n);

// Runs Flow on each, one after the other, until done or `stop` is set (checked between runs),
// with its progress on stderr (core/Progress.hpp): a bar when `bar`, else one line per run.
void verify_with_flow(const SweepConfig& c,
                      const std::vector<std::pair<std::string, ReservoirCase>>& todo,
                      const std::atomic<bool>& stop, bool bar = false);

// Writes verification.csv, prints its summary line; returns the number of failed scenarios.
int write_verification(const SweepConfig& c, int n);

}  // namespace ufno
