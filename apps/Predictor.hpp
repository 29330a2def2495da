#pragma once
// What ufno_predict does, as a reusable object (batch runs and the web server keep one warm):
// the models are loaded once; each call encodes or reads an input, runs every model and returns
// the physical fields in the output layout (B, T, X, Y).
#include <memory>
#include <string>
#include <vector>

#include "io/CaseFile.hpp"
#include "operators/Net3d.hpp"
#include "operators/WeightSource.hpp"

namespace ufno {

struct Field {
  std::string name;                // "SG" or "dP"
  std::string units;               // "1" or "bar"
  std::vector<std::size_t> shape;  // (B, T, X, Y)
  std::vector<float> values;
};

struct Prediction {
  std::vector<Field> fields;
  std::vector<double> times_days;
};

class Predictor {
 public:
  // Loads each model file; their grids must agree and their variables must differ.
  explicit Predictor(const std::vector<std::string>& model_paths);

  const ModelSpec& spec() const { return models_.front()->spec(); }
  std::string variables() const;  // e.g. "SG+dP"

  // input: channel-last (B, X, Y, T, 12) encoded tensor.
  Prediction run(const HostArray& input, const std::vector<double>& times_days);
  Prediction run_case(const ReservoirCase& c);

 private:
  std::vector<std::unique_ptr<Net3d>> models_;
};

// Writes a prediction through a temporary file renamed into place.
void write_prediction(const std::string& path, const Prediction& p, const std::string& source);

}  // namespace ufno
