#pragma once
// The padding the reference applies around the network: T and Y are replicate-padded at the end,
// then X is zero-padded at the end (so the padded X rows are zero in every channel), and the
// output is cropped back. Padding also turns the channel-last input (B, X, Y, T, C) into the
// channel-first layout of the layers in the same pass.
#include <array>

#include "core/Parallel.hpp"
#include "core/Tensor.hpp"

namespace ufno::reference {

struct DomainPadding {
  std::array<int, 3> pad{8, 8, 8};  // X (zeros), Y (replicate), T (replicate), all at the end

  // (B, X, Y, T, C) channel-last -> (B, C, X+px, Y+py, T+pt) channel-first.
  Tensor pad_channel_last(const Tensor& in) const {
    const int X = in.extent(1), Y = in.extent(2), T = in.extent(3), C = in.extent(4);
    Tensor out = empty_tensor("padded", in.extent(0), C, X + pad[0], Y + pad[1], T + pad[2]);
    ufno::parallel_for(
        "ufno::pad", range5(out), KOKKOS_LAMBDA(int n, int c, int x, int y, int t) {
          const int ys = y < Y ? y : Y - 1, ts = t < T ? t : T - 1;
          out(n, c, x, y, t) = x < X ? in(n, x, ys, ts, c) : 0.f;
        });
    return out;
  }

  // (B, C, Xp, Yp, Tp) -> (B, C, Xp-px, Yp-py, Tp-pt): drop the padded ends.
  Tensor crop(const Tensor& in) const {
    Tensor out = empty_tensor("cropped", in.extent(0), in.extent(1), in.extent(2) - pad[0],
                              in.extent(3) - pad[1], in.extent(4) - pad[2]);
    ufno::parallel_for(
        "ufno::crop", range5(out), KOKKOS_LAMBDA(int n, int c, int x, int y, int t) {
          out(n, c, x, y, t) = in(n, c, x, y, t);
        });
    return out;
  }
};

}  // namespace ufno::reference
