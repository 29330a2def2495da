#include "runtime/NestedChain.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>

#include "core/Backend.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "io/Fno4dModelFile.hpp"
#include "io/NestedSite.hpp"
#include "io/OutputFile.hpp"
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

std::array<int, 4> level_grid(const NestedLevel& l, int times) {
  return {l.shape[0], l.shape[1], l.shape[2], times};
}

// This rank's block of the level's input, (1, a1, a2, a3, t, C) channels-last, into `x`: the
// site's eight channels and, on LGR levels, the coarse channel cut from `source` (collective read).
void level_input(const Chain& c, const NestedLevel& l, const dist::Box4& b, const Field* source,
                 float* x) {
  const std::string name = l.group() + "/input";
  std::vector<std::size_t> start{0}, count{1};
  for (int a = 0; a < 4; ++a) start.push_back(b.lo[a]), count.push_back(b.extent(a));
  start.push_back(0), count.push_back(kNestedChannels);
  const std::vector<float> eight = c.site_file.read_block(name, start, count);
  for (float x : eight)
    if (!std::isfinite(x) || std::abs(x) > 1e6f)
      throw InputError(c.site_path, name, "holds NaN, Inf or a value beyond 1e6");
  if (!source) {
    std::copy(eight.begin(), eight.end(), x);
    return;
  }
  const int C = kNestedChannels + 1;
  const auto& w = l.coarse_window;
  const auto& r = l.coarse_repeat;
  std::size_t n = 0;
  for (int i = b.lo[0]; i < b.hi[0]; ++i)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int k = b.lo[2]; k < b.hi[2]; ++k)
        for (int t = b.lo[3]; t < b.hi[3]; ++t, ++n) {
          std::copy_n(&eight[n * kNestedChannels], kNestedChannels, &x[n * C]);
          x[n * C + kNestedChannels] =
              source->at(t, w[0] + i / r[0], w[2] + j / r[1], w[4] + k / r[2]);
        }
}

// Every rank's block of a level's time-major prediction, gathered into the whole field.
Field gather(const std::vector<float>& mine, const dist::PencilLayout<4>& layout,
             const NestedLevel& l, int times, MPI_Comm comm) {
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
    const dist::Box4& b = layout.box(r);
    std::size_t n = offsets[r];
    for (int t = b.lo[3]; t < b.hi[3]; ++t)
      for (int i = b.lo[0]; i < b.hi[0]; ++i)
        for (int j = b.lo[1]; j < b.hi[1]; ++j)
          for (int k = b.lo[2]; k < b.hi[2]; ++k)
            f.v[((std::size_t(t) * l.shape[0] + i) * l.shape[1] + j) * l.shape[2] + k] = all[n++];
  }
  return f;
}

void write_prediction(const Chain& c, const NestedLevel& l, const std::string& variable,
                      const std::string& units, const dist::Box4& b,
                      const std::vector<float>& values) {
  const std::vector<std::size_t> global{c.site.times_days.size(), std::size_t(l.shape[0]),
                                        std::size_t(l.shape[1]), std::size_t(l.shape[2])};
  const std::vector<std::size_t> start{std::size_t(b.lo[3]), std::size_t(b.lo[0]),
                                       std::size_t(b.lo[1]), std::size_t(b.lo[2])};
  const std::vector<std::size_t> count{std::size_t(b.extent(3)), std::size_t(b.extent(0)),
                                       std::size_t(b.extent(1)), std::size_t(b.extent(2))};
  c.out.write_block(l.group() + "/" + variable, global, start, count, values, units,
                    std::string(field_description(field_kind(variable))) + ", (time, x, y, z)");
}

// This rank's block of the level's cell centres, copied from the site file.
void copy_coordinates(const Chain& c, const NestedLevel& l, const dist::Box4& b) {
  const std::vector<std::size_t> shape{std::size_t(l.shape[0]), std::size_t(l.shape[1]),
                                       std::size_t(l.shape[2])};
  const std::vector<std::size_t> start{std::size_t(b.lo[0]), std::size_t(b.lo[1]),
                                       std::size_t(b.lo[2])};
  const std::vector<std::size_t> count{std::size_t(b.extent(0)), std::size_t(b.extent(1)),
                                       std::size_t(b.extent(2))};
  for (const char* name : {"cell_x", "cell_y", "cell_depth"}) {
    const std::string path = l.group() + "/" + name;
    const auto v = c.site_file.read_block_double(path, start, count);
    c.out.h5().write_block(path, shape, start, count, v.data());
    c.out.h5().write_string_attribute(path, "units", "m");
  }
}

// Runs one level's model; writes its block (and, with `cells`, its cell centres); returns the whole
// field when a finer level needs it.
std::optional<Field> run_level(const Chain& c, const NestedLevel& l, const std::string& variable,
                               const Field* source, bool cells) {
  const std::string& model = c.models.path(l.name, variable);
  const int T = int(c.site.times_days.size());
  const auto g = level_grid(l, T);
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
    net = std::make_unique<DistributedFno4d>(mf->spec(), *mf, *grid, c.alg,
                                             WeightResidency::PerLayer);
  });
  const dist::Box4 b = net->layout().box(grid->rank());
  const int C = mf->spec().in_channels;
  auto xd = make_grid_view<4>("nested.input", 1, b.extent(0),
                              {b.extent(1), b.extent(2), b.extent(3), C}, false);
  {
    auto h = Kokkos::create_mirror_view(xd);  // xd itself on host builds
    dist::collectively(c.comm, [&] { level_input(c, l, b, source, h.data()); });
    Kokkos::deep_copy(xd, h);
  }
  // Memory freed by the levels before and by the read goes back to the system before this
  // level's tensors exist: the allocator would keep it for reuse, which the next level's tensors
  // only partly get (measured at the published sizes: a peak about 330 MB above the largest
  // level's without this, about 230 MB above with it only between levels of different shapes).
  backend::return_freed_host_memory();
  c.summary.seconds_load += since(t0);
  t0 = Clock::now();
  const std::vector<float> values = fno4d_time_major(net->forward(xd));
  // The network and its input go before the prediction is written and gathered.
  const dist::PencilLayout<4> layout = net->layout();
  const std::string units = mf->spec().output_units;
  net.reset(), mf.reset(), xd = {};
  c.summary.seconds_predict += since(t0);
  t0 = Clock::now();
  write_prediction(c, l, variable, units, b, values);
  if (cells) copy_coordinates(c, l, b);
  std::optional<Field> whole;
  if (l.lgr() < kNestedLgrLevels) whole = gather(values, layout, l, T, grid->comm());
  c.summary.seconds_write += since(t0);
  c.summary.levels += 1;
  if (l.cells() > c.summary.largest_level) {
    c.summary.largest_level = l.cells();
    c.summary.process_grid = grid->str();
  }
  return whole;
}

// One level after another, each level's network gone when run_level returns.
void run_levels(const Chain& c) {
  auto level = [&](const NestedLevel& l, const std::string& variable, const Field* source) {
    return run_level(c, l, variable, source, variable == "dP");
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
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  double mine = double(u.ru_maxrss) / 1024.0;  // Linux reports KiB
  MPI_Allreduce(&mine, &s.peak_rss_mb_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  s.wells = int(site->wells.size());
  return s;
}

}  // namespace ufno
