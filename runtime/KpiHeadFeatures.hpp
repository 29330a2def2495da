#pragma once
// The 32 features every KPI head reads (python/ufno/heads/common.py FEATURES): the five scalars,
// log kh of the perforated and of all layers and log kv h at five radial columns, counts and mean
// depths of perforated and active layers, mean porosity, pore volume in four radial bands, the
// largest and smallest perforated kh and the perforated kv h. Computed from the encoded input at
// the first report time, in the same order and precision as the Python.
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

const std::vector<std::string>& kpi_head_feature_names();

// The features of a whole-grid case (at least 13 radial cells, a multiple of 4).
std::vector<double> kpi_head_features(const ReservoirCase& c);
// The same from a whole grid's encoded input at the first report time: channel k of cell (x, y)
// is encoded[(x * Y + y) * cell_stride + k] (io/CaseEncoding.hpp); `path` names the case in
// errors.
std::vector<double> kpi_head_features(const float* encoded, int X, int Y, std::size_t cell_stride,
                                      const std::string& path);

// Names of the network-envelope inputs of a head that reads the dP network's own field
// ("log_field_envelope_r<column>", python/ufno/heads/common.py envelope_feature_names).
std::vector<std::string> envelope_feature_names(const std::vector<int>& columns);

// Per radial column, the largest dP over report times and formation layers of dp (T, X, Y of the
// case's grid), as log(max(envelope, floor)) at `columns` (python/ufno/heads/common.py
// envelope_features).
std::vector<double> field_envelope_features(const ReservoirCase& c, const std::vector<float>& dp,
                                            const std::vector<int>& columns, double floor);

// Names of the inputs of a plume head that also reads the SG network's own plume radius at each of
// `report_times` report times ("log_field_plume_radius_t<k>", python/ufno/heads/common.py
// field_radius_feature_names).
std::vector<std::string> field_radius_feature_names(int report_times);
// The same for a plume head that reads the buoyancy-aware solve's plume radius instead
// ("log_rz_gravity_plume_radius_t<k>", python/ufno/heads/plume_radius.py physics_feature_names).
std::vector<std::string> gravity_plume_radius_feature_names(int report_times);

}  // namespace ufno
