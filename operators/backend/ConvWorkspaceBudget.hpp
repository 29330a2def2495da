#pragma once
// The most device memory the convolutions' algorithms may use as scratch (cuDNN's workspace):
// one buffer of at most this size, shared by every convolution of the process (they run one
// after another on one stream), which the device memory estimate of a pass counts
// (operators/Net3dMemoryEstimate.hpp). Algorithms that need more are not chosen.
#include <cstddef>

namespace ufno::backend {

inline constexpr std::size_t kConvWorkspaceBudgetBytes = std::size_t(256) << 20;

}  // namespace ufno::backend
