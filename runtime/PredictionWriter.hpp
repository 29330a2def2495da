#pragma once
// A prediction's output file (README, "ufno_predict"): /SG and/or /dP (case, time, layer, radial
// cell) with units, /TIMES, and the attributes a rerun reads to skip finished cases (the models'
// fingerprint, runtime/BatchRun.hpp).
#include <string>

#include "runtime/Predictor.hpp"

namespace ufno {

// Writes a prediction (every rank its block) through a temporary file renamed into place.
void write_prediction(const std::string& path, const Predictor& predictor, const Prediction& p,
                      const std::string& source);

}  // namespace ufno
