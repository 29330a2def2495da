// Allocations inside a warm forward pass, counted through Kokkos Tools' allocation callbacks (they
// fire on the host backend as on CUDA). On a GPU each Kokkos allocation fences the device and each
// free is a synchronising cudaFree, so a pass that allocates runs in lockstep with the host: a
// warm pass must take every temporary from the model's workspace, planned on the first pass.
#include <catch2/catch.hpp>

#include <impl/Kokkos_Profiling.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "core/Workspace.hpp"
#include "io/Fno4dModelFile.hpp"
#include "io/ModelFile.hpp"
#include "operators/DistributedFno4d.hpp"
#include "operators/DistributedNet3d.hpp"
#include "support/MpiUtil.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

// Counts Kokkos allocations, frees and deep copies (each a fence on a GPU) while it lives.
class AllocationCount {
 public:
  AllocationCount() {
    counts() = {};
    namespace kt = Kokkos::Tools::Experimental;
    kt::set_allocate_data_callback(
        [](Kokkos_Profiling_SpaceHandle, const char* label, const void*, uint64_t bytes) {
          Counts& c = counts();
          ++c.allocations;
          ++c.by_label[label];
          if (std::string(label) != "workspace.arena") c.live_bytes += long(bytes);
          c.peak_live_bytes = std::max(c.peak_live_bytes, c.live_bytes);
        });
    kt::set_deallocate_data_callback(
        [](Kokkos_Profiling_SpaceHandle, const char* label, const void*, uint64_t bytes) {
          ++counts().frees;
          if (std::string(label) != "workspace.arena") counts().live_bytes -= long(bytes);
        });
    kt::set_begin_deep_copy_callback([](Kokkos_Profiling_SpaceHandle, const char*, const void*,
                                        Kokkos_Profiling_SpaceHandle, const char*, const void*,
                                        uint64_t) { ++counts().deep_copies; });
    // Kokkos 4 reports every fence (the GPU build's); Debian's Kokkos 3.4 reports none.
    kt::set_begin_fence_callback([](const char*, const uint32_t, uint64_t*) { ++counts().fences; });
  }
  ~AllocationCount() {
    namespace kt = Kokkos::Tools::Experimental;
    kt::set_allocate_data_callback(nullptr);
    kt::set_deallocate_data_callback(nullptr);
    kt::set_begin_deep_copy_callback(nullptr);
    kt::set_begin_fence_callback(nullptr);
  }
  AllocationCount(const AllocationCount&) = delete;
  AllocationCount& operator=(const AllocationCount&) = delete;

  struct Counts {
    long allocations = 0, frees = 0, deep_copies = 0, fences = 0;
    // Allocated since the count began, the workspace's arena left out.
    long live_bytes = 0, peak_live_bytes = 0;
    std::map<std::string, long> by_label;
  };
  static Counts& counts() {
    static Counts c;
    return c;
  }
  void print(const std::string& what) const {
    const Counts& c = counts();
    std::printf("%s: %ld allocations, %ld frees, %ld deep copies, %ld fences\n", what.c_str(),
                c.allocations, c.frees, c.deep_copies, c.fences);
    for (const auto& [label, n] : c.by_label) std::printf("  %-40s %ld\n", label.c_str(), n);
  }
};

// One model's passes: the first of each batch shape plans, the next is counted; every pass's output
// is kept to compare (a warm pass must give the cold pass's values bit for bit, whatever shape ran
// in between).
struct Passes {
  AllocationCount::Counts warm;  // inside the second pass of batch 2
  long cold_allocations = 0;     // inside the first
  long cold_peak_bytes = 0;      // the first pass's peak of live allocations
  std::size_t arena_bytes = 0;   // after the first pass
  std::vector<float> cold, warm_out, after_other_shape;
};

template <class Model, class In, class Out>
Passes run_passes(Model& net, const std::function<In(int)>& input,
                  const std::function<Out(int)>& output, const std::string& what) {
  Passes p;
  auto host = [](const Out& y) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    return std::vector<float>(h.data(), h.data() + h.size());
  };
  const In x2 = input(2), x1 = input(1);
  const Out y2 = output(2), y1 = output(1);
  {
    AllocationCount count;  // the counter counts: the planning pass allocates
    net.forward(x2, y2);    // plans batch 2
    p.cold_allocations = AllocationCount::counts().allocations;
    p.cold_peak_bytes = AllocationCount::counts().peak_live_bytes;
    p.arena_bytes = Workspace::shared()->arena_bytes();
    std::printf("%s: first pass peak %ld bytes, arena %zu bytes\n", what.c_str(), p.cold_peak_bytes,
                p.arena_bytes);
  }
  p.cold = host(y2);
  {
    AllocationCount count;
    net.forward(x2, y2);
    count.print(what);
    p.warm = AllocationCount::counts();
  }
  p.warm_out = host(y2);
  net.forward(x1, y1);  // plans batch 1: the arena may grow
  net.forward(x2, y2);
  p.after_other_shape = host(y2);
  return p;
}

