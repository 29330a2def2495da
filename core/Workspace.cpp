#include "core/Workspace.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <utility>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace ufno {

namespace {
Workspace*& current_workspace() {
  static thread_local Workspace* ws = nullptr;
  return ws;
}
// Offsets and sizes on 256-byte boundaries: what cudaMalloc gives, and a whole number of cache
// lines and AVX-512 vectors on the host.
constexpr std::size_t kAlign = 256;
std::size_t aligned(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
}  // namespace

namespace detail {
bool workspace_thread_may_plan() {
#if defined(_OPENMP)
  return !omp_in_parallel();
#else
  return true;
#endif
}
}  // namespace detail

Workspace* Workspace::current() { return current_workspace(); }

std::shared_ptr<Workspace> Workspace::shared() {
  static std::mutex mu;
  static std::weak_ptr<Workspace> process;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<Workspace> ws = process.lock();
  if (!ws) process = ws = std::make_shared<Workspace>();
  return ws;
}

std::string Workspace::unique_key(const std::string& what) {
  static std::atomic<long> next{0};
  return what + "#" + std::to_string(next++) + "/";
}

Workspace::Pass::Pass(Workspace& ws, std::string key) : uncaught_(std::uncaught_exceptions()) {
  if (current_workspace()) return;      // nested: the running pass plans
  if (ws.busy_.exchange(true)) return;  // another thread's pass: this one allocates
  ws_ = &ws;
  ws.begin(std::move(key));
  current_workspace() = &ws;
}

Workspace::Pass::~Pass() {
  if (!ws_) return;
  current_workspace() = nullptr;
  ws_->end(std::uncaught_exceptions() == uncaught_);
  ws_->busy_ = false;
}

void Workspace::begin(std::string key) {
  key_ = std::move(key);
  next_ = 0;
  mode_ = plans_.count(key_) ? Mode::Warm : Mode::Planning;
  if (mode_ == Mode::Planning) arena_ = {};  // this pass peaks as it would without a workspace
}

void Workspace::end(bool completed) {
  if (mode_ == Mode::Planning) {
    if (completed) {
      close_released(next_);
      make_plan();
    }
    held_.clear();  // before the arena is made: only the pass's results are still held
    size_arena();
  }
  // A pass that left its plan is planned again next time; one that threw plans nothing.
  if (mode_ == Mode::Diverged || (mode_ == Mode::Warm && next_ != plans_.at(key_).requests.size()))
    plans_.erase(key_);
  trace_.clear();
  held_.clear();
  mode_ = Mode::Idle;
}

void Workspace::close_released(std::size_t now) {
  for (Traced& t : held_)
    if (t.held && t.held->use_count() == 1) {
      t.held.reset();
      t.last = now;
    }
}

bool Workspace::planned_offset(const std::string& label, std::size_t bytes, std::size_t& offset) {
  const Plan& plan = plans_.at(key_);
  if (next_ >= plan.requests.size() || plan.requests[next_].bytes != bytes ||
      plan.requests[next_].label != label) {
    mode_ = Mode::Diverged;
    return false;
  }
  const Request& r = plan.requests[next_++];
  offset = r.offset;
  return !r.own_allocation;
}

void Workspace::make_plan() {
  Plan plan;
  plan.requests = trace_;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < held_.size(); ++i) {
    if (held_[i].held)
      plan.requests[i].own_allocation = true;
    else
      order.push_back(i);
  }
  // Each request in `order` at the lowest offset clear of every placed request it is live with;
  // the offsets go into `requests`, the arena size is returned.
  auto pack = [&](const std::vector<std::size_t>& by, std::vector<Request>& requests) {
    std::size_t bytes = 0;
    std::vector<std::size_t> placed;
    for (std::size_t i : by) {
      std::vector<std::pair<std::size_t, std::size_t>> busy;  // [offset, end) of live neighbours
      for (std::size_t j : placed)
        if (held_[i].first < held_[j].last && held_[j].first < held_[i].last)
          busy.emplace_back(requests[j].offset, requests[j].offset + aligned(requests[j].bytes));
      std::sort(busy.begin(), busy.end());
      std::size_t offset = 0;
      const std::size_t size = aligned(trace_[i].bytes);
      for (const auto& [lo, hi] : busy) {
        if (offset + size <= lo) break;
        offset = std::max(offset, hi);
      }
      requests[i].offset = offset;
      bytes = std::max(bytes, offset + size);
      placed.push_back(i);
    }
    return bytes;
  };
  // Several orders, the smallest arena kept (first fit is a heuristic, and no one order packs
  // every pass as tightly as it lived): largest first (large temporaries placed before the small
  // ones fragment the space), largest in bytes times lifetime first, and the pass's own order
  // (lifetimes that nest like a stack).
  auto area = [&](std::size_t i) {
    return double(trace_[i].bytes) * double(held_[i].last - held_[i].first);
  };
  std::vector<std::vector<std::size_t>> orders(3, order);
  std::stable_sort(orders[0].begin(), orders[0].end(),
                   [&](std::size_t a, std::size_t b) { return trace_[a].bytes > trace_[b].bytes; });
  std::stable_sort(orders[1].begin(), orders[1].end(),
                   [&](std::size_t a, std::size_t b) { return area(a) > area(b); });
  plan.bytes = pack(orders[0], plan.requests);
  for (std::size_t k = 1; k < orders.size(); ++k) {
    std::vector<Request> requests = plan.requests;
    const std::size_t bytes = pack(orders[k], requests);
    if (bytes < plan.bytes) {
      plan.requests = std::move(requests);
      plan.bytes = bytes;
    }
  }
  plans_[key_] = std::move(plan);
}

void Workspace::size_arena() {
  // One arena serves every key's plan (one pass runs at a time).
  std::size_t bytes = 0;
  for (const auto& [key, p] : plans_) bytes = std::max(bytes, p.bytes);
  if (bytes == arena_.extent(0)) return;
  arena_ = {};  // the old arena freed before the new one is made
  arena_ = Kokkos::View<char*, DeviceSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "workspace.arena"), bytes);
}

}  // namespace ufno
