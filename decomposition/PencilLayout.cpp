#include "decomposition/PencilLayout.hpp"

#include <stdexcept>

namespace ufno::dist {

PencilLayout PencilLayout::block(std::array<int, 3> global, std::array<int, 3> parts) {
  std::vector<Box3> boxes;
  for (int a = 0; a < 3; ++a)
    if (parts[a] < 1) throw std::invalid_argument("PencilLayout: parts must be >= 1");
  for (int i = 0; i < parts[0]; ++i)
    for (int j = 0; j < parts[1]; ++j)
      for (int k = 0; k < parts[2]; ++k) {
        const auto rx = block_range(global[0], parts[0], i);
        const auto ry = block_range(global[1], parts[1], j);
        const auto rt = block_range(global[2], parts[2], k);
        boxes.push_back(Box3{{rx[0], ry[0], rt[0]}, {rx[1], ry[1], rt[1]}});
      }
  return PencilLayout(global, std::move(boxes));
}

bool PencilLayout::is_partition() const {
  long total = 0;
  const Box3 dom = domain_box(global_);
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    if (!dom.contains(boxes_[i])) return false;
    total += boxes_[i].count();
    for (std::size_t j = i + 1; j < boxes_.size(); ++j)
      if (!boxes_[i].intersect(boxes_[j]).empty()) return false;
  }
  return total == dom.count();
}

std::string PencilLayout::str() const {
  std::string s;
  for (std::size_t r = 0; r < boxes_.size(); ++r)
    s += (r ? " " : "") + std::to_string(r) + ":" + boxes_[r].str();
  return s;
}

}  // namespace ufno::dist
