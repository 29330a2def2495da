#pragma once
// What one rank's forward pass of DistributedFno4d holds at its peak, from the architecture, the
// case count and the number of ranks alone (before anything is allocated), so that a grid that
// cannot fit is refused in one line instead of meeting the kernel's OOM killer.
//
// The peak is the padded activation (width channels over this rank's share of the padded grid)
// and the transforms' working sets beside it: about 4.5 bytes per padded cell and channel, plus
// the program's own libraries and weights (benchmarks/README.md, "4-D FNO": measured peaks were
// 0-20 % above this figure, the allocator's retained blocks; never below). A lower bound, so a
// refusal on it is never wrong.
#include <cstddef>

#include "core/ExecutionPlan.hpp"
#include "core/Fno4dSpec.hpp"

namespace ufno {

struct Fno4dMemoryEstimate {
  static constexpr double kBytesPerPaddedCellAndChannel = 4.5;
  // The whole-tensor plan (core/ExecutionPlan.hpp) holds the activation and the layer end's
  // temporary of the same size at once: 8 bytes per padded cell and channel at least (derived,
  // not yet measured on a GPU).
  static constexpr double kWholeTensorBytesPerPaddedCellAndChannel = 8.0;
  static constexpr double kFixedBytes = 0.07e9;

  // Bytes for `cases` cases on one of `ranks` ranks (an even share of the padded grid).
  static double per_rank(const Fno4dSpec& s, std::size_t cases, int ranks,
                         PlanKind plan = PlanKind::Streaming) {
    double cells = 1.0;
    for (int e : s.padded_grid()) cells *= e;
    const double per_cell = plan == PlanKind::WholeTensor ? kWholeTensorBytesPerPaddedCellAndChannel
                                                          : kBytesPerPaddedCellAndChannel;
    return kFixedBytes + double(cases) * s.width * per_cell * cells / (ranks > 0 ? ranks : 1);
  }

  // One rank's share of the spectral weights of every layer (each rank holds the modes it owns):
  // width x width complex floats per kept mode, (2 m1)(2 m2)(2 m3) m4 kept modes a layer.
  // 1.2 GB in all at LGR1 (300 MB a layer).
  static double spectral_weight_bytes(const Fno4dSpec& s, int ranks) {
    double modes = s.modes[3];
    for (int a = 0; a < 3; ++a) modes *= 2.0 * s.modes[a];
    return double(s.layers) * s.width * s.width * modes * 8.0 / (ranks > 0 ? ranks : 1);
  }
};

}  // namespace ufno