// The fixture's input with `batch` cases (its cases in turn, so that a mix-up between cases shows),
// as a host array of the same layout.
HostArray batch_of(const HostArray& in, int batch) {
  const std::size_t case_size = in.data.size() / in.shape[0];
  HostArray out = in;
  out.shape[0] = batch;
  out.data.clear();
  for (int b = 0; b < batch; ++b) {
    const std::size_t c = std::size_t(b) % std::size_t(in.shape[0]);
    out.data.insert(out.data.end(), in.data.begin() + c * case_size,
                    in.data.begin() + (c + 1) * case_size);
  }
  return out;
}

// The models on every rank of the test's communicator (a 1 x 1 grid on one rank): each rank
// counts its own allocations.
Passes net3d_passes(PlanKind plan, const std::string& model_name, const std::string& io_name) {
  ScopedExecutionPlan use(plan);
  ModelFile mf(test::data_path(model_name));
  dist::ProcessGrid grid(MPI_COMM_WORLD, test::grids_2d(test::mpi_size()).back());
  DistributedNet3d net(mf.spec(), mf, grid);
  auto io = test::read_all(test::data_path(io_name));
  const HostArray& in = io.arrays.at("input");  // (B, X, Y, T, C)
  const dist::Box3 box = net.input_layout().box(grid.rank());
  return run_passes<DistributedNet3d, Tensor, Tensor>(
      net,
      [&](int b) {
        const HostArray x = batch_of(in, b);
        return test::block_of(test::to_device(x.data, {b, int(in.shape[1]), int(in.shape[2]),
                                                       int(in.shape[3]), int(in.shape[4])}),
                              box, /*channel_last=*/true);
      },
      [&](int b) { return Tensor("out", b, 1, box.extent(0), box.extent(1), box.extent(2)); },
      model_name + ", " + plan_name(plan) + " plan, grid " + grid.str());
}

// This rank's block `b` of a channels-last (B, A1, A2, A3, T, C) array.
GridView<4> fno4d_input_block(const HostArray& in, const dist::Box4& b) {
  const int B = in.shape[0], C = in.shape[5];
  auto v = make_grid_view<4>("in", B, b.extent(0), {b.extent(1), b.extent(2), b.extent(3), C});
  auto h = Kokkos::create_mirror_view(v);
  std::size_t f = 0;
  for (int n = 0; n < B; ++n)
    for (int i = b.lo[0]; i < b.hi[0]; ++i)
      for (int j = b.lo[1]; j < b.hi[1]; ++j)
        for (int k = b.lo[2]; k < b.hi[2]; ++k)
          for (int t = b.lo[3]; t < b.hi[3]; ++t)
            for (int c = 0; c < C; ++c) {
              const std::size_t cell =
                  (((std::size_t(n) * in.shape[1] + i) * in.shape[2] + j) * in.shape[3] + k) *
                      in.shape[4] +
                  t;
              h.data()[f++] = in.data[cell * C + c];
            }
  Kokkos::deep_copy(v, h);
  return v;
}

Passes fno4d_passes(PlanKind plan, WeightResidency residency = WeightResidency::All) {
  ScopedExecutionPlan use(plan);
  Fno4dModelFile mf(test::data_path("fno4d_norm_small.h5"));
  dist::ProcessGrid grid(MPI_COMM_WORLD, test::grids_3d(test::mpi_size()).back());
  DistributedFno4d net(mf.spec(), mf, grid, dist::ExchangeAlgorithm::Alltoallv, residency);
  auto io = test::read_all(test::data_path("fno4d_norm_small_io.h5"));
  const HostArray& in = io.arrays.at("input");  // (B, a1, a2, a3, t, C)
  const dist::Box4 box = net.layout().box(grid.rank());
  using Real = DistributedFno4d::Real;
  return run_passes<DistributedFno4d, Real, Real>(
      net, [&](int b) { return fno4d_input_block(batch_of(in, b), box); },
      [&](int b) { return make_grid_view<4>("out", b, 1, box.extents()); },
      std::string("fno4d_norm_small.h5, ") + plan_name(plan) + " plan, weights " +
          residency_name(residency) + ", grid " + grid.str());
}

