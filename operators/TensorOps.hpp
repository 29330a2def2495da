#pragma once
// Small whole-tensor kernels shared by the layers: channel concatenation and the residual sum
// with its activation. Each is one parallel_for over the default execution space.
#include <stdexcept>

#include "core/Activation.hpp"
#include "core/Parallel.hpp"
#include "core/Tensor.hpp"
#include "core/Workspace.hpp"

namespace ufno {

// cat((a, b), dim=1): the U-Net joins skip and upsampled features in this order.
inline Tensor concat_channels(const Tensor& a, const Tensor& b) {
  const Shape5 sa = shape_of(a), sb = shape_of(b);
  if (sa[0] != sb[0] || sa[2] != sb[2] || sa[3] != sb[3] || sa[4] != sb[4])
    throw std::invalid_argument("concat_channels: " + to_string(sa) + " vs " + to_string(sb));
  Tensor out = temporary_tensor("concat", sa[0], sa[1] + sb[1], sa[2], sa[3], sa[4]);
  const int ca = sa[1];
  ufno::parallel_for(
      "ufno::concat", range5(out), KOKKOS_LAMBDA(int n, int c, int x, int y, int t) {
        out(n, c, x, y, t) = c < ca ? a(n, c, x, y, t) : b(n, c - ca, x, y, t);
      });
  return out;
}

// acc = act(acc + add), elementwise over equal shapes.
inline void add_activate(const Tensor& acc, const Tensor& add, Activation act, float slope = 0.f) {
  if (shape_of(acc) != shape_of(add))
    throw std::invalid_argument("add_activate: " + to_string(shape_of(acc)) + " vs " +
                                to_string(shape_of(add)));
  float* p = acc.data();
  const float* q = add.data();
  ufno::parallel_for(
      "ufno::add_activate", Kokkos::RangePolicy<ExecSpace>(0, acc.span()),
      KOKKOS_LAMBDA(const std::size_t i) { p[i] = activate(act, slope, p[i] + q[i]); });
}

}  // namespace ufno
