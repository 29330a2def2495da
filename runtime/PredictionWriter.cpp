#include "runtime/PredictionWriter.hpp"

#include <memory>

#include "decomposition/CollectiveErrors.hpp"
#include "io/OutputFile.hpp"
#include "runtime/FieldNames.hpp"

namespace ufno {

void write_prediction(const std::string& path, const Predictor& predictor, const Prediction& p,
                      const std::string& source) {
  const MPI_Comm comm = predictor.grid().comm();
  std::unique_ptr<OutputFile> out;
  dist::collectively(comm, [&] { out = std::make_unique<OutputFile>(path, comm); });
  const CaseBlock b = predictor.block();
  for (const auto& f : p.fields) {
    const std::string what = field_description(field_kind(f.name));
    out->write_field(f.name, predictor.global_shape(p.cases), b.x0, b.y0, f.shape, f.values,
                     f.units, what + ", (case, time, layer, radial cell)");
  }
  out->write_times(p.times_days);
  out->set_attribute("source", source);
  out->set_attribute("producer", "ufno_predict");
  out->set_attribute("variables", predictor.variables());
  out->set_attribute("models_fingerprint", predictor.models_fingerprint());
  dist::collectively(comm, [&] { out->commit(); });
}

}  // namespace ufno
