#include "runtime/Predictor.hpp"

#include "operators/Net3dMemoryEstimate.hpp"
#include "runtime/NodeMemoryCheck.hpp"

#include <algorithm>
#include <cmath>
#include <future>

#include "core/Fingerprint.hpp"
#include "core/LayerTimer.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "io/CaseEncoding.hpp"
#include "io/ModelFile.hpp"
#include "io/TensorFile.hpp"
#include "runtime/FieldNames.hpp"
#include "runtime/TrainingDistance.hpp"
#include "runtime/TrainingStatistics.hpp"

namespace ufno {

// 1 GPa: no storage site's pressure can rise by more (the deepest wells see a fraction of it).
constexpr double kMaxPressureBuildupBar = 10000.0;

// The network's raw output made physical (docs/kpis.md): inactive cells (channel 0, the encoded
// permeability, exactly 0) are outside the reservoir and the training loss never saw them, so
// they are 0, not whatever the network extrapolates there; SG lies within [0, 1 - SWI].
float physical_value(bool saturation, float raw, const float* channels) {
  if (channels[0] == 0.0f) return 0.0f;
  if (!saturation) return raw;
  const float sg_max = float(1.0 - decoded_swi(channels[kSwiChannel]));
  return std::clamp(raw, 0.0f, sg_max);
}

Predictor::Predictor(const std::vector<std::string>& paths, MPI_Comm comm,
                     const std::string& grid_spec, dist::ExchangeAlgorithm alg,
                     const RunOptions& options, std::optional<Heads> field_heads)
    : comm_(comm), paths_(paths) {
  dist::collectively(comm, [&] {
    if (paths.empty()) throw InputError("--model", "", "no model file given");
  });
  // The digest reads every byte of the model files (about 0.05 s for a 250 MB model from the
  // page cache): it is computed on a thread of its own while the layers load.
  std::future<std::string> fingerprint =
      std::async(std::launch::async, [paths] { return files_digest(paths); });
  for (const auto& path : paths) {
    std::unique_ptr<ModelFile> mf;
    dist::collectively(comm, [&] {
      mf = std::make_unique<ModelFile>(path);
      for (const auto& m : models_) {
        if (m->spec().grid != mf->spec().grid || m->spec().in_channels != mf->spec().in_channels)
          throw InputError(path, "grid", "differs from the grid of the first model");
        if (m->spec().variable == mf->spec().variable)
          throw InputError(path, "variable", "two models predict " + mf->spec().variable);
      }
      if (!grid_) {
        const auto& g = mf->spec().grid;
        grid_ = std::make_unique<dist::ProcessGrid>(
            dist::ProcessGrid::from_string(comm, grid_spec, {g[0], g[1], 1}));
      }
    });
    // Weight shapes are checked as the layers load; every rank reads the same file.
    dist::collectively(comm, [&] {
      models_.push_back(std::make_unique<DistributedNet3d>(mf->spec(), *mf, *grid_, alg, options));
    });
  }
  dist::collectively(comm, [&] {
    field_heads_ =
        field_heads ? field_heads->of_stage(HeadStage::Field) : read_field_heads(paths, notes_);
  });
  dist::collectively(comm, [&] { fingerprint_ = fingerprint.get(); });
  dist::collectively(comm, [&] {
    for (const auto& path : paths)
      if (auto p = read_training_profile(path)) {
        check_profile_statistics(*p);
        profiles_.push_back(std::move(*p));
      }
  });
}

std::vector<std::string> Predictor::training_warnings(const ReservoirCase& c,
                                                      MPI_Comm sum_comm) const {
  std::vector<std::string> w;
  if (profiles_.empty()) {
    w = out_of_training_range(c);
  } else {
    const auto stats = training_statistics(c, sum_comm);
    // Each statistic once: the models of one run share their training data as a rule.
    std::vector<std::string> said;
    for (const auto& p : profiles_) {
      const TrainingDistance d = training_distance(p, stats);
      const auto lines = d.warnings(p.path);
      for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string what = i < d.deviations.size() ? d.deviations[i].name : "joint";
        if (std::find(said.begin(), said.end(), what) != said.end()) continue;
        said.push_back(what);
        w.push_back(lines[i]);
      }
    }
    for (auto& line : permeability_out_of_training_range(c)) w.push_back(std::move(line));
  }
  return w;
}

std::string Predictor::variables() const {
  std::string v;
  for (const auto& m : models_) v += (v.empty() ? "" : "+") + m->spec().variable;
  return v;
}

