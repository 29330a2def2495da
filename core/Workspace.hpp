#pragma once
// Where the temporaries of a forward pass live: one arena, planned on a model's first pass of
// each input shape, then handed out as unmanaged views on later (warm) passes.
//
// Why: every Kokkos allocation on a GPU copies its header from the host and fences the device,
// and every free is a cudaFree, which synchronises it. A pass that made each temporary a new
// View (over a hundred per U-FNO pass) ran in lockstep with the host. With the workspace a warm
// pass makes no device allocation at all (tests/test_pass_allocations.cpp counts them).
//
// How (a memory plan, as inference compilers make one, taken from the pass itself):
// - The model's forward opens a Workspace::Pass with a key for the model and the input shape. On
//   the first pass of a key the arena is freed and the temporaries are ordinary managed Views,
//   traced: each request's size and label, and the request before which no one but the trace
//   held it any more (then the trace lets it go too, so that pass's memory peaks where it did
//   without a workspace).
// - When that pass ends, requests whose lifetimes do not overlap are given overlapping offsets
//   (each at the lowest free offset, in whichever of three orders packs tightest: largest
//   first, largest in bytes x lifetime first, the pass's own) and the arena is made as large as
//   the largest plan: the memory of the temporaries live at once, not their sum. A temporary
//   still held after the pass (the pass's result) keeps its own allocation on every pass.
// - On a warm pass the n-th request gets the n-th planned offset, as an unmanaged view. Kernels
//   run in stream order, so memory reused by a later temporary is free by the time it is written.
//   A request that differs from the plan (another shape, another path) makes that one pass
//   allocate as before from there on and the next pass plan again: never a wrong answer.
//
// The models of a process share one workspace (Workspace::shared()): their passes run one at a
// time, so one arena the size of the largest pass serves them all, where arenas of their own
// would hold the sum between passes. A pass that finds the workspace in use by another thread
// runs without it. The operators ask for temporaries through ufno::temporary (below), which uses
// the workspace of the pass running on this thread, if any; outside a pass (unit tests of single
// operators, set-up code) it allocates as Kokkos does. Requests from the host kernels' worker
// threads are never planned (their order is not fixed).
#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/Parallel.hpp"
#include "core/Tensor.hpp"

namespace ufno {

class Workspace {
 public:
  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // The process's workspace, made when first asked for and freed with the last holder (before
  // Kokkos finalises, as the models that hold it are).
  static std::shared_ptr<Workspace> shared();
  // A key prefix no other holder of a workspace gets ("net3d#3/"): plans are per model.
  static std::string unique_key(const std::string& what);

  // One forward pass of one model over inputs of one shape (key), on this thread. A Pass opened
  // while another runs on this thread does nothing (the outer pass plans every temporary), and so
  // does one that finds the workspace in use by another thread.
  class Pass {
   public:
    Pass(Workspace& ws, std::string key);
    ~Pass();
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;

   private:
    Workspace* ws_ = nullptr;
    int uncaught_ = 0;
  };

  // The workspace of the pass running on this thread; nullptr outside a pass.
  static Workspace* current();

  // An uninitialised view of the given extents: planned memory on a warm pass, else a new View.
  template <class View, class... N>
  View take(const std::string& label, N... n);

  std::size_t arena_bytes() const { return arena_.extent(0); }
  bool in_arena(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= arena_.data() && c < arena_.data() + arena_.extent(0);
  }
  std::size_t planned_keys() const { return plans_.size(); }

 private:
  struct Request {
    std::size_t bytes = 0;
    std::string label;
    std::size_t offset = 0;
    bool own_allocation = false;  // held after the pass: not in the arena
  };
  struct Plan {
    std::vector<Request> requests;
    std::size_t bytes = 0;
  };
  // A traced request of a planning pass: its View, kept to read its use count.
  struct Held {
    virtual ~Held() = default;
    virtual int use_count() const = 0;
  };
  template <class View>
  struct HeldView final : Held {
    explicit HeldView(const View& v) : view(v) {}
    int use_count() const override { return view.use_count(); }
    View view;
  };
  struct Traced {
    std::unique_ptr<Held> held;       // reset once released
    std::size_t first = 0, last = 0;  // requests [first, last) during which it was held
  };

