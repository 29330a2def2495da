// ufno_predict: predicts gas saturation SG and pressure buildup dP of a reservoir case (or of an
// encoded input tensor) with one or two trained U-FNO / FNO models. Exit codes: 0 success,
// 2 bad input (one-line message naming file and field), 1 anything else.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "apps/Predictor.hpp"
#include "io/CaseEncoding.hpp"
#include "io/TensorFile.hpp"
#include "operators/backend/Threads.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run(int argc, char** argv) {
  CLI::App app{"ufno_predict: U-FNO / FNO prediction of CO2 gas saturation and pressure buildup"};
  std::vector<std::string> models;
  std::string tensor, case_path, out;
  int threads = ufno::backend::default_threads();
  app.add_option("--model", models, "model file (HDF5); give twice for an SG and a dP model")
      ->required()
      ->check(CLI::ExistingFile);
  auto* opt_tensor =
      app.add_option("--tensor", tensor, "encoded input: dataset /input (B,X,Y,T,12)");
  auto* opt_case = app.add_option("--case", case_path, "reservoir case file (docs/case-format.md)");
  opt_tensor->excludes(opt_case);
  app.add_option("--out", out, "output file (HDF5): /SG, /dP as (B,T,X,Y)")->required();
  app.add_option("--threads", threads, "threads for FFT, GEMM and convolutions")
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ufno_predict: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (tensor.empty() == case_path.empty()) {
    std::cerr << "ufno_predict: error: give exactly one of --tensor or --case\n";
    return 2;
  }
  ufno::backend::set_threads(threads);
  const auto t0 = std::chrono::steady_clock::now();
  ufno::Predictor predictor(models);
  const double t_load = seconds_since(t0);
  const auto& spec = predictor.spec();

  const auto t1 = std::chrono::steady_clock::now();
  ufno::Prediction p;
  std::string source;
  std::size_t cases = 1;
  if (!tensor.empty()) {
    ufno::HostArray in = ufno::read_input_tensor(tensor, spec.grid, spec.in_channels);
    cases = in.shape[0];
    p = predictor.run(in, ufno::paper_times_days(spec.grid[2]));
    source = tensor;
  } else {
    ufno::ReservoirCase c = ufno::read_case(case_path, spec.grid[0], spec.grid[1]);
    for (const auto& w : ufno::out_of_training_range(c))
      std::cerr << "ufno_predict: warning: " << case_path << ": " << w << "\n";
    p = predictor.run_case(c);
    source = case_path;
  }
  const double t_predict = seconds_since(t1);
  ufno::write_prediction(out, p, source);
  std::printf(
      "ufno_predict: %zu case(s) %s on %dx%dx%d (%s) in %.3f s (load %.3f s, predict %.3f s), %d "
      "thread(s) -> %s\n",
      cases, predictor.variables().c_str(), spec.grid[0], spec.grid[1], spec.grid[2],
      spec.architecture.c_str(), seconds_since(t0), t_load, t_predict, threads, out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Kokkos gets no arguments: it would take --threads as its own option.
  Kokkos::ScopeGuard kokkos;
  try {
    return run(argc, argv);
  } catch (const ufno::InputError& e) {
    std::cerr << "ufno_predict: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ufno_predict: internal error: " << e.what() << "\n";
    return 1;
  }
}
