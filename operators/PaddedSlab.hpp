#pragma once
// A slab of X rows, channels first, whose Y and T borders are zero in memory: the input of
// backend::PlaneConv3d. Each (channel, row) is a (Y + 2) x (T + 2) plane with a one-cell zero
// border, so a 3x3x3 convolution reads every neighbour of a cell at a fixed offset in the
// flattened plane and can run along it in whole vectors, without masks or boundary cases.
// One spare channel of zeros at the end keeps the vector reads past the last plane inside.
#include <stdexcept>

#include "operators/Tensor.hpp"

namespace ufno {

class PaddedSlab {
 public:
  PaddedSlab() = default;
  // Room for C channels of up to J rows of Y x T cells, all zero.
  PaddedSlab(int C, int J, int Y, int T)
      : C_(C), J_(J), Y_(Y), T_(T), buf_("ufno::padded_slab", std::size_t(C + 1) * J * plane()) {
    if (C < 1 || J < 3 || Y < 1 || T < 1)
      throw std::invalid_argument("PaddedSlab: needs channels, at least 3 rows and cells");
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
    return buf_.data() + c * channel_stride() + long(j) * plane() + (T_ + 2) + 1;
  }
  const float* data() const { return buf_.data(); }

 private:
  int C_ = 0, J_ = 0, Y_ = 0, T_ = 0;
  Kokkos::View<float*, Kokkos::HostSpace> buf_;  // Kokkos zero-fills it
};

}  // namespace ufno
