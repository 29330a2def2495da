#pragma once
// Where layers take their weights from: a named store of host arrays (the model file, or a test's
// own arrays). Layers ask for a name and the shape their attributes imply; a mismatch is an
// InputError naming the store and the tensor, so a model file that contradicts itself is caught.
#include <cstddef>
#include <string>
#include <vector>

#include "core/InputError.hpp"

namespace ufno {

struct HostArray {
  std::vector<std::size_t> shape;
  std::vector<float> data;  // row-major; complex arrays have a trailing dimension 2 (re, im)
};

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual bool has(const std::string& name) const = 0;
  virtual HostArray get(const std::string& name) const = 0;  // throws InputError if missing
  // The array's shape, without reading it (throws InputError if missing).
  virtual std::vector<std::size_t> shape(const std::string& name) const = 0;
  virtual std::string origin() const = 0;  // file name, for messages

  // The hyperslab [start, start + count) of the array `name` (row-major), for a rank that needs
  // only its block of a grid-sized array. This default reads the whole array and slices it;
  // file-backed sources read the block alone.
  virtual HostArray get_block(const std::string& name, const std::vector<std::size_t>& start,
                              const std::vector<std::size_t>& count) const {
    const HostArray all = get(name);
    HostArray b;
    b.shape = count;
    std::size_t n = 1;
    for (std::size_t c : count) n *= c;
    b.data.resize(n);
    const std::size_t rank = count.size();
    std::vector<std::size_t> i(rank, 0);
    for (std::size_t f = 0; f < n; ++f) {
      std::size_t src = 0;
      for (std::size_t a = 0; a < rank; ++a) src = src * all.shape[a] + start[a] + i[a];
      b.data[f] = all.data[src];
      for (std::size_t a = rank; a-- > 0;) {  // next index, the last axis fastest
        if (++i[a] < count[a]) break;
        i[a] = 0;
      }
    }
    return b;
  }

  // get_block into `out`, whose storage a file-backed source reuses when it already has the
  // block's size (a layer streaming equal corner blocks reads them into one buffer). Without
  // check_values a source may skip its value checks: for a caller that screens the values as it
  // uses them and asks again, checked, for a block that looks suspect.
  virtual void get_block_into(const std::string& name, const std::vector<std::size_t>& start,
                              const std::vector<std::size_t>& count, HostArray& out,
                              bool check_values = true) const {
    (void)check_values;
    out = get_block(name, start, count);
  }

  // The array `name` with exactly the shape `expected`, checked before the array is read: a
  // file declaring a huge dataset is refused without allocating for it.
  HostArray take(const std::string& name, const std::vector<std::size_t>& expected) const {
    const std::vector<std::size_t> s = shape(name);
    if (s != expected)
      throw InputError(origin(), name,
                       "shape " + shape_string(s) + " does not match the " +
                           shape_string(expected) + " implied by the model attributes");
    return get(name);
  }
};

}  // namespace ufno
