#pragma once
// What ufno_predict does, as a reusable object (batch runs and the web server keep one warm):
// the models are loaded once for a process grid; each call encodes or reads this rank's block of
// an input, runs every model and returns this rank's block of the physical fields in the output
// layout (B, T, lx, ly). On one rank the block is the whole grid.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/MemoryBudget.hpp"
#include "core/RunOptions.hpp"
#include "decomposition/ProcessGrid.hpp"
#include "io/CaseFile.hpp"
#include "io/TrainingProfileFile.hpp"
#include "operators/DistributedNet3d.hpp"
#include "runtime/Heads.hpp"

namespace ufno {

struct Field {
  std::string name;                // "SG" or "dP"
  std::string units;               // "1" or "bar"
  std::vector<std::size_t> shape;  // this rank's block (B, T, lx, ly)
  std::vector<float> values;
};

struct Prediction {
  std::vector<Field> fields;
  std::vector<double> times_days;
  std::size_t cases = 0;
  // The case's radial cell widths (Y) and layer thicknesses (X), metres, whole, when it came from a
  // case file (not an encoded tensor): the geometry of the prediction's viewer description.
  std::vector<double> dr, dz;
};

class Predictor {
 public:
  // Loads each model file for the process grid `grid_spec` ("2x2", "auto") over `comm`; the
  // models' grids must agree and their variables differ. `field_heads`: the field stage applied
  // to the dP field (a HeadRegistry's, screening/HeadRegistry.hpp, which reports their notes);
  // without, the model files' own (read_field_heads, their notes in notes()). Collective; input
  // errors are agreed.
  Predictor(const std::vector<std::string>& model_paths, MPI_Comm comm,
            const std::string& grid_spec = "auto",
            dist::ExchangeAlgorithm alg = dist::ExchangeAlgorithm::Alltoallv,
            const RunOptions& options = {}, std::optional<Heads> field_heads = std::nullopt);

  const ModelSpec& spec() const { return models_.front()->spec(); }
  const dist::ProcessGrid& grid() const { return *grid_; }
  std::string variables() const;  // e.g. "SG+dP"
  // A fingerprint of the model files' contents: outputs carry it, so that a batch rerun with
  // other models predicts again instead of taking an old output as done.
  const std::string& models_fingerprint() const { return fingerprint_; }
  // Field-stage heads this Predictor read and left out, one line each (a dP field-scale head
  // fitted to another network).
  const std::vector<std::string>& notes() const { return notes_; }
  // Whether a field-stage head reads each case's whole file (the maximum-dP peak match).
  bool field_heads_read_whole_cases() const { return field_heads_.reads_whole_cases(); }
  CaseBlock block() const;                                         // this rank's (X, Y) block
  std::vector<std::size_t> global_shape(std::size_t cases) const;  // (B, T, X, Y)

  // The most cases, at most `wanted`, that one pass fits in the free memory of the GPU each rank
  // runs on (operators/Net3dMemoryEstimate.hpp; the models run one after the other, so the
  // largest counts); `wanted` where the tensors live in host memory. Throws AgreedInputError,
  // one line with the estimated need against the free memory, when not even one case fits.
  // Collective.
  std::size_t cases_that_fit(std::size_t wanted, const MemorySources& where = {}) const;

  // input: this rank's block (B, lx, ly, T, 12) of the encoded tensor. `whole_cases`: the whole
  // case of each of the B cases, for the field-stage heads that read them (runtime/DpPeakMatch:
  // without, the dP field's peak is the network's).
  Prediction run(const HostArray& input, const std::vector<double>& times_days,
                 const std::vector<const ReservoirCase*>& whole_cases = {});
  Prediction run_case(const ReservoirCase& c);  // c holds this rank's block
  Prediction run_tensor_file(const std::string& path);
  Prediction run_case_file(const std::string& path, std::vector<std::string>* warnings);

  // A case file read, checked and encoded for run(), not yet run: batches stack several into
  // one pass (BatchRun.cpp). Collective; input errors are agreed.
  struct PreparedCase {
    HostArray input;  // this rank's block, (1, lx, ly, T, 12)
    std::vector<double> times_days;
    std::vector<std::string> warnings;
    std::vector<double> dr, dz;  // the case's cell sizes (Prediction's)
    // The whole case, when a field-stage head reads it (Heads::reads_whole_cases).
    std::shared_ptr<const ReservoirCase> whole;
  };
  PreparedCase prepare_case_file(const std::string& path);
  // Prepared cases of the same report times as one pass (their inputs stacked).
  Prediction run_prepared(const std::vector<const PreparedCase*>& cases);

  // What a user is warned about before trusting a prediction of `c`: the statistics that lie
  // beyond or at the edge of a model's training data (runtime/TrainingDistance.hpp; the fixed
  // training ranges for a model file without a profile) and permeabilities beyond the sampler's.
  // `c` is this rank's block summed over `sum_comm` (collective there), or a whole case with
  // MPI_COMM_NULL.
  std::vector<std::string> training_warnings(const ReservoirCase& c, MPI_Comm sum_comm) const;
  // The model files' training profiles (those that carry one).
  const std::vector<TrainingProfile>& training_profiles() const { return profiles_; }

 private:
  MPI_Comm comm_;
  std::vector<std::string> paths_;  // the model files, for messages
  std::unique_ptr<dist::ProcessGrid> grid_;
  std::vector<std::unique_ptr<DistributedNet3d>> models_;
  // The field stage, applied to the dP field (runtime/Heads.hpp).
  Heads field_heads_;
  std::vector<std::string> notes_;
  std::string fingerprint_;
  std::vector<TrainingProfile> profiles_;
};

// Case b of a prediction of several cases, as a prediction of one.
Prediction case_of(const Prediction& p, std::size_t b);

// The inputs of several prepared cases stacked along the case axis, (B, lx, ly, T, 12).
HostArray stack_inputs(const std::vector<const HostArray*>& inputs);

// One output value made physical from the raw network output and the cell's encoded input
// channels: 0 outside the formation; SG (saturation) clamped to [0, 1 - SWI].
float physical_value(bool saturation, float raw, const float* channels);

}  // namespace ufno
