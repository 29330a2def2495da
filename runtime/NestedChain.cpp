#include "runtime/NestedChain.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "core/Backend.hpp"
#include "core/Progress.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "io/Fno4dModelFile.hpp"
#include "io/NestedSite.hpp"
#include "io/OutputFile.hpp"
#include "io/XdmfDescription.hpp"
#include "operators/DistributedFno4d.hpp"
#include "operators/backend/HostMemory.hpp"
#include "runtime/FieldNames.hpp"
#include "runtime/Fno4dRun.hpp"
#include "runtime/NestedModelSet.hpp"

namespace ufno {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A level's whole prediction, (T, nx, ny, nz), on every rank: a source of coarse channels.
struct Field {
  std::array<int, 3> shape{};
  int times = 0;
  std::vector<float> v;
  float at(int t, int i, int j, int k) const {
    return v[((std::size_t(t) * shape[0] + i) * shape[1] + j) * shape[2] + k];
  }
};

// What every level of one run shares.
struct Chain {
  const NestedSite& site;
  const NestedModelSet& models;
  const std::string& site_path;
  const h5::File& site_file;
  OutputFile& out;
  const std::string& grid_spec;
  dist::ExchangeAlgorithm alg;
  MPI_Comm comm;
  NestedChainSummary& summary;
};

// A rank's block of a level as cells and times, whichever the model's axis order: times
// [t0, t1), cells [lo, hi) along x, y, z.
struct Span {
  int t0 = 0, t1 = 0;
  std::array<int, 3> lo{}, hi{};
  Span(const dist::Box4& b, bool time_first) {
    const int t = time_first ? 0 : 3, x = time_first ? 1 : 0;
    t0 = b.lo[t], t1 = b.hi[t];
    for (int a = 0; a < 3; ++a) lo[a] = b.lo[x + a], hi[a] = b.hi[x + a];
  }
  int extent(int a) const { return hi[a] - lo[a]; }
  int times() const { return t1 - t0; }
};

// This rank's block of the level's input, channels-last in the model's axis order, into `x`:
// (1, a1, a2, a3, t, C) or, time-first, (1, t, a1, a2, a3, C), the reference's permute
// (0, 4, 1, 2, 3, 5) of the stored (1, x, y, z, t, C). The site's eight channels and, on LGR
// levels, the coarse channel cut from `source` (collective read).
void level_input(const Chain& c, const NestedLevel& l, const Span& b, bool time_first,
                 const Field* source, float* x) {
  const std::string name = l.group() + "/input";
  std::vector<std::size_t> start{0}, count{1};
  for (int a = 0; a < 3; ++a) start.push_back(b.lo[a]), count.push_back(b.extent(a));
  start.push_back(b.t0), count.push_back(b.times());
  start.push_back(0), count.push_back(kNestedChannels);
  const std::vector<float> eight = c.site_file.read_block(name, start, count);
  for (float x : eight)
    if (!std::isfinite(x) || std::abs(x) > 1e6f)
      throw InputError(c.site_path, name, "holds NaN, Inf or a value beyond 1e6");
  const int C = kNestedChannels + (source ? 1 : 0);
  const auto& w = l.coarse_window;
  const auto& r = l.coarse_repeat;
  const std::size_t ni = b.extent(0), nj = b.extent(1), nk = b.extent(2), nt = b.times();
  std::size_t n = 0;  // the stored order: (i, j, k, t)
  for (std::size_t i = 0; i < ni; ++i)
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t k = 0; k < nk; ++k)
        for (std::size_t t = 0; t < nt; ++t, ++n) {
          const std::size_t m = time_first ? ((t * ni + i) * nj + j) * nk + k : n;
          std::copy_n(&eight[n * kNestedChannels], kNestedChannels, &x[m * C]);
          if (source)
            x[m * C + kNestedChannels] =
                source->at(b.t0 + int(t), w[0] + (b.lo[0] + int(i)) / r[0],
                           w[2] + (b.lo[1] + int(j)) / r[1], w[4] + (b.lo[2] + int(k)) / r[2]);
        }
}

// A level's prediction block (B = 1, 1, a1, a2, a3, a4) as time-major host values (t, x, y, z):
// a time-first model's output is so already.
std::vector<float> time_major_values(const GridView<4>& y, bool time_first) {
  if (!time_first) return fno4d_time_major(y);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  return std::vector<float>(h.data(), h.data() + h.size());
}

