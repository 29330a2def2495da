#pragma once
// Copies between a box's column runs in one first-axis row of a block (ColumnRuns.hpp) and a
// compact buffer, on the device: the 4-D FNO's lift and head move the interior of its zero-padded
// activation this way, and the Fourier layer update the columns it computes.
#include <array>
#include <cstddef>

#include "core/Parallel.hpp"
#include "decomposition/ColumnRuns.hpp"

namespace ufno::dist {

// A box's runs with their starts on the device (built once per box, used for every row).
struct DeviceColumnRuns {
  Kokkos::View<long*, DeviceSpace> start;
  long length = 0;
  long columns() const { return long(start.size()) * length; }
};

template <std::size_t D>
DeviceColumnRuns device_column_runs(const std::array<int, D>& e, const Box<D>& box) {
  const ColumnRuns r = column_runs<D>(e, box);
  DeviceColumnRuns d;
  d.length = r.length;
  d.start = device_copy_of(r.start, "column_runs.start");
  return d;
}

// Cells [t0, t0 + width) of every run column of one row, for C channels: channel c's row starts
// at row + c * plane, its columns `column` cells apart; compact is (C, run columns, width).
// to_compact copies row -> compact, else compact -> row.
template <class T>
void copy_column_runs(T* row, long plane, long column, long t0, T* compact,
                      const DeviceColumnRuns& runs, int C, long width, bool to_compact) {
  const auto start = runs.start;
  const long len = runs.length, nruns = long(start.size()), per_channel = runs.columns() * width;
  ufno::parallel_for(
      "ufno::column_runs_copy", Kokkos::RangePolicy<ExecSpace>(0, long(C) * nruns * len),
      KOKKOS_LAMBDA(const int64_t i) {
        const int64_t k = i % len, cr = i / len, r = cr % nruns, c = cr / nruns;
        T* xs = row + c * plane + (start(r) + k) * column + t0;
        T* cs = compact + c * per_channel + (r * len + k) * width;
        if (to_compact)
          for (long v = 0; v < width; ++v) cs[v] = xs[v];
        else
          for (long v = 0; v < width; ++v) xs[v] = cs[v];
      });
}

}  // namespace ufno::dist
