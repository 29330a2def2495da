#include "decomposition/PencilLayout.hpp"

#include <stdexcept>

namespace ufno::dist {

template <std::size_t D>
PencilLayout<D> PencilLayout<D>::block(Extents global, Extents parts) {
  long ranks = 1;
  for (std::size_t a = 0; a < D; ++a) {
    if (parts[a] < 1) throw std::invalid_argument("PencilLayout: parts must be >= 1");
    ranks *= parts[a];
  }
  std::vector<Box<D>> boxes(ranks);
  for (long r = 0; r < ranks; ++r) {
    long rest = r;
    for (std::size_t a = D; a-- > 0;) {  // row-major: the last axis varies fastest
      const auto range = block_range(global[a], parts[a], int(rest % parts[a]));
      rest /= parts[a];
      boxes[r].lo[a] = range[0];
      boxes[r].hi[a] = range[1];
    }
  }
  return PencilLayout(global, std::move(boxes));
}

template <std::size_t D>
bool PencilLayout<D>::is_partition() const {
  long total = 0;
  const Box<D> dom = domain_box(global_);
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    if (!dom.contains(boxes_[i])) return false;
    total += boxes_[i].count();
    for (std::size_t j = i + 1; j < boxes_.size(); ++j)
      if (!boxes_[i].intersect(boxes_[j]).empty()) return false;
  }
  return total == dom.count();
}

template <std::size_t D>
std::string PencilLayout<D>::str() const {
  std::string s;
  for (std::size_t r = 0; r < boxes_.size(); ++r)
    s += (r ? " " : "") + std::to_string(r) + ":" + boxes_[r].str();
  return s;
}

template class PencilLayout<3>;
template class PencilLayout<4>;

}  // namespace ufno::dist
