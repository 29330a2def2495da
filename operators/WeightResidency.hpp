#pragma once
// Where a 4-D FNO's spectral weights live between forward passes, and which way a run takes.
//
// - All: every layer's weights held in memory (on the device where the tensors live there),
//   read from the model file once; each pass multiplies with them in place.
// - PerLayer: read from the weight source while each layer runs, one corner's part at a time
//   (DistributedSpectralConv::stream_weights_from): memory holds one corner of one layer, not all
//   layers (300 MB a layer at LGR size), at the cost of reading the file again on every pass.
//
// The choice: on a device (tensors not in host memory) the weights stay resident whenever they
// fit beside the pass, since every pass would otherwise copy each corner from the file's
// pageable host memory into the device again; where they do not fit, or the free memory cannot
// be read, they are read per layer. On the host one pass (ufno_predict, each level of a nested
// chain) reads per layer (the same reads as holding them all, a third less peak memory at LGR
// size) and several passes hold them.
#include <optional>

#include "core/Tensor.hpp"

namespace ufno {

enum class WeightResidency { All, PerLayer };

// weight_bytes: this rank's share of the spectral weights; spare_device_bytes: the device memory
// this rank may still take beside its pass's own need (nullopt: unknown); passes: the forward
// passes the model makes; host_tensors: whether the tensors live in host memory (the build's).
inline WeightResidency choose_weight_residency(double weight_bytes,
                                               std::optional<double> spare_device_bytes, int passes,
                                               bool host_tensors = kHostTensors) {
  if (host_tensors) return passes > 1 ? WeightResidency::All : WeightResidency::PerLayer;
  return spare_device_bytes && weight_bytes <= *spare_device_bytes ? WeightResidency::All
                                                                   : WeightResidency::PerLayer;
}

inline const char* residency_name(WeightResidency r) {
  return r == WeightResidency::All ? "resident" : "per layer";
}

}  // namespace ufno
