#pragma once
// An already-encoded input tensor file: dataset /input of shape (B, X, Y, T, 12), float.
#include <mpi.h>

#include <array>
#include <string>

#include "core/WeightSource.hpp"
#include "io/CaseFile.hpp"

namespace ufno {

// Reads the (X, Y) block `block` (default: all) of /input and checks its rank, channel count,
// grid (against `grid`) and values. With a communicator the read is collective.
HostArray read_input_tensor(const std::string& path, const std::array<int, 3>& grid, int channels,
                            CaseBlock block = {}, MPI_Comm comm = MPI_COMM_NULL);

// The case count B of a 4-D FNO's input /input (B, A1, A2, A3, T, C), its rank, grid and
// channels checked against the model's; reads no values (to size the run before reading them).
std::size_t input_tensor4d_cases(const std::string& path, const std::array<int, 4>& grid,
                                 int channels, MPI_Comm comm = MPI_COMM_NULL);

// A 4-D FNO's input: /input (B, A1, A2, A3, T, C) channels-last, of which this rank reads the
// (A1, A2, A3, T) block [lo, lo + count) of every case and channel (collective with a
// communicator). Checks the rank, the grid and channels against the model's, a case count that
// fits this build's limits, and that every value read is finite and below 1e6 in magnitude.
HostArray read_input_tensor4d(const std::string& path, const std::array<int, 4>& grid, int channels,
                              const std::array<int, 4>& lo, const std::array<int, 4>& count,
                              MPI_Comm comm = MPI_COMM_NULL);

}  // namespace ufno
