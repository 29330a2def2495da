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

}  // namespace ufno
