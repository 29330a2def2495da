#include "decomposition/ProcessGrid.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/InputError.hpp"

namespace ufno::dist {

ProcessGrid::ProcessGrid(MPI_Comm comm, std::array<int, 3> parts) : comm_(comm), parts_(parts) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  if (parts[0] * parts[1] * parts[2] != size_)
    throw std::invalid_argument("ProcessGrid: " + str() + " does not match " +
                                std::to_string(size_) + " ranks");
}

std::string ProcessGrid::str() const {
  return std::to_string(parts_[0]) + "x" + std::to_string(parts_[1]) +
         (parts_[2] != 1 ? "x" + std::to_string(parts_[2]) : "");
}

std::array<int, 3> ProcessGrid::automatic(int ranks, const std::array<int, 3>& n) {
  // Among px * py = ranks with px <= X and py <= Y, pick the one whose busiest rank exchanges
  // the fewest halo cells per layer of T (an interior block has two cuts per split axis),
  // preferring fewer X blocks on ties.
  std::array<int, 3> best{ranks, 1, 1};
  double best_cost = -1;
  for (int px = 1; px <= ranks; ++px) {
    if (ranks % px) continue;
    const int py = ranks / px;
    if (px > n[0] || py > n[1]) continue;
    const double bx = double(n[0]) / px, by = double(n[1]) / py;
    const double cost = std::min(2, px - 1) * by + std::min(2, py - 1) * bx;
    if (best_cost < 0 || cost < best_cost - 1e-9) {
      best_cost = cost;
      best = {px, py, 1};
    }
  }
  return best;
}

ProcessGrid ProcessGrid::from_string(MPI_Comm comm, const std::string& spec,
                                     const std::array<int, 3>& n) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::array<int, 3> parts{1, 1, 1};
  if (spec.empty() || spec == "auto") {
    parts = automatic(size, n);
  } else {
    std::vector<int> v;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, 'x')) {
      // Digits only, and few enough to be a rank count (std::stoi would throw on overflow).
      if (item.empty() || item.size() > 7 ||
          item.find_first_not_of("0123456789") != std::string::npos)
        throw InputError("--grid", "", "\"" + spec + "\" is not a grid such as 2x2 or 4x1");
      v.push_back(std::stoi(item));
    }
    if (v.size() < 2 || v.size() > 3 || v[0] < 1 || v[1] < 1 || (v.size() == 3 && v[2] < 1))
      throw InputError("--grid", "", "\"" + spec + "\" is not a grid such as 2x2 or 4x1");
    parts = {v[0], v[1], v.size() == 3 ? v[2] : 1};
  }
  const long product = long(parts[0]) * parts[1] * parts[2];
  if (product != size)
    throw InputError("--grid", "",
                     spec + " has " + std::to_string(product) + " ranks but the job has " +
                         std::to_string(size));
  const char* axis[3] = {"X", "Y", "T"};
  for (int a = 0; a < 3; ++a)
    if (parts[a] > n[a])
      throw InputError("--grid", "",
                       std::string(axis[a]) + " is split into " + std::to_string(parts[a]) +
                           " blocks but has only " + std::to_string(n[a]) + " cells");
  return ProcessGrid(comm, parts);
}

}  // namespace ufno::dist
