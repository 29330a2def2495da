#pragma once
// The model file's de-scaling of the network's raw output to physical units:
// physical = raw * output_scale + output_offset (dP in bar; SG is not scaled).
#include "core/ModelSpec.hpp"
#include "core/Tensor.hpp"

namespace ufno {

// Defined in OutputScaling.cpp, not inline here: a device lambda in an inline header function is
// compiled into every translation unit that calls it, and nvcc (without relocatable device code)
// then registers one kernel per unit under one merged host symbol. The model parity test, which
// links the model and the test reference that both de-scale, crashed so in the de-scaled pass on
// a GPU while ufno_predict, with one caller, ran.
void descale_output(Tensor& y, const ModelSpec& s);

}  // namespace ufno
