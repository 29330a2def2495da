#pragma once
// An already-encoded input tensor file: dataset /input of shape (B, X, Y, T, 12), float.
#include <array>
#include <string>

#include "operators/WeightSource.hpp"

namespace ufno {

// Reads /input and checks its rank, channel count, grid (against `grid`) and values.
HostArray read_input_tensor(const std::string& path, const std::array<int, 3>& grid, int channels);

}  // namespace ufno