CaseBlock Predictor::block() const {
  const auto b = models_.front()->input_layout().box(grid_->rank());
  return {b.lo[0], b.lo[1], b.extent(0), b.extent(1)};
}

std::vector<std::size_t> Predictor::global_shape(std::size_t cases) const {
  const auto& g = spec().grid;
  return {cases, std::size_t(g[2]), std::size_t(g[0]), std::size_t(g[1])};
}

std::size_t Predictor::cases_that_fit(std::size_t wanted, const MemorySources& where) const {
  const int ranks = grid_->size();
  auto need = [&](std::size_t cases) {
    double most = 0;
    for (const auto& m : models_)
      most = std::max(most, Net3dMemoryEstimate::per_rank(m->spec(), cases, ranks));
    return most;
  };
  for (std::size_t cases = std::max<std::size_t>(wanted, 1);; cases /= 2) {
    const auto lack = device_memory_shortfall(need(cases), comm_, where);
    if (!lack) return std::min(cases, std::max<std::size_t>(wanted, 1));
    if (cases == 1) {
      const auto p = spec().padded_grid();
      throw dist::AgreedInputError(
          paths_.front() + ": grid: one case on the padded grid " + std::to_string(p[0]) + " x " +
          std::to_string(p[1]) + " x " + std::to_string(p[2]) + " needs at least " +
          std::to_string(int(lack->bytes / 1e6)) + " MB of memory on GPU " +
          std::to_string(lack->device) + " (" + std::to_string(lack->ranks_on_node) +
          " rank(s)), which has " + std::to_string(int(lack->available / 1e6)) +
          " MB free; run on more ranks (each holds a block of the grid)");
    }
  }
}

Prediction Predictor::run(const HostArray& in, const std::vector<double>& times,
                          const std::vector<const ReservoirCase*>& whole_cases) {
  const auto& s = in.shape;
  if (cases_that_fit(s[0]) < s[0])  // before anything of the pass is allocated
    throw dist::AgreedInputError(paths_.front() + ": " + std::to_string(s[0]) +
                                 " cases in one pass do not fit in the GPU's free memory; put "
                                 "fewer cases in each file");
  Tensor x("input", s[0], s[1], s[2], s[3], s[4]);
  auto hx = Kokkos::create_mirror_view(x);
  std::copy(in.data.begin(), in.data.end(), hx.data());
  Kokkos::deep_copy(x, hx);

  Prediction p;
  p.times_days = times;
  p.cases = s[0];
  const std::size_t B = s[0], X = s[1], Y = s[2], T = s[3];
  for (std::size_t mi = 0; mi < models_.size(); ++mi) {
    auto& m = models_[mi];
    Tensor y = m->forward(x);  // (B, 1, lx, ly, T)
    std::optional<LayerTimer::Scope> to_host(std::in_place, "output: to the host, its rules");
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    Field f;
    f.name = m->spec().variable;
    f.units = m->spec().output_units;
    f.shape = {B, T, X, Y};
    f.values.resize(B * T * X * Y);
    const std::size_t C = s[4];
    const bool saturation = f.name == "SG";
    long non_finite = 0;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < X; ++i)
          for (std::size_t j = 0; j < Y; ++j) {
            const float* ch = &in.data[(((b * X + i) * Y + j) * T + t) * C];
            const float raw = hy(b, 0, i, j, t);
            // A non-finite or impossible output means the input (or the model) is far beyond
            // anything the model can handle: refused rather than written as a plausible field.
            if (!std::isfinite(raw) || (!saturation && std::abs(raw) > kMaxPressureBuildupBar))
              non_finite++;
            f.values[((b * T + t) * X + i) * Y + j] = physical_value(saturation, raw, ch);
          }
    long any = 0;
    MPI_Allreduce(&non_finite, &any, 1, MPI_LONG, MPI_SUM, comm_);
    if (any > 0)
      throw dist::AgreedInputError(
          paths_[mi] + ": " + m->spec().variable +
          ": the model's output is not finite or physically impossible (|dP| > " +
          std::to_string(int(kMaxPressureBuildupBar)) + " bar) in " + std::to_string(any) +
          " cell(s): the input or the model is far outside what it can predict");
    to_host.reset();
    if (field_kind(f.name) == FieldKind::dP) {
      LayerTimer::Scope heads("dP field heads (field scale, peak)");
      FieldHeadInput field_stage(f.values, in, block(), spec().grid[0], spec().grid[1], comm_);
      if (whole_cases.size() == B) {
        field_stage.cases = whole_cases;
        field_stage.times_days = &times;
      }
      field_heads_.apply(field_stage);
    }
    p.fields.push_back(std::move(f));
  }
  return p;
}

