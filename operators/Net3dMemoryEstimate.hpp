#pragma once
// A lower bound of what one rank's forward pass of DistributedNet3d holds at its peak on the
// whole-tensor plan (the GPU's), from the architecture, the cases in the pass and the ranks alone,
// so that a pass the device cannot hold is refused, or made smaller, before anything large is
// allocated (a failed device allocation part-way would leave a half-done run).
//
// Counted in activations of (width channels x padded cells): the layer's input x and the layer
// end's temporary (every Fourier layer), plus on U-Fourier layers the U-Net's output and its top
// level, the join of 2 x width channels and the deconvolution's parity outputs (one activation).
// Derived from the tensors alive at once, not measured on a GPU; a U-FNO adds the convolutions'
// shared workspace at its budget (operators/backend/ConvWorkspaceBudget.hpp); the transforms'
// kept-mode tensors and the allocator's slack come on top, so it never refuses a pass that would
// fit.
#include <cstddef>

#include "core/ModelSpec.hpp"
#include "operators/backend/ConvWorkspaceBudget.hpp"

namespace ufno {

struct Net3dMemoryEstimate {
  static constexpr double kFixedBytes = 0.07e9;  // libraries, weights, small buffers

  static double activations(const ModelSpec& s) { return s.n_ufourier > 0 ? 6.0 : 2.0; }

  // Bytes for `cases` cases on one of `ranks` ranks (an even share of the padded grid).
  static double per_rank(const ModelSpec& s, std::size_t cases, int ranks) {
    double cells = 1.0;
    for (int e : s.padded_grid()) cells *= e;
    const double workspace = s.n_ufourier > 0 ? double(backend::kConvWorkspaceBudgetBytes) : 0.0;
    return kFixedBytes + workspace +
           double(cases) * activations(s) * 4.0 * s.width * cells / (ranks > 0 ? ranks : 1);
  }
};

}  // namespace ufno