// Every rank's block of a level's time-major prediction, gathered into the whole field.
Field gather(const std::vector<float>& mine, const dist::PencilLayout<4>& layout,
             const NestedLevel& l, int times, bool time_first, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<int> counts(size), offsets(size);
  for (int r = 0, off = 0; r < size; ++r)
    counts[r] = int(layout.box(r).count()), offsets[r] = off, off += counts[r];
  std::vector<float> all(std::size_t(offsets.back()) + counts.back());
  MPI_Allgatherv(mine.data(), int(mine.size()), MPI_FLOAT, all.data(), counts.data(),
                 offsets.data(), MPI_FLOAT, comm);
  Field f{l.shape, times, std::vector<float>(l.cells() * times)};
  for (int r = 0; r < size; ++r) {
    const Span b(layout.box(r), time_first);
    std::size_t n = offsets[r];
    for (int t = b.t0; t < b.t1; ++t)
      for (int i = b.lo[0]; i < b.hi[0]; ++i)
        for (int j = b.lo[1]; j < b.hi[1]; ++j)
          for (int k = b.lo[2]; k < b.hi[2]; ++k)
            f.v[((std::size_t(t) * l.shape[0] + i) * l.shape[1] + j) * l.shape[2] + k] = all[n++];
  }
  return f;
}

void write_prediction(const Chain& c, const NestedLevel& l, const std::string& variable,
                      const std::string& units, const Span& b, const std::vector<float>& values) {
  const std::vector<std::size_t> global{c.site.times_days.size(), std::size_t(l.shape[0]),
                                        std::size_t(l.shape[1]), std::size_t(l.shape[2])};
  const std::vector<std::size_t> start{std::size_t(b.t0), std::size_t(b.lo[0]),
                                       std::size_t(b.lo[1]), std::size_t(b.lo[2])};
  const std::vector<std::size_t> count{std::size_t(b.times()), std::size_t(b.extent(0)),
                                       std::size_t(b.extent(1)), std::size_t(b.extent(2))};
  c.out.write_block(l.group() + "/" + variable, global, start, count, values, units,
                    std::string(field_description(field_kind(variable))) + ", (time, x, y, z)");
}

// This rank's block of the level's cell centres, copied from the site file.
void copy_coordinates(const Chain& c, const NestedLevel& l, const Span& b) {
  const std::vector<std::size_t> shape{std::size_t(l.shape[0]), std::size_t(l.shape[1]),
                                       std::size_t(l.shape[2])};
  const std::vector<std::size_t> start{std::size_t(b.lo[0]), std::size_t(b.lo[1]),
                                       std::size_t(b.lo[2])};
  const std::vector<std::size_t> count{std::size_t(b.extent(0)), std::size_t(b.extent(1)),
                                       std::size_t(b.extent(2))};
  for (const char* name : {"cell_x", "cell_y", "cell_depth"}) {
    const std::string path = l.group() + "/" + name;
    auto v = c.site_file.read_block_double(path, start, count);
    c.out.h5().write_block(path, shape, start, count, v.data());
    c.out.h5().write_string_attribute(path, "units", "m");
    if (std::string(name) != "cell_depth") continue;
    // The elevation (z up) too: viewers draw z upwards, and a depth axis would turn the site over.
    for (double& z : v) z = -z;
    c.out.h5().write_block(l.group() + "/cell_z", shape, start, count, v.data());
    c.out.h5().write_string_attribute(l.group() + "/cell_z", "units", "m");
  }
}