Prediction Predictor::run_case(const ReservoirCase& c) {
  const int nt = spec().grid[2];
  HostArray in = encode_case(c, nt);
  // The fields were checked one by one; this catches what only their combination makes.
  dist::collectively(comm_, [&] { check_encoded(in, c.path, "encoded input"); });
  const bool whole = c.lx == c.nx && c.ly == c.ny;
  std::vector<const ReservoirCase*> cases;
  if (whole) cases.push_back(&c);
  Prediction p = run(in, c.times_days.empty() ? paper_times_days(nt) : c.times_days, cases);
  p.dr = c.dr, p.dz = c.dz;
  return p;
}

Prediction Predictor::run_tensor_file(const std::string& path) {
  HostArray in;
  dist::collectively(comm_, [&] {
    in = read_input_tensor(path, spec().grid, spec().in_channels, block(), comm_);
  });
  return run(in, paper_times_days(spec().grid[2]));
}

Predictor::PreparedCase Predictor::prepare_case_file(const std::string& path) {
  LayerTimer::Scope scope("case file: read, check, encode");
  ReservoirCase c;
  dist::collectively(comm_, [&] {
    c = read_case(path, spec().grid[0], spec().grid[1], block(), comm_);
    // Encoding checks TIMES against the model's time count.
    if (!c.times_days.empty() && int(c.times_days.size()) != spec().grid[2])
      throw InputError(path, "TIMES",
                       "has " + std::to_string(c.times_days.size()) +
                           " report times but the model predicts " +
                           std::to_string(spec().grid[2]));
  });
  long low = low_permeability_cells(c), low_all = 0;
  MPI_Allreduce(&low, &low_all, 1, MPI_LONG, MPI_SUM, comm_);
  PreparedCase p;
  p.warnings = training_warnings(c, comm_);
  if (low_all > 0) p.warnings.push_back(low_permeability_warning(low_all));
  const int nt = spec().grid[2];
  p.input = encode_case(c, nt);
  // The fields were checked one by one; this catches what only their combination makes.
  dist::collectively(comm_, [&] { check_encoded(p.input, c.path, "encoded input"); });
  p.times_days = c.times_days.empty() ? paper_times_days(nt) : c.times_days;
  p.dr = c.dr, p.dz = c.dz;
  if (field_heads_.reads_whole_cases()) {
    if (c.lx == c.nx && c.ly == c.ny) {
      p.whole = std::make_shared<const ReservoirCase>(std::move(c));
    } else {  // a rank's block: the whole case is small (one r-z section), each rank reads it
      ReservoirCase all;
      dist::collectively(comm_, [&] { all = read_case(path, spec().grid[0], spec().grid[1]); });
      p.whole = std::make_shared<const ReservoirCase>(std::move(all));
    }
  }
  return p;
}

Prediction Predictor::run_prepared(const std::vector<const PreparedCase*>& cases) {
  std::vector<const HostArray*> inputs;
  std::vector<const ReservoirCase*> whole;
  for (const PreparedCase* c : cases) {
    inputs.push_back(&c->input);
    if (c->whole) whole.push_back(c->whole.get());
  }
  Prediction out = run(cases.size() == 1 ? cases.front()->input : stack_inputs(inputs),
                       cases.front()->times_days, whole);
  out.dr = cases.front()->dr, out.dz = cases.front()->dz;
  return out;
}

Prediction Predictor::run_case_file(const std::string& path, std::vector<std::string>* warnings) {
  PreparedCase p = prepare_case_file(path);
  if (warnings) *warnings = std::move(p.warnings);
  return run_prepared({&p});
}

Prediction case_of(const Prediction& p, std::size_t b) {
  Prediction one;
  one.times_days = p.times_days;
  one.cases = 1;
  for (const Field& f : p.fields) {
    Field g = f;
    g.shape[0] = 1;
    const std::size_t n = f.values.size() / p.cases;
    g.values.assign(f.values.begin() + b * n, f.values.begin() + (b + 1) * n);
    one.fields.push_back(std::move(g));
  }
  return one;
}

HostArray stack_inputs(const std::vector<const HostArray*>& inputs) {
  HostArray all;
  all.shape = inputs.front()->shape;
  all.shape[0] = 0;
  for (const HostArray* a : inputs) {
    all.shape[0] += a->shape[0];
    all.data.insert(all.data.end(), a->data.begin(), a->data.end());
  }
  return all;
}

}  // namespace ufno