  void begin(std::string key);
  void end(bool completed);
  // Marks traced requests no one but the trace holds any more as ended at request `now`.
  void close_released(std::size_t now);
  void make_plan();
  void size_arena();
  // Either a planned offset for this request (true) or not; advances the request count.
  bool planned_offset(const std::string& label, std::size_t bytes, std::size_t& offset);

  enum class Mode { Idle, Planning, Warm, Diverged };
  Mode mode_ = Mode::Idle;
  std::string key_;
  std::size_t next_ = 0;  // requests so far in this pass
  std::map<std::string, Plan> plans_;
  std::vector<Request> trace_;  // the planning pass's requests
  std::vector<Traced> held_;
  Kokkos::View<char*, DeviceSpace> arena_;
  std::atomic<bool> busy_{false};
};

namespace detail {
bool workspace_thread_may_plan();
}

template <class View, class... N>
View Workspace::take(const std::string& label, N... n) {
  const std::size_t bytes = View::required_allocation_size(std::size_t(n)...);
  std::size_t offset = 0;
  if (mode_ == Mode::Warm && planned_offset(label, bytes, offset))
    return View(reinterpret_cast<typename View::pointer_type>(arena_.data() + offset),
                std::size_t(n)...);
  if (mode_ == Mode::Planning) close_released(next_);  // frees what is dead before allocating
  View v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), std::size_t(n)...);
  if (mode_ == Mode::Planning) {
    trace_.push_back({bytes, label, 0, false});
    held_.push_back({std::make_unique<HeldView<View>>(v), next_, 0});
    ++next_;
  }
  return v;
}

// A temporary of a forward pass whose every element the caller writes before reading it: from
// the running pass's workspace, or a new View outside a pass.
template <class View, class... N>
View temporary(const std::string& label, N... n) {
  Workspace* ws = Workspace::current();
  if (ws && detail::workspace_thread_may_plan()) return ws->take<View>(label, n...);
  return View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), std::size_t(n)...);
}

// Zeros over a contiguous view by one kernel on the execution space: a deep_copy of a scalar
// would fence the device.
template <class View>
void zero_fill(const View& v) {
  using T = typename View::non_const_value_type;
  T* p = v.data();
  if (v.span() > 0)
    ufno::parallel_for(
        "ufno::zero_fill", Kokkos::RangePolicy<ExecSpace>(0, v.span()),
        KOKKOS_LAMBDA(const std::size_t i) { p[i] = T(0); });
}

// A temporary, zero-filled.
template <class View, class... N>
View zeroed_temporary(const std::string& label, N... n) {
  View v = temporary<View>(label, n...);
  zero_fill(v);
  return v;
}

inline Tensor temporary_tensor(const std::string& label, std::size_t b, std::size_t c,
                               std::size_t x, std::size_t y, std::size_t t) {
  return temporary<Tensor>(label, b, c, x, y, t);
}

namespace detail {
template <class V, class E, std::size_t... I>
V temporary_grid_view(const std::string& label, std::size_t b, std::size_t c, const E& e,
                      std::index_sequence<I...>) {
  return temporary<V>(label, b, c, std::size_t(e[I])...);
}
}  // namespace detail

// A (b, c, e...) grid view as a temporary (uninitialised).
template <std::size_t D, class T = float>
GridView<D, T> temporary_grid_view(const std::string& label, std::size_t b, std::size_t c,
                                   const std::array<int, D>& e) {
  return detail::temporary_grid_view<GridView<D, T>>(label, b, c, e, std::make_index_sequence<D>());
}

}  // namespace ufno