// The viewer description (io/XdmfDescription.hpp): at each report time every level a grid whose
// nodes are its cell centres in the site's frame (x, y, elevation), so the LGRs overlay GLOBAL,
// with the level's predictions at those centres.
std::vector<XdmfStep> nested_steps(const NestedSite& site) {
  const std::size_t T = site.times_days.size();
  std::vector<XdmfStep> steps;
  for (std::size_t t = 0; t < T; ++t) {
    XdmfStep s{site.times_days[t], {}};
    for (const NestedLevel& l : site.levels) {
      XdmfGrid g;
      g.name = l.group();
      g.cell_data = false;
      g.nodes = {std::size_t(l.shape[0]), std::size_t(l.shape[1]), std::size_t(l.shape[2])};
      const std::vector<std::size_t> n{g.nodes[0], g.nodes[1], g.nodes[2]},
          field{T, n[0], n[1], n[2]};
      const char* xyz[3] = {"/cell_x", "/cell_y", "/cell_z"};
      for (int a = 0; a < 3; ++a) g.xyz[a] = XdmfSlice{l.group() + xyz[a], n, {0, 0, 0}, n, 8};
      for (const char* v : {"dP", "SG"})
        if (l.lgr() > 0 || std::string(v) == "dP")
          g.fields.push_back(
              {v, XdmfSlice{l.group() + "/" + v, field, {t, 0, 0, 0}, {1, n[0], n[1], n[2]}, 4}});
      s.grids.push_back(std::move(g));
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

// Runs one level's model; writes its block (and, with `cells`, its cell centres); returns the whole
// field when a finer level needs it.
std::optional<Field> run_level(const Chain& c, const NestedLevel& l, const std::string& variable,
                               const Field* source, bool cells) {
  const std::string& model = c.models.path(l.name, variable);
  const int T = int(c.site.times_days.size());
  const bool time_first = c.models.spec(l.name, variable).time_first();
  const auto g = nested_level_grid(l, T, time_first);
  auto t0 = Clock::now();
  std::unique_ptr<Fno4dModelFile> mf;
  std::unique_ptr<dist::ProcessGrid> grid;
  std::unique_ptr<DistributedFno4d> net;
  dist::collectively(c.comm, [&] {
    mf = std::make_unique<Fno4dModelFile>(model);
    grid = std::make_unique<dist::ProcessGrid>(dist::ProcessGrid::from_string(
        c.comm, process_grid_spec(c.grid_spec, g, c.comm), {g[0], g[1], g[2], g[3]}));
  });
  dist::collectively(c.comm, [&] {
    refuse_if_node_cannot_hold(mf->spec(), 1, grid->size(), model, c.site_path, c.comm);
  });
  dist::collectively(c.comm, [&] {
    // One pass per level: weights read per layer on a CPU, held on a GPU when they fit.
    const WeightResidency residency =
        fno4d_weight_residency(mf->spec(), 1, grid->size(), /*passes=*/1, c.comm);
    net = std::make_unique<DistributedFno4d>(mf->spec(), *mf, *grid, c.alg, residency);
  });
  const dist::Box4 box = net->layout().box(grid->rank());
  const Span b(box, time_first);
  const int C = mf->spec().in_channels;
  auto xd = make_grid_view<4>("nested.input", 1, box.extent(0),
                              {box.extent(1), box.extent(2), box.extent(3), C}, false);
  {
    auto h = Kokkos::create_mirror_view(xd);  // xd itself on host builds
    dist::collectively(c.comm, [&] { level_input(c, l, b, time_first, source, h.data()); });
    Kokkos::deep_copy(xd, h);
  }
  // Memory freed by the levels before and by the read goes back to the system before this
  // level's tensors exist: the allocator would keep it for reuse, which the next level's tensors
  // only partly get (measured at the published sizes: a peak about 330 MB above the largest
  // level's without this, about 230 MB above with it only between levels of different shapes).
  backend::return_freed_host_memory();
  c.summary.seconds_load += since(t0);
  t0 = Clock::now();
  const std::vector<float> values = time_major_values(net->forward(xd), time_first);
  // The network and its input go before the prediction is written and gathered.
  const dist::PencilLayout<4> layout = net->layout();
  const std::string units = mf->spec().output_units;
  net.reset(), mf.reset(), xd = {};
  c.summary.seconds_predict += since(t0);
  t0 = Clock::now();
  write_prediction(c, l, variable, units, b, values);
  if (cells) copy_coordinates(c, l, b);
  std::optional<Field> whole;
  if (l.lgr() < kNestedLgrLevels) whole = gather(values, layout, l, T, time_first, grid->comm());
  c.summary.seconds_write += since(t0);
  c.summary.levels += 1;
  if (l.cells() > c.summary.largest_level) {
    c.summary.largest_level = l.cells();
    c.summary.process_grid = grid->str();
  }
  return whole;
}

// Every level's stored input checked before any level runs, so that a bad value deep in the file
// stops the run at once, in one line, not after the levels before it ran and reported. Each rank
// reads a share of the first-axis slabs through its own handle; collectively() agrees the error.
void check_site_inputs(const NestedSite& site, const std::string& path, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<const NestedLevel*> levels{&site.global()};
  for (const auto& w : site.wells)
    for (int k = 1; k <= kNestedLgrLevels; ++k) levels.push_back(&site.level(w.name, k));
  dist::collectively(comm, [&] {
    const h5::File f = h5::File::open_read(path);
    for (const NestedLevel* l : levels) {
      const std::string name = l->group() + "/input";
      std::vector<std::size_t> count = f.shape(name), start(count.size(), 0);
      if (count.size() < 2) continue;  // read_nested_site refuses such a file first
      const std::size_t slabs = count[1];
      count[1] = 1;
      for (std::size_t i = std::size_t(rank); i < slabs; i += std::size_t(size)) {
        start[1] = i;
        for (float x : f.read_block(name, start, count))
          if (!std::isfinite(x) || std::abs(x) > 1e6f)
            throw InputError(path, name, "holds NaN, Inf or a value beyond 1e6");
      }
    }
  });
}

// One level after another, each level's network gone when run_level returns; rank 0 reports
// each level as it ends (a bar on a terminal, else a line a level).
void run_levels(const Chain& c) {
  int rank = 0;
  MPI_Comm_rank(c.comm, &rank);
  const int steps = 1 + int(c.site.wells.size()) * 2 * kNestedLgrLevels;
  std::optional<Progress> progress;
  if (rank == 0) progress.emplace("ufno_predict", steps, Progress::on_terminal());
  int step = 0;
  auto level = [&](const NestedLevel& l, const std::string& variable, const Field* source) {
    const auto t0 = Clock::now();
    auto whole = run_level(c, l, variable, source, variable == "dP");
    char done[48];
    std::snprintf(done, sizeof done, "done in %.2f s", since(t0));
    if (progress) progress->step(step, l.group() + " " + variable, done);
    ++step;
    return whole;
  };
  const std::optional<Field> global = level(c.site.global(), "dP", nullptr);
  for (const auto& w : c.site.wells)
    for (const char* variable : {"dP", "SG"}) {
      std::optional<Field> source = global;
      for (int k = 1; k <= kNestedLgrLevels; ++k)
        source = level(c.site.level(w.name, k), variable, &*source);
    }
}

}  // namespace

NestedChainSummary run_nested_chain(const std::string& site_path, const std::string& models_dir,
                                    const std::string& out_path, const std::string& grid_spec,
                                    dist::ExchangeAlgorithm alg, MPI_Comm comm) {
  NestedChainSummary s;
  const auto t0 = Clock::now();
  std::optional<NestedSite> site;
  std::unique_ptr<NestedModelSet> models;
  dist::collectively(comm, [&] {
    site = read_nested_site(site_path);
    models = std::make_unique<NestedModelSet>(models_dir, *site);
  });
  std::optional<h5::File> site_file;
  std::unique_ptr<OutputFile> out;
  dist::collectively(comm, [&] {
    site_file = h5::File::open_read(site_path, comm);
    out = std::make_unique<OutputFile>(out_path, comm);
  });
  check_site_inputs(*site, site_path, comm);
  s.seconds_load = since(t0);
  Chain c{*site, *models, site_path, *site_file, *out, grid_spec, alg, comm, s};
  run_levels(c);
  out->h5().write_doubles("times_days", {site->times_days.size()}, site->times_days.data());
  out->h5().write_string_attribute("times_days", "units", "day");
  out->set_attribute("format", "ufno-nested-prediction");
  out->set_attribute("source", site_path);
  out->set_attribute("models", models_dir);
  out->set_attribute("producer", "ufno_predict");
  dist::collectively(comm, [&] { out->commit(); });
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) write_xdmf(out_path, nested_steps(*site));
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  double mine = double(u.ru_maxrss) / 1024.0;  // Linux reports KiB
  MPI_Allreduce(&mine, &s.peak_rss_mb_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  s.wells = int(site->wells.size());
  return s;
}

}  // namespace ufno
