#include "runtime/BatchRun.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "core/LayerTimer.hpp"
#include "core/Progress.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "io/Hdf5File.hpp"
#include "io/OutputPath.hpp"
#include "io/Temporaries.hpp"
#include "io/XdmfDescription.hpp"
#include "runtime/PredictionWriter.hpp"
#include "runtime/Predictor.hpp"

namespace ufno {

namespace fs = std::filesystem;

std::vector<std::string> list_cases(const std::string& cases) {
  std::vector<std::string> v;
  if (fs::is_directory(cases)) {
    for (const auto& e : fs::directory_iterator(cases))
      if (e.is_regular_file() && e.path().extension() == ".h5") v.push_back(e.path().string());
    std::sort(v.begin(), v.end());
  } else {
    std::ifstream f(cases);
    if (!f) throw InputError(cases, "--cases", "is neither a directory nor a readable list file");
    std::string line;
    while (std::getline(f, line))
      if (!line.empty() && line[0] != '#') v.push_back(line);
  }
  if (v.empty()) throw InputError(cases, "--cases", "names no case file");
  return v;
}

namespace {

// Output file names: OUT/<stem>.h5, or OUT/<parent dir>_<stem>.h5 for the whole batch when stems
// repeat (one directory per case, each holding case.h5, as the OPM data sets are laid out), so
// two cases never share, or skip each other as already done through, one output file.
std::vector<std::string> outputs_for(const std::string& out_dir,
                                     const std::vector<std::string>& cases) {
  auto names_by = [&](bool with_parent) {
    std::vector<std::string> v;
    for (const auto& c : cases) {
      const fs::path p(c);
      const std::string parent =
          fs::absolute(p).lexically_normal().parent_path().filename().string();
      v.push_back((with_parent ? parent + "_" : "") + p.stem().string());
    }
    return v;
  };
  auto duplicate = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    const auto d = std::adjacent_find(v.begin(), v.end());
    return d == v.end() ? std::string() : *d;
  };
  auto names = names_by(false);
  if (!duplicate(names).empty()) names = names_by(true);
  if (const auto d = duplicate(names); !d.empty())
    throw InputError("--cases", "", "two case files would both write " + d + ".h5; rename one");
  for (auto& n : names) n = (fs::path(out_dir) / (n + ".h5")).string();
  return names;
}

// A finished output: present under its final name (outputs are renamed into place when complete)
// and made by ufno_predict with these very models: same variables and the same model files
// (their fingerprint). Any other HDF5 file there (a case file, another tool's output, an output
// of other models) is not this batch's result and is predicted again.
bool finished(const std::string& path, const Predictor& predictor) {
  if (!fs::is_regular_file(path)) return false;
  try {
    auto f = h5::File::open_read(path);
    // An output with a geometry is finished with its viewer description beside it: a run
    // killed between the two writes leaves the HDF5 file alone, and is predicted again.
    const bool described =
        !(H5Lexists(f.id(), "mesh", H5P_DEFAULT) > 0 && f.has_dataset("mesh/x")) ||
        fs::is_regular_file(xdmf_path(path));
    return f.string_attribute("/", "producer").value_or("") == "ufno_predict" &&
           f.string_attribute("/", "variables").value_or("") == predictor.variables() &&
           f.string_attribute("/", "models_fingerprint").value_or("") ==
               predictor.models_fingerprint() &&
           f.has_dataset("TIMES") && described;
  } catch (const InputError&) {
    return false;
  }
}

struct Counts {
  int done = 0, skipped = 0, failed = 0;
};

// The batch's cases and their outputs, checked on every rank; rank 0 makes the output directory
// and removes the temporaries that killed runs left.
void list_outputs(const BatchOptions& o, int world, int size, std::vector<std::string>& cases,
                  std::vector<std::string>& outputs) {
  dist::collectively(MPI_COMM_WORLD, [&] {
    if (o.ranks_per_case < 1 || size % o.ranks_per_case != 0)
      throw InputError("--ranks-per-case", "",
                       std::to_string(o.ranks_per_case) + " does not divide the " +
                           std::to_string(size) + " ranks of the job");
    cases = list_cases(o.cases);
    outputs = outputs_for(o.out_dir, cases);
    if (fs::exists(o.out_dir) && !fs::is_directory(o.out_dir))
      throw InputError(o.out_dir, "--out", "exists and is not a directory");
    // An output may replace no input of the batch: its own case, another case, a model, the list.
    InputFiles inputs(cases);
    inputs.add(o.models);
    if (!fs::is_directory(o.cases)) inputs.add(o.cases);
    for (const auto& out : outputs) check_prediction_output_path(out, inputs);
    if (world == 0) {
      fs::create_directories(o.out_dir);
      for (const auto& out : outputs) remove_stale_temporaries(out);
    }
  });
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Cases read and checked one by one, predicted in passes of up to `per_pass` that share their
// report times (one pass predicts one time axis); every case still gets its own output and its
// own status. A pass the models refuse is run again case by case, so only the bad case fails.
class CasePasses {
 public:
  CasePasses(Predictor& p, const std::vector<std::string>& cases,
             const std::vector<std::string>& outputs, int per_pass, bool leader, Progress* progress,
             Counts& mine)
      : p_(p),
        cases_(cases),
        outputs_(outputs),
        per_pass_(per_pass),
        leader_(leader),
        progress_(progress),
        mine_(mine) {}

  // Case i: skipped when done, else prepared and queued (a pass runs when it is full).
  void add(int i, MPI_Comm comm) {
    int skip = leader_ && finished(outputs_[i], p_);
    MPI_Bcast(&skip, 1, MPI_INT, 0, comm);
    if (skip) {
      ++mine_.skipped;
      status(i, "skipped (output exists)");
      return;
    }
    try {
      Predictor::PreparedCase c = p_.prepare_case_file(cases_[i]);
      if (!pending_.empty() && c.times_days != pending_.front().prepared.times_days) flush();
      pending_.push_back({i, std::move(c)});
      if (int(pending_.size()) >= per_pass_) flush();
    } catch (const dist::AgreedInputError& e) {
      ++mine_.failed;
      status(i, std::string("FAILED: ") + e.what());
    }
  }

  // Runs the queued cases as one pass and writes each case's output.
  void flush() {
    if (pending_.empty()) return;
    const auto tp = std::chrono::steady_clock::now();
    std::optional<Prediction> all;
    if (pending_.size() > 1) {
      std::vector<const Predictor::PreparedCase*> cases;
      for (const auto& c : pending_) cases.push_back(&c.prepared);
      try {
        all = p_.run_prepared(cases);
      } catch (const dist::AgreedInputError&) {
        // A case the models cannot predict: each case alone below, so only that one fails.
      }
    }
    for (std::size_t k = 0; k < pending_.size(); ++k) write(k, all, tp);
    pending_.clear();
  }

 private:
  struct Pending {
    int index;
    Predictor::PreparedCase prepared;
  };

  void write(std::size_t k, const std::optional<Prediction>& all,
             std::chrono::steady_clock::time_point tp) {
    const int i = pending_[k].index;
    const auto tc = std::chrono::steady_clock::now();
    try {
      Prediction p = all ? case_of(*all, k) : p_.run_prepared({&pending_[k].prepared});
      p.dr = pending_[k].prepared.dr, p.dz = pending_[k].prepared.dz;
      write_prediction(outputs_[i], p_, p, cases_[i]);
      ++mine_.done;
      char buf[96];
      if (all)
        std::snprintf(buf, sizeof buf, "done in %.2f s (one pass of %zu cases)", seconds_since(tp),
                      pending_.size());
      else
        std::snprintf(buf, sizeof buf, "done in %.2f s", seconds_since(tc));
      status(i, buf);
      if (leader_)
        for (const auto& w : pending_[k].prepared.warnings)
          std::fprintf(stderr, "ufno_predict: warning: %s: %s\n", cases_[i].c_str(), w.c_str());
    } catch (const dist::AgreedInputError& e) {
      ++mine_.failed;
      status(i, std::string("FAILED: ") + e.what());
    }
  }

  // Case i's status: every group's leader reports its own cases (a bar only with one group).
  void status(int i, const std::string& s) const {
    if (leader_ && progress_) progress_->step(i, cases_[i], s);
  }

  Predictor& p_;
  const std::vector<std::string>& cases_;
  const std::vector<std::string>& outputs_;
  int per_pass_;
  bool leader_;
  Progress* progress_;
  Counts& mine_;
  std::vector<Pending> pending_;
};

}  // namespace

BatchSummary run_batch(const BatchOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  int world = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<std::string> cases, outputs;
  list_outputs(o, world, size, cases, outputs);
  const int groups = size / o.ranks_per_case, group = world / o.ranks_per_case;
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, group, world, &comm);
  int grank = 0;
  MPI_Comm_rank(comm, &grank);
  const bool leader = grank == 0;
  const bool bar = world == 0 && groups == 1 && Progress::on_terminal();
  Predictor predictor(o.models, comm, o.grid, o.exchange, o.run, o.field_heads);
  if (world == 0)
    for (const auto& note : predictor.notes()) std::cerr << "ufno_predict: note: " << note << "\n";

  Counts mine;
  // As many cases a pass as asked (or the plan's default) and the GPU's free memory holds.
  const int per_pass = int(predictor.cases_that_fit(std::size_t(std::max(
      1, o.cases_per_pass > 0
             ? o.cases_per_pass
             : default_cases_per_pass(predictor.field_heads_read_whole_cases(), o.run.threads)))));
  std::optional<Progress> progress;
  if (leader) progress.emplace(o.tool, int(cases.size()), bar);
  CasePasses passes(predictor, cases, outputs, per_pass, leader, progress ? &*progress : nullptr,
                    mine);
  for (int i = group; i < int(cases.size()); i += groups) passes.add(i, comm);
  passes.flush();
  if (progress) progress->finish();
  // Totals: count each group once (its leader's numbers).
  int local[3] = {leader ? mine.done : 0, leader ? mine.skipped : 0, leader ? mine.failed : 0};
  int total[3] = {0, 0, 0};
  MPI_Reduce(local, total, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Comm_free(&comm);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (world_rank == 0) LayerTimer::instance().report(o.tool.c_str());  // UFNO_PROFILE
  BatchSummary s{total[0], total[1], total[2],
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  return s;
}

}  // namespace ufno
