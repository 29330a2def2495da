// ufno_predict: predicts gas saturation SG and pressure buildup dP of a reservoir case (or of an
// encoded input tensor) with one or two trained U-FNO / FNO models, on one process or on P MPI
// ranks (srun / mpirun) that each hold one block of the grid; with --cases, many cases in one job
// (runtime/BatchRun.hpp). Exit codes: 0 success, 2 bad input or options (one line naming file and
// field, printed by rank 0), 3 a batch finished but some cases failed, 1 anything else. An
// unexpected error on one rank aborts the whole job rather than leaving the others waiting.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "core/LayerTimer.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "decomposition/Repartition.hpp"
#include "io/Hdf5File.hpp"
#include "io/ModelAttributes.hpp"
#include "io/NestedSite.hpp"
#include "io/OutputPath.hpp"
#include "operators/backend/Threads.hpp"
#include "runtime/BatchRun.hpp"
#include "runtime/DefaultModels.hpp"
#include "runtime/Fno4dRun.hpp"
#include "runtime/MpiMain.hpp"
#include "runtime/NestedChain.hpp"
#include "runtime/NestedModelSet.hpp"
#include "runtime/PredictionWriter.hpp"
#include "runtime/Predictor.hpp"
#include "runtime/RunOptionsFromEnvironment.hpp"
#include "runtime/ThreadDefaults.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The command line, parsed.
struct Options {
  std::vector<std::string> models;
  std::string tensor, case_path, cases, out, grid_spec = "auto", exchange = "alltoallv", plan;
  std::string models_dir;  // the nested chain's nine models
  bool nested = false;     // --case is a nested site file
  int ranks_per_case = 1, threads = 0, cases_per_pass = 0;
  bool bf16 = false, tf32 = false;
  std::string threads_from;  // where the thread count came from, for the summary line
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--model", o.models,
                 "model file (HDF5); give twice for an SG and a dP model (default: the shipped "
                 "models/sg_ufno.h5 and models/dp_ufno.h5)")
      ->check(CLI::ExistingFile);
  auto* opt_tensor = app.add_option("--tensor", o.tensor,
                                    "encoded input: dataset /input (B,X,Y,T,12) for a U-FNO/FNO, "
                                    "(B,A1,A2,A3,T,C) for a 4-D FNO (FNO4D)");
  auto* opt_case = app.add_option(
      "--case", o.case_path,
      "reservoir case file (docs/case-format.md), or a 3-D site file (docs/nested-sites.md)");
  app.add_option("--models", o.models_dir,
                 "with a 3-D site: the directory of the nested chain's nine FNO4D models");
  auto* opt_cases =
      app.add_option("--cases", o.cases, "batch: a directory of case files, or a list file");
  opt_tensor->excludes(opt_case);
  opt_cases->excludes(opt_case)->excludes(opt_tensor);
  app.add_option("--out", o.out,
                 "output file (HDF5): /SG, /dP as (B,T,X,Y); with --cases a directory")
      ->required();
  app.add_option("--ranks-per-case", o.ranks_per_case, "batch: ranks that share one case")
      ->check(CLI::PositiveNumber);
  app.add_option("--cases-per-pass", o.cases_per_pass,
                 "batch: cases stacked into one pass of the models (default: 1 on the streaming "
                 "plan, or twice --threads up to 8 when the dP model's peak match computes "
                 "physics per case; 8 on the whole-tensor plan, a GPU's)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--threads", o.threads,
                 "threads per rank for FFT, GEMM and convolutions (default: the CPUs this rank "
                 "may use: affinity mask, SLURM_CPUS_PER_TASK, or the node's CPUs / ranks)");
  app.add_option("--grid", o.grid_spec,
                 "process grid PXxPY splitting X (layers) and Y (radial cells); PAxPBxPC "
                 "splitting A1, A2, A3 for a 4-D FNO; or auto");
  app.add_option("--exchange", o.exchange, "repartition algorithm: alltoallv or p2p")
      ->check(CLI::IsMember({"alltoallv", "p2p"}));
  app.add_flag("--tf32", o.tf32,
               "GPU: float32 products and convolutions on TF32 tensor cores (faster; results "
               "about 1e-3 relative from the exact ones; no effect on CPUs; or UFNO_TF32=1)");
  app.add_option("--plan", o.plan,
                 "execution plan: streaming (cache-blocked, the CPU's default) or whole-tensor "
                 "(the GPU's default); both compute the same values (or UFNO_PLAN)")
      ->check(CLI::IsMember({"streaming", "whole-tensor"}));
  app.add_flag("--bf16,--bf16-convolutions", o.bf16,
               "U-FNO: U-Net convolutions in bfloat16 with float32 sums (CPUs with "
               "AVX512_BF16 or AMX; faster, less accurate: benchmarks/README.md; or "
               "UFNO_BF16=1)");
}

