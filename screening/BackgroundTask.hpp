#pragma once
// A task on a thread of its own, owned: destroying a BackgroundTask that was not joined (an
// exception on the owner's thread before its join) asks the task to stop and joins it instead
// of std::terminate, so the owner's exception is reported as any other; an exception that ends
// the task itself is rethrown by join(). The task polls stop_requested() between its steps (a
// sweep's verification between two Flow runs).
#include <atomic>
#include <exception>
#include <functional>
#include <thread>
#include <utility>

namespace ufno {

class BackgroundTask {
 public:
  BackgroundTask() = default;
  explicit BackgroundTask(std::function<void(const std::atomic<bool>& stop_requested)> task)
      : thread_([this, task = std::move(task)] {
          try {
            task(stop_);
          } catch (...) {
            error_ = std::current_exception();
          }
        }) {}
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;
  ~BackgroundTask() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  bool running() const { return thread_.joinable(); }

  // Waits for the task; rethrows what ended it. Does nothing for a task already joined or none.
  void join() {
    if (!thread_.joinable()) return;
    thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace ufno
