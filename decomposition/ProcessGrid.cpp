#include "decomposition/ProcessGrid.hpp"

#include <algorithm>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "core/InputError.hpp"

namespace ufno::dist {

ProcessGrid::ProcessGrid(MPI_Comm comm, std::vector<int> parts)
    : comm_(comm), parts_(std::move(parts)) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  long product = 1;
  for (int p : parts_) product *= p;
  if (parts_.size() < 2 || *std::min_element(parts_.begin(), parts_.end()) < 1 || product != size_)
    throw std::invalid_argument("ProcessGrid: " + str() + " does not match " +
                                std::to_string(size_) + " ranks");
}

void ProcessGrid::check_axes(std::size_t d) const {
  if (parts_.size() != d)
    throw std::invalid_argument("ProcessGrid: a grid over " + std::to_string(parts_.size()) +
                                " axes used for " + std::to_string(d));
}

std::string ProcessGrid::str() const {
  // The space axes; the time axis only if it were split.
  std::string s;
  const std::size_t shown = parts_.size() - (parts_.empty() || parts_.back() == 1 ? 1 : 0);
  for (std::size_t a = 0; a < shown; ++a) s += (a ? "x" : "") + std::to_string(parts_[a]);
  return s;
}

std::vector<int> ProcessGrid::automatic(int ranks, const std::vector<int>& n) {
  // Among the factorisations of `ranks` over the space axes (time stays whole) with no axis split
  // into more blocks than cells, pick the one whose busiest rank has the smallest block surface
  // (halo cells; an interior block has two cuts per split axis), preferring fewer blocks along
  // the earlier axes on ties.
  const std::size_t space = n.size() - 1;
  std::vector<int> best, cur(n.size(), 1);
  double best_cost = -1;
  std::function<void(std::size_t, int)> visit = [&](std::size_t a, int left) {
    if (a == space) {
      if (left != 1) return;
      double cost = 0;
      for (std::size_t s = 0; s < space; ++s) {
        double face = double(n.back());
        for (std::size_t o = 0; o < space; ++o)
          if (o != s) face *= double(n[o]) / cur[o];
        cost += std::min(2, cur[s] - 1) * face;
      }
      if (best_cost < 0 || cost < best_cost - 1e-9) best_cost = cost, best = cur;
      return;
    }
    for (int p = 1; p <= left; ++p)
      if (left % p == 0 && p <= n[a]) {
        cur[a] = p;
        visit(a + 1, left / p);
      }
    cur[a] = 1;
  };
  visit(0, ranks);
  if (best.empty()) {  // more ranks than cells: the first axis takes them all (refused later)
    best.assign(n.size(), 1);
    best[0] = ranks;
  }
  return best;
}

ProcessGrid ProcessGrid::from_string(MPI_Comm comm, const std::string& spec,
                                     const std::vector<int>& n) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const std::size_t axes = n.size();
  std::vector<int> parts;
  const std::string example = axes == 4 ? "2x2x1 or 4x1x1" : "2x2 or 4x1";
  if (spec.empty() || spec == "auto") {
    parts = automatic(size, n);
  } else {
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, 'x')) {
      // Digits only, and few enough to be a rank count (std::stoi would throw on overflow).
      if (item.empty() || item.size() > 7 ||
          item.find_first_not_of("0123456789") != std::string::npos)
        throw InputError("--grid", "", "\"" + spec + "\" is not a grid such as " + example);
      parts.push_back(std::stoi(item));
    }
    if (!spec.empty() && spec.back() == 'x')
      throw InputError("--grid", "", "\"" + spec + "\" is not a grid such as " + example);
    if (parts.size() == axes - 1) parts.push_back(1);
    if (parts.size() != axes || *std::min_element(parts.begin(), parts.end()) < 1)
      throw InputError("--grid", "",
                       "\"" + spec + "\" is not a grid such as " + example + " (one part per " +
                           (axes == 4 ? "space axis A1, A2, A3" : "space axis X, Y") + ")");
    if (parts.back() != 1)
      throw InputError("--grid", "", "\"" + spec + "\" splits time, which is never split");
  }
  long product = 1;
  for (int p : parts) product *= p;
  if (product != size)
    throw InputError("--grid", "",
                     spec + " has " + std::to_string(product) + " ranks but the job has " +
                         std::to_string(size));
  const char* names3[3] = {"X", "Y", "T"};
  const char* names4[4] = {"A1", "A2", "A3", "T"};
  for (std::size_t a = 0; a < axes; ++a)
    if (parts[a] > n[a])
      throw InputError("--grid", "",
                       std::string(axes == 4 ? names4[a] : names3[a]) + " is split into " +
                           std::to_string(parts[a]) + " blocks but has only " +
                           std::to_string(n[a]) + " cells");
  return ProcessGrid(comm, parts);
}

}  // namespace ufno::dist