void check(const Passes& p) {
  CHECK(p.cold_allocations > 0);
  // The plan packs the temporaries as tightly as they lived: the arena is no larger than the
  // first pass's peak (which also counts the plans and buffers that pass made), bar alignment.
  CHECK(double(p.arena_bytes) <= 1.01 * double(p.cold_peak_bytes) + 4096);
  CHECK(p.warm.allocations == 0);
  CHECK(p.warm.frees == 0);
  CHECK(p.warm.deep_copies == 0);
  // On one rank nothing in a pass waits for the device (on more, each exchange fences before
  // MPI reads its buffers).
  if (test::mpi_size() == 1) CHECK(p.warm.fences == 0);
  CHECK(p.warm_out == p.cold);
  CHECK(p.after_other_shape == p.cold);
}

}  // namespace

TEST_CASE("a warm U-FNO pass allocates nothing and gives the cold pass's values", "[workspace]") {
  for (PlanKind plan : {PlanKind::WholeTensor, PlanKind::Streaming})
    check(net3d_passes(plan, "ufno_small.h5", "ufno_small_io.h5"));
}

TEST_CASE("a warm FNO pass allocates nothing and gives the cold pass's values", "[workspace]") {
  for (PlanKind plan : {PlanKind::WholeTensor, PlanKind::Streaming})
    check(net3d_passes(plan, "fno_small.h5", "fno_small_io.h5"));
}

TEST_CASE("a warm 4-D FNO pass allocates nothing and gives the cold pass's values", "[workspace]") {
  for (PlanKind plan : {PlanKind::WholeTensor, PlanKind::Streaming}) check(fno4d_passes(plan));
}

TEST_CASE("a warm 4-D FNO pass that reads its weights per layer allocates nothing either",
          "[workspace]") {
  // Each corner's part is read from the file on every pass: on a GPU it is copied into a
  // workspace temporary (a copy, no allocation); on the host the multiply reads the read buffer.
  for (PlanKind plan : {PlanKind::WholeTensor, PlanKind::Streaming}) {
    const Passes p = fno4d_passes(plan, WeightResidency::PerLayer);
    CHECK(p.warm.allocations == 0);
    CHECK(p.warm.frees == 0);
    if (kHostTensors) CHECK(p.warm.deep_copies == 0);
    CHECK(p.warm_out == p.cold);
    CHECK(p.after_other_shape == p.cold);
  }
}

// The workspace itself, on plain views.
namespace {
using Floats = Kokkos::View<float*, DeviceSpace>;

float value_at(const Floats& v, std::size_t i) {
  float x = 0;
  Kokkos::deep_copy(x, Kokkos::subview(v, i));
  return x;
}

struct Pointers {
  const float *a = nullptr, *b = nullptr, *c = nullptr;
  Floats result;
};

// a and b live together; a is released before c is taken; the result outlives the pass.
Pointers three_temporaries(Workspace& ws, int n) {
  Workspace::Pass pass(ws, "n=" + std::to_string(n));
  Pointers p;
  Floats b = temporary<Floats>("b", n);
  {
    Floats a = temporary<Floats>("a", n);
    Kokkos::deep_copy(a, 1.f);
    Kokkos::deep_copy(b, 2.f);
    p.a = a.data();
  }
  Floats c = temporary<Floats>("c", n);
  Kokkos::deep_copy(c, 3.f);
  p.b = b.data();
  p.c = c.data();
  p.result = temporary<Floats>("result", n);
  Kokkos::deep_copy(p.result, value_at(b, n - 1) + value_at(c, 0));  // b must still hold 2
  return p;
}
}  // namespace

TEST_CASE("the workspace: live temporaries apart, released memory reused, results kept",
          "[workspace]") {
  Workspace ws;
  Pointers cold;
  {
    AllocationCount count;
    cold = three_temporaries(ws, 1000);
    // The planning pass frees a before it allocates c (the trace lets it go): at most b, c and
    // the result live at once.
    CHECK(AllocationCount::counts().peak_live_bytes <= 3 * 4000);
  }
  CHECK(!ws.in_arena(cold.a));          // the planning pass allocates
  CHECK(ws.arena_bytes() == 2 * 4096);  // a or c, and b: 4000 bytes each on 256-byte bounds
  const Pointers warm = three_temporaries(ws, 1000);
  CHECK(ws.in_arena(warm.a));
  CHECK(ws.in_arena(warm.b));
  CHECK(warm.a != warm.b);
  CHECK(warm.c != warm.b);
  CHECK(warm.c == warm.a);                  // a's memory, free once a was released
  CHECK(!ws.in_arena(warm.result.data()));  // held after the pass: its own allocation
  CHECK(value_at(warm.result, 0) == 5.f);
  CHECK(value_at(cold.result, 0) == 5.f);  // the first pass's result untouched by the second
}