// The checks that need more than one option or the models; an error line (rank 0) and false
// for options to refuse with exit 2. fno4d_models: how many of the models are 4-D FNOs.
bool check_options(Options& o, int rank, int& fno4d_models) {
  auto refuse = [&](const char* why) {
    if (rank == 0) std::cerr << "ufno_predict: error: " << why << "\n";
    return false;
  };
  if (int(!o.tensor.empty()) + int(!o.case_path.empty()) + int(!o.cases.empty()) != 1)
    return refuse("give exactly one of --tensor, --case or --cases");
  o.nested = !o.case_path.empty() && ufno::is_nested_site_file(o.case_path);
  if (o.nested && o.models_dir.empty())
    return refuse(
        (o.case_path + ": --case: a 3-D site file needs --models DIR (the nested models)").c_str());
  if (!o.nested && !o.models_dir.empty() && !o.case_path.empty())
    // A site file HDF5 cannot read (cut short, say) is named as such, not as "no site file".
    ufno::dist::collectively(MPI_COMM_WORLD, [&] { ufno::h5::File::open_read(o.case_path); });
  if (!o.nested && !o.models_dir.empty())
    return refuse((o.models_dir + ": --models: only with a 3-D site file as --case "
                                  "(docs/nested-sites.md)")
                      .c_str());
  if (o.nested && !o.models.empty())
    return refuse(
        (o.models[0] + ": --model: a 3-D site takes its models from --models DIR").c_str());
  if (o.nested) {
    ufno::dist::collectively(MPI_COMM_WORLD, [&] {
      ufno::InputFiles inputs({o.case_path});
      inputs.add(ufno::model_candidates(o.models_dir));
      ufno::check_prediction_output_path(o.out, inputs);
      ufno::check_thread_count(o.threads);
    });
    return true;
  }
  if (o.models.empty()) o.models = ufno::default_models();
  // A 4-D FNO predicts tensors, alone; U-FNO / FNO models go the case and tensor paths.
  fno4d_models = 0;
  ufno::dist::collectively(MPI_COMM_WORLD, [&] {
    for (const auto& m : o.models) fno4d_models += ufno::model_architecture(m) == "FNO4D";
  });
  if (fno4d_models > 0 && (o.models.size() != 1 || o.tensor.empty()))
    return refuse("--model: a 4-D FNO (FNO4D) runs alone and on --tensor input only");
  if (o.cases.empty())
    ufno::dist::collectively(MPI_COMM_WORLD, [&] {
      std::vector<std::string> inputs = o.models;
      inputs.push_back(o.case_path);
      inputs.push_back(o.tensor);
      ufno::check_prediction_output_path(o.out, inputs);
    });
  ufno::dist::collectively(MPI_COMM_WORLD, [&] { ufno::check_thread_count(o.threads); });
  return true;
}

// The run's options from the flags and the environment, applied to the process.
ufno::RunOptions process_options(const Options& o, int rank, int size) {
  ufno::RunOptions run = ufno::run_options_from_environment(o.threads, o.bf16);
  run.tf32 = run.tf32 || o.tf32;
  if (!o.plan.empty()) ufno::parse_plan_kind(o.plan, run.plan);
  ufno::apply_process_options(run);
  // On GPUs, say how the ranks exchange: in GPU memory, or staged through the host when the MPI
  // is not CUDA-aware (host tensors always exchange in host memory).
  if (!ufno::kHostTensors && size > 1 && rank == 0)
    std::fprintf(stderr, "ufno_predict: exchanges between ranks go through %s\n",
                 ufno::dist::describe(ufno::dist::exchange_memory()).c_str());
  return run;
}

int predict_batch(const Options& o, const ufno::RunOptions& run, int rank) {
  ufno::BatchOptions b{o.models,    o.cases,
                       o.out,       o.ranks_per_case,
                       o.grid_spec, ufno::dist::parse_exchange_algorithm(o.exchange),
                       run,         o.cases_per_pass};
  const ufno::BatchSummary s = ufno::run_batch(b);
  if (rank == 0)
    std::printf(
        "ufno_predict: batch of %d case(s): %d done, %d skipped (already done), %d failed "
        "in %.3f s, %d thread(s) per rank (%s) -> %s\n",
        s.done + s.skipped + s.failed, s.done, s.skipped, s.failed, s.seconds, o.threads,
        o.threads_from.c_str(), o.out.c_str());
  // Every task exits with the batch's status, not just the one that counted the failures.
  int failed = s.failed > 0, any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed ? 3 : 0;
}

