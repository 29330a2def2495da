#include "runtime/PredictionWriter.hpp"

#include <memory>
#include <optional>

#include "core/LayerTimer.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "io/EclipseDeckWriter.hpp"
#include "io/OutputFile.hpp"
#include "io/RadialWedge.hpp"
#include "io/XdmfDescription.hpp"
#include "runtime/FieldNames.hpp"

namespace ufno {

namespace {

const char* const kMeshNames[3] = {"mesh/x", "mesh/y", "mesh/z"};

// The wedge's node coordinates as datasets of the prediction file (every rank the same values).
void write_wedge(OutputFile& out, const RadialWedge& w) {
  const std::vector<double>* xyz[3] = {&w.x, &w.y, &w.z};
  for (int a = 0; a < 3; ++a) {
    out.h5().write_doubles(kMeshNames[a], {w.nodes[0], w.nodes[1], w.nodes[2]}, xyz[a]->data());
    out.h5().write_string_attribute(kMeshNames[a], "units", "m");
  }
  out.h5().write_string_attribute("mesh", "description",
                                  "node coordinates of the (layer, radial cell) grid revolved "
                                  "over one sector; z is the elevation above the formation top");
}

// One grid per case and report time: the case's cells of the wedge, its fields' (case, time)
// slices on them.
std::vector<XdmfStep> radial_steps(const RadialWedge& w, const std::vector<std::size_t>& global,
                                   const Prediction& p) {
  std::vector<XdmfStep> steps;
  for (std::size_t t = 0; t < p.times_days.size(); ++t) {
    XdmfStep s{p.times_days[t], {}};
    for (std::size_t b = 0; b < global[0]; ++b) {
      XdmfGrid g;
      g.name = global[0] == 1 ? "radial" : "case " + std::to_string(b);
      g.nodes = w.nodes;
      const std::vector<std::size_t> n{w.nodes[0], w.nodes[1], w.nodes[2]};
      for (int a = 0; a < 3; ++a) g.xyz[a] = XdmfSlice{kMeshNames[a], n, {0, 0, 0}, n, 8};
      for (const auto& f : p.fields)
        g.fields.push_back(
            {f.name, XdmfSlice{f.name, global, {b, t, 0, 0}, {1, 1, global[2], global[3]}, 4}});
      s.grids.push_back(std::move(g));
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

}  // namespace

void write_prediction(const std::string& path, const Predictor& predictor, const Prediction& p,
                      const std::string& source) {
  LayerTimer::Scope scope("prediction: write (KPIs and their heads included)");
  const MPI_Comm comm = predictor.grid().comm();
  std::unique_ptr<OutputFile> out;
  dist::collectively(comm, [&] { out = std::make_unique<OutputFile>(path, comm); });
  const CaseBlock b = predictor.block();
  const std::vector<std::size_t> global = predictor.global_shape(p.cases);
  for (const auto& f : p.fields) {
    const std::string what = field_description(field_kind(f.name));
    out->write_field(f.name, global, b.x0, b.y0, f.shape, f.values, f.units,
                     what + ", (case, time, layer, radial cell)");
  }
  out->write_times(p.times_days);
  out->set_attribute("source", source);
  out->set_attribute("producer", "ufno_predict");
  out->set_attribute("variables", predictor.variables());
  out->set_attribute("models_fingerprint", predictor.models_fingerprint());
  // The geometry is known when the case came from a case file (not from an encoded tensor).
  const bool geometry = p.dz.size() == global[2] && p.dr.size() == global[3];
  std::optional<RadialWedge> wedge;
  if (geometry) {
    wedge = radial_wedge(p.dr, p.dz, kDeckWellRadiusM, kDeckThetaDeg);  // as the decks
    write_wedge(*out, *wedge);
  }
  dist::collectively(comm, [&] { out->commit(); });
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (geometry && rank == 0) write_xdmf(path, radial_steps(*wedge, global, p));
}

}  // namespace ufno
