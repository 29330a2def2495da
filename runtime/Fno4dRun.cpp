#include "runtime/Fno4dRun.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <type_traits>

#include "core/Backend.hpp"
#include "core/LayerTimer.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "io/Fno4dModelFile.hpp"
#include "io/OutputFile.hpp"
#include "io/TensorFile.hpp"
#include "operators/DistributedFno4d.hpp"
#include "operators/Fno4dMemoryEstimate.hpp"
#include "runtime/FieldNames.hpp"
#include "runtime/NodeMemoryCheck.hpp"

namespace ufno {

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<float> fno4d_time_major(const GridView<4>& y) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  const std::size_t B = y.extent(0), a = y.extent(2), b = y.extent(3), c = y.extent(4),
                    T = y.extent(5);
  std::vector<float> v(B * T * a * b * c);
  for (std::size_t n = 0; n < B; ++n)
    for (std::size_t i = 0; i < a; ++i)
      for (std::size_t j = 0; j < b; ++j)
        for (std::size_t k = 0; k < c; ++k)
          for (std::size_t t = 0; t < T; ++t)
            v[(((n * T + t) * a + i) * b + j) * c + k] = h(n, 0, i, j, k, t);
  return v;
}

namespace {

std::string gigabytes(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GB", bytes / 1e9);
  return b;
}

std::string padded_grid_string(const Fno4dSpec& s) {
  const auto p = s.padded_grid();
  return std::to_string(p[0]) + " x " + std::to_string(p[1]) + " x " + std::to_string(p[2]) +
         " x " + std::to_string(p[3]);
}

}  // namespace

void refuse_if_node_cannot_hold(const Fno4dSpec& s, std::size_t cases, int ranks,
                                const std::string& model, const std::string& tensor,
                                MPI_Comm comm) {
  const double per_rank = Fno4dMemoryEstimate::per_rank(s, cases, ranks, execution_plan().kind);
  const auto lack = kHostTensors ? node_memory_shortfall(per_rank, comm)
                                 : device_memory_shortfall(per_rank, comm);
  if (!lack) return;
  const std::string where = lack->device >= 0
                                ? " of memory on GPU " + std::to_string(lack->device) + " ("
                                : " on this node (";
  const std::string figures = "at least " + gigabytes(lack->bytes) + where +
                              std::to_string(lack->ranks_on_node) + " rank(s)), which has " +
                              gigabytes(lack->available) +
                              (lack->device >= 0 ? " free" : " available");
  const double one_case =
      lack->ranks_on_node * Fno4dMemoryEstimate::per_rank(s, 1, ranks, execution_plan().kind);
  if (cases > 1 && one_case <= lack->available)
    throw InputError(tensor, "input",
                     std::to_string(cases) + " cases in one pass need " + figures +
                         "; put fewer cases in each file");
  throw InputError(model, "grid",
                   "the padded grid " + padded_grid_string(s) + " at width " +
                       std::to_string(s.width) + " needs " + figures +
                       "; spread the ranks over more nodes (ranks on one node share its memory)");
}

std::string process_grid_spec(const std::string& grid_spec, const std::array<int, 4>& g,
                              MPI_Comm comm) {
  if (!grid_spec.empty() && grid_spec != "auto") return grid_spec;
  int size = 1;
  MPI_Comm_size(comm, &size);
  auto p = dist::ProcessGrid::automatic(size, {1, g[1], g[2], g[3]});
  if (p[0] != 1) p = dist::ProcessGrid::automatic(size, {g[0], g[1], g[2], g[3]});
  return std::to_string(p[0]) + "x" + std::to_string(p[1]) + "x" + std::to_string(p[2]);
}

namespace {

// This rank's block b of the B cases' output, time-major (B, T, A1, A2, A3), into `out`.
void write_fno4d_output(const std::string& out, const std::string& tensor, const Fno4dSpec& s,
                        int B, const dist::Box4& b, const std::vector<float>& values,
                        MPI_Comm comm) {
  std::unique_ptr<OutputFile> f;
  dist::collectively(comm, [&] { f = std::make_unique<OutputFile>(out, comm); });
  // Time-major (case, time, x, y, z): the axes (A4, A1, A2, A3) of an XYZT model, the model's
  // own (A1, A2, A3, A4) of a time-first one.
  const std::array<int, 4> order =
      s.time_first() ? std::array<int, 4>{0, 1, 2, 3} : std::array<int, 4>{3, 0, 1, 2};
  std::vector<std::size_t> global{std::size_t(B)}, start{0}, count{std::size_t(B)};
  for (int a : order) {
    global.push_back(std::size_t(s.grid[a]));
    start.push_back(std::size_t(b.lo[a]));
    count.push_back(std::size_t(b.extent(a)));
  }
  const std::string what = field_description(field_kind(s.variable));
  f->write_block(
      s.variable, global, start, count, values, s.output_units,
      what + (s.time_first() ? ", (case, time, x, y, z)" : ", (case, time, A1, A2, A3)"));
  f->set_attribute("source", tensor);
  f->set_attribute("producer", "ufno_predict");
  f->set_attribute("variables", s.variable);
  f->set_attribute("architecture", "FNO4D");
  dist::collectively(comm, [&] { f->commit(); });
}

}  // namespace