int predict_fno4d(const Options& o, int rank, int size) {
  const auto t0 = std::chrono::steady_clock::now();
  const ufno::Fno4dRunSummary s =
      ufno::run_fno4d_tensor(o.models[0], o.tensor, o.out, o.grid_spec,
                             ufno::dist::parse_exchange_algorithm(o.exchange), MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(
        "ufno_predict: %d case(s) %s on %s (FNO4D) in %.3f s (load %.3f s, predict %.3f s, "
        "write %.3f s), %d rank(s) as %s x %d thread(s) (%s), peak memory %.0f MB per rank "
        "(largest) -> %s\n",
        s.cases, s.variable.c_str(), s.grid.c_str(), seconds_since(t0), s.seconds_load,
        s.seconds_predict, s.seconds_write, size, s.process_grid.c_str(), o.threads,
        o.threads_from.c_str(), s.peak_rss_mb_max, o.out.c_str());
  return 0;
}

int predict_nested(const Options& o, int rank, int size) {
  const auto t0 = std::chrono::steady_clock::now();
  const ufno::NestedChainSummary s =
      ufno::run_nested_chain(o.case_path, o.models_dir, o.out, o.grid_spec,
                             ufno::dist::parse_exchange_algorithm(o.exchange), MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(
        "ufno_predict: 3-D site of %d well(s), %d levels (nested chain) in %.3f s (load %.3f s, "
        "predict %.3f s, write %.3f s), %d rank(s) as %s x %d thread(s) (%s), peak memory %.0f "
        "MB per rank (largest) -> %s\n",
        s.wells, s.levels, seconds_since(t0), s.seconds_load, s.seconds_predict, s.seconds_write,
        size, s.process_grid.c_str(), o.threads, o.threads_from.c_str(), s.peak_rss_mb_max,
        o.out.c_str());
  return 0;
}

// One case file or one encoded tensor, through the U-FNO / FNO models.
int predict_one(const Options& o, const ufno::RunOptions& run, int rank) {
  const auto t0 = std::chrono::steady_clock::now();
  ufno::Predictor predictor(o.models, MPI_COMM_WORLD, o.grid_spec,
                            ufno::dist::parse_exchange_algorithm(o.exchange), run);
  const double t_load = seconds_since(t0);
  if (rank == 0)
    for (const auto& note : predictor.notes()) std::cerr << "ufno_predict: note: " << note << "\n";
  const auto& spec = predictor.spec();
  const auto t1 = std::chrono::steady_clock::now();
  ufno::Prediction p;
  std::vector<std::string> warnings;
  if (!o.tensor.empty())
    p = predictor.run_tensor_file(o.tensor);
  else
    p = predictor.run_case_file(o.case_path, &warnings);
  const double t_predict = seconds_since(t1);
  if (rank == 0)
    for (const auto& w : warnings)
      std::cerr << "ufno_predict: warning: " << o.case_path << ": " << w << "\n";
  ufno::write_prediction(o.out, predictor, p, o.tensor.empty() ? o.case_path : o.tensor);
  if (rank == 0)
    std::printf(
        "ufno_predict: %zu case(s) %s on %dx%dx%d (%s) in %.3f s (load %.3f s, predict %.3f s), "
        "%d rank(s) as %s x %d thread(s) (%s) -> %s\n",
        p.cases, predictor.variables().c_str(), spec.grid[0], spec.grid[1], spec.grid[2],
        spec.architecture.c_str(), seconds_since(t0), t_load, t_predict, predictor.grid().size(),
        predictor.grid().str().c_str(), o.threads, o.threads_from.c_str(), o.out.c_str());
  if (rank == 0) ufno::LayerTimer::instance().report("ufno_predict");  // UFNO_PROFILE
  return 0;
}

int run(int argc, char** argv, int rank, int size) {
  CLI::App app{"ufno_predict: U-FNO / FNO prediction of CO2 gas saturation and pressure buildup"};
  Options o;
  const ufno::ThreadChoice auto_threads =
      ufno::default_threads_for_rank(ufno::ranks_on_this_node(MPI_COMM_WORLD));
  add_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return rank == 0 ? app.exit(e) : 0;
  } catch (const CLI::ParseError& e) {
    if (rank == 0) std::cerr << "ufno_predict: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  const bool threads_given = app.count("--threads") > 0;
  o.threads_from = threads_given ? "--threads" : auto_threads.source;
  if (!threads_given) o.threads = auto_threads.threads;
  int fno4d_models = 0;
  if (!check_options(o, rank, fno4d_models)) return 2;
  const ufno::RunOptions run = process_options(o, rank, size);
  if (run.bf16 && (o.nested || fno4d_models > 0)) {
    if (rank == 0)
      std::cerr << "ufno_predict: error: " << (o.bf16 ? "--bf16" : "UFNO_BF16")
                << ": 4-D FNO models (FNO4D, the nested chain) run in float32 only\n";
    return 2;
  }
  if (!o.cases.empty()) return predict_batch(o, run, rank);
  if (o.nested) return predict_nested(o, rank, size);
  if (fno4d_models == 1) return predict_fno4d(o, rank, size);
  return predict_one(o, run, rank);
}

}  // namespace

int main(int argc, char** argv) {
  return ufno::mpi_main(argc, argv, "ufno_predict", [](int ac, char** av, int rank, int size) {
    return run(ac, av, rank, size);
  });
}