TEST_CASE("the workspace: a pass that leaves its plan allocates, and the next one plans again",
          "[workspace]") {
  Workspace ws;
  auto pass = [&](int n, bool differ) {
    Workspace::Pass p(ws, "one key");
    Floats a = temporary<Floats>("a", n);
    Floats b = temporary<Floats>(differ ? "other" : "b", n);
    Kokkos::deep_copy(a, 1.f);
    Kokkos::deep_copy(b, 2.f);
    return std::make_pair(ws.in_arena(b.data()), value_at(a, 0) + value_at(b, 0));
  };
  CHECK(pass(100, false) == std::make_pair(false, 3.f));  // plans
  CHECK(pass(100, false) == std::make_pair(true, 3.f));   // warm
  CHECK(pass(100, true) == std::make_pair(false, 3.f));   // leaves the plan at b
  CHECK(ws.planned_keys() == 0);
  CHECK(pass(100, false) == std::make_pair(false, 3.f));  // plans again
  CHECK(pass(100, false) == std::make_pair(true, 3.f));
  // Outside a pass, and in a nested one, nothing changes.
  Floats outside = temporary<Floats>("outside", 10);
  CHECK(!ws.in_arena(outside.data()));
  {
    Workspace::Pass outer(ws, "one key");
    Workspace other;
    Workspace::Pass inner(other, "nested");
    CHECK(Workspace::current() == &ws);
    Floats a = temporary<Floats>("a", 100);
    CHECK(ws.in_arena(a.data()));
  }
  CHECK(Workspace::current() == nullptr);
}

TEST_CASE("the workspace: a pass on another thread while one runs allocates for itself",
          "[workspace]") {
  Workspace ws;
  {
    Workspace::Pass plan(ws, "key");
    Floats a = temporary<Floats>("a", 100);
  }
  Workspace::Pass running(ws, "key");
  Floats a = temporary<Floats>("a", 100);
  CHECK(ws.in_arena(a.data()));
  bool other_in_arena = true, other_has_workspace = true;
  std::thread other([&] {
    Workspace::Pass second(ws, "key");
    other_has_workspace = Workspace::current() != nullptr;
    Floats b = temporary<Floats>("a", 100);
    other_in_arena = ws.in_arena(b.data());
  });
  other.join();
  CHECK(!other_has_workspace);
  CHECK(!other_in_arena);
}

TEST_CASE("the models share one workspace, each with plans of its own", "[workspace]") {
  ModelFile ufno(test::data_path("ufno_small.h5")), fno(test::data_path("fno_small.h5"));
  dist::ProcessGrid grid(MPI_COMM_SELF, {1, 1, 1});
  DistributedNet3d a(ufno.spec(), ufno, grid), b(fno.spec(), fno, grid);
  auto io = test::read_all(test::data_path("ufno_small_io.h5"));
  const HostArray& in = io.arrays.at("input");
  const std::size_t case_size = in.data.size() / in.shape[0];
  Tensor x =
      test::to_device(std::vector<float>(in.data.begin(), in.data.begin() + case_size),
                      {1, int(in.shape[1]), int(in.shape[2]), int(in.shape[3]), int(in.shape[4])});
  Tensor ya("a", 1, 1, in.shape[1], in.shape[2], in.shape[3]);
  Tensor yb("b", 1, 1, in.shape[1], in.shape[2], in.shape[3]);
  a.forward_raw(x, ya);
  const auto first_a = test::to_host(ya);
  b.forward_raw(x, yb);
  const auto first_b = test::to_host(yb);
  std::shared_ptr<Workspace> ws = Workspace::shared();
  CHECK(ws->planned_keys() >= 2);
  const std::size_t arena = ws->arena_bytes();
  AllocationCount count;
  a.forward_raw(x, ya);
  b.forward_raw(x, yb);
  count.print("U-FNO then FNO, warm");
  CHECK(AllocationCount::counts().allocations == 0);
  CHECK(ws->arena_bytes() == arena);  // the larger model's, not the sum
  CHECK(test::to_host(ya) == first_a);
  CHECK(test::to_host(yb) == first_b);
}
