#pragma once
// A slab of X rows, channels first, whose Y and T borders are zero in memory: the input of
// backend::PlaneConv3d. Each (channel, row) is a (Y + 2) x (T + 2) plane with a one-cell zero
// border, so a 3x3x3 convolution reads every neighbour of a cell at a fixed offset in the
// flattened plane and can run along it in whole vectors, without masks or boundary cases.
// One spare channel of zeros at the end keeps the vector reads past the last plane inside.
//
// The memory is mapped straight from the kernel (mmap) and unmapped with the last copy of the
// slab, not taken from the heap: its pages arrive zeroed, and the 20 MB that every U-Net call
// needed no longer leave holes in the heap that later 100 MB tensors could not reuse (the
// U-FNO's peak memory rose by 95 MB in some passes, at random, when it came from the heap).
#include <sys/mman.h>

#include <memory>
#include <new>
#include <stdexcept>

#include "core/Tensor.hpp"

namespace ufno {

class PaddedSlab {
 public:
  PaddedSlab() = default;
  // Room for C channels of up to J rows of Y x T cells, all zero.
  PaddedSlab(int C, int J, int Y, int T) : C_(C), J_(J), Y_(Y), T_(T) {
    if (C < 1 || J < 3 || Y < 1 || T < 1)
      throw std::invalid_argument("PaddedSlab: needs channels, at least 3 rows and cells");
    mapping_ = std::make_shared<Mapping>(sizeof(float) * std::size_t(C + 1) * J * plane());
  }
  int channels() const { return C_; }
  int rows() const { return J_; }
  int ny() const { return Y_; }
  int nt() const { return T_; }
  long plane() const { return long(Y_ + 2) * (T_ + 2); }
  long channel_stride() const { return long(J_) * plane(); }
  // The first interior cell (y, t) = (0, 0) of row j of channel c; cell (y, t) is at
  // interior(c, j) + y * (T + 2) + t. Writers touch interior cells only, so borders stay zero.
  float* interior(int c, int j) const {
    return data() + c * channel_stride() + long(j) * plane() + (T_ + 2) + 1;
  }
  float* data() const { return mapping_ ? mapping_->floats : nullptr; }

 private:
  struct Mapping {
    float* floats = nullptr;
    std::size_t bytes = 0;
    explicit Mapping(std::size_t n) : bytes(n) {
      void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      floats = static_cast<float*>(p);
    }
    ~Mapping() { munmap(floats, bytes); }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
  };

  int C_ = 0, J_ = 0, Y_ = 0, T_ = 0;
  std::shared_ptr<Mapping> mapping_;
};

}  // namespace ufno
