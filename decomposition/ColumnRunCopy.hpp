#pragma once
// Copies between a box's column runs in one first-axis row of a block (ColumnRuns.hpp) and a
// compact buffer, on the device: the 4-D FNO's lift and head move the interior of its zero-padded
// activation this way, and the Fourier layer update the columns it computes.
#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/Parallel.hpp"
#include "decomposition/ColumnRuns.hpp"

namespace ufno::dist {

// A box's runs with their starts on the device (built once per box, used for every row).
struct DeviceColumnRuns {
  Kokkos::View<long*, DeviceSpace> start;
  long length = 0;
  long columns() const { return long(start.size()) * length; }
  // Where the device reads host memory, `start` views this table (no allocation, no copy: the
  // streaming plan builds runs for every row group of a pass).
  std::shared_ptr<const std::vector<long>> host_start;
};

template <std::size_t D>
DeviceColumnRuns device_column_runs(const std::array<int, D>& e, const Box<D>& box) {
  ColumnRuns r = column_runs<D>(e, box);
  DeviceColumnRuns d;
  d.length = r.length;
  if constexpr (kHostTensors) {
    d.host_start = std::make_shared<const std::vector<long>>(std::move(r.start));
    d.start = Kokkos::View<long*, DeviceSpace>(const_cast<long*>(d.host_start->data()),
                                               d.host_start->size());
  } else {
    d.start = device_copy_of(r.start, "column_runs.start");
  }
  return d;
}

// The runs of (e, box) as device_column_runs makes them, made once per process where the device
// cannot read host memory and kept: the streaming plan asks for the same box at every row group
// of every pass, and a device table is an allocation, a copy and a fence each time
// (tests/test_pass_allocations.cpp counts them in a warm pass). At most 256 kept (a process that
// sees many shapes starts over); dropped before Kokkos finalizes.
template <std::size_t D>
DeviceColumnRuns kept_device_column_runs(const std::array<int, D>& e, const Box<D>& box) {
  if constexpr (kHostTensors) {
    return device_column_runs<D>(e, box);
  } else {
    static std::mutex mutex;
    static std::map<std::array<int, 3 * D>, DeviceColumnRuns> kept;
    static bool hooked = false;
    std::array<int, 3 * D> key{};
    for (std::size_t a = 0; a < D; ++a) {
      key[a] = e[a];
      key[D + a] = box.lo[a];
      key[2 * D + a] = box.hi[a];
    }
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = kept.find(key); it != kept.end()) return it->second;
    if (!hooked) {
      Kokkos::push_finalize_hook([] {
        const std::lock_guard<std::mutex> l(mutex);
        kept.clear();
      });
      hooked = true;
    }
    if (kept.size() >= 256) kept.clear();
    return kept.emplace(key, device_column_runs<D>(e, box)).first->second;
  }
}

// Cells [t0, t0 + width) of every run column of R consecutive first-axis rows, for C channels:
// channel c's first row starts at row + c * plane, each next row row_stride further, its columns
// `column` cells apart; compact is (C, R, run columns, width). to_compact copies row -> compact,
// else compact -> row. One iteration per cell on the whole-tensor plan, per column otherwise.
template <class T>
void copy_column_runs(T* row, long plane, long row_stride, long column, long t0, T* compact,
                      const DeviceColumnRuns& runs, int C, int R, long width, bool to_compact) {
  const auto start = runs.start;
  const long len = runs.length, nruns = long(start.size()), per_row = runs.columns() * width;
  ufno::parallel_runs(
      "ufno::column_runs_copy", long(C) * R * nruns * len, width,
      KOKKOS_LAMBDA(const int64_t i, int64_t v0, int64_t v1) {
        const int64_t k = i % len, q = i / len, r = q % nruns, cr = q / nruns;  // cr = c * R + row
        T* xs = row + (cr / R) * plane + (cr % R) * row_stride + (start(r) + k) * column + t0;
        T* cs = compact + cr * per_row + (r * len + k) * width;
        if (to_compact)
          for (int64_t v = v0; v < v1; ++v) cs[v] = xs[v];
        else
          for (int64_t v = v0; v < v1; ++v) xs[v] = cs[v];
      });
}

// The same on one row: compact is (C, run columns, width).
template <class T>
void copy_column_runs(T* row, long plane, long column, long t0, T* compact,
                      const DeviceColumnRuns& runs, int C, long width, bool to_compact) {
  copy_column_runs<T>(row, plane, 0, column, t0, compact, runs, C, 1, width, to_compact);
}

}  // namespace ufno::dist