WeightResidency fno4d_weight_residency(const Fno4dSpec& s, std::size_t cases, int ranks, int passes,
                                       MPI_Comm comm, const MemorySources& where) {
  const double pass = Fno4dMemoryEstimate::per_rank(s, cases, ranks, execution_plan().kind);
  return choose_weight_residency(Fno4dMemoryEstimate::spectral_weight_bytes(s, ranks),
                                 device_memory_spare(pass, comm, where), passes);
}

Fno4dRunSummary run_fno4d_tensor(const std::string& model, const std::string& tensor,
                                 const std::string& out, const std::string& grid_spec,
                                 dist::ExchangeAlgorithm alg, MPI_Comm comm) {
  Fno4dRunSummary r;
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Fno4dModelFile> mf;
  std::unique_ptr<dist::ProcessGrid> grid;
  std::unique_ptr<DistributedFno4d> net;
  dist::collectively(comm, [&] {
    mf = std::make_unique<Fno4dModelFile>(model);
    const auto& g = mf->spec().grid;
    grid = std::make_unique<dist::ProcessGrid>(dist::ProcessGrid::from_string(
        comm, process_grid_spec(grid_spec, g, comm), {g[0], g[1], g[2], g[3]}));
  });
  std::size_t cases = 0;
  dist::collectively(comm, [&] {
    const Fno4dSpec& s = mf->spec();
    cases = input_tensor4d_cases(tensor, s.grid, s.in_channels, comm);
    refuse_if_node_cannot_hold(s, cases, grid->size(), model, tensor, comm);
  });
  // One forward pass: on a CPU each layer's spectral weights are read when it runs (the same
  // reads as holding them all, a third less peak memory at LGR size); on a GPU they are held on
  // the device when they fit.
  dist::collectively(comm, [&] {
    const WeightResidency residency =
        fno4d_weight_residency(mf->spec(), cases, grid->size(), /*passes=*/1, comm);
    net = std::make_unique<DistributedFno4d>(mf->spec(), *mf, *grid, alg, residency);
  });
  const Fno4dSpec& s = mf->spec();
  r.seconds_load = since(t0);
  const dist::Box4 b = net->layout().box(grid->rank());
  HostArray x;
  dist::collectively(comm, [&] {
    x = read_input_tensor4d(tensor, s.grid, s.in_channels, b.lo, b.extents(), comm);
  });
  t0 = std::chrono::steady_clock::now();
  const int B = int(x.shape[0]);
  auto xd = make_grid_view<4>("fno4d.input", B, b.extent(0),
                              {b.extent(1), b.extent(2), b.extent(3), s.in_channels}, false);
  {
    auto h = Kokkos::create_mirror_view(xd);
    std::copy(x.data.begin(), x.data.end(), h.data());
    Kokkos::deep_copy(xd, h);
  }
  x = HostArray();
  std::vector<float> values;
  try {
    const GridView<4> y = net->forward(xd);
    if (s.time_first()) {  // (B, 1, t, x, y, z): time-major already
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
      values.assign(h.data(), h.data() + h.size());
    } else {
      values = fno4d_time_major(y);
    }
  } catch (const std::exception& e) {
    // Kokkos reports a failed allocation as a runtime_error of several lines; say it in one.
    if (std::string(e.what()).find("allocate") == std::string::npos) throw;
    throw InputError(model, "grid",
                     "not enough memory on rank " + std::to_string(grid->rank()) +
                         ": the padded grid " + padded_grid_string(s) + " at width " +
                         std::to_string(s.width) + " needs at least " +
                         gigabytes(Fno4dMemoryEstimate::per_rank(s, B, grid->size())) +
                         " per rank; use more ranks (--grid) or nodes");
  }
  r.seconds_predict = since(t0);
  if (grid->rank() == 0) LayerTimer::instance().report("ufno_predict (FNO4D)");
  t0 = std::chrono::steady_clock::now();
  write_fno4d_output(out, tensor, s, B, b, values, comm);
  r.seconds_write = since(t0);
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  double mine = double(u.ru_maxrss) / 1024.0;  // Linux reports KiB
  MPI_Allreduce(&mine, &r.peak_rss_mb_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  r.cases = B;
  r.variable = s.variable;
  r.grid = std::to_string(s.grid[0]) + "x" + std::to_string(s.grid[1]) + "x" +
           std::to_string(s.grid[2]) + "x" + std::to_string(s.grid[3]);
  r.process_grid = grid->str();
  return r;
}

}  // namespace ufno
