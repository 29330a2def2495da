#pragma once
// Geostatistical permeability and porosity fields for scenarios that have no field of their own
// (sweeps, the web front end): ln kr is a stationary Gaussian random field with a Gaussian
// covariance exp(-(h/L)^2) and separate radial and vertical correlation lengths, optionally on top
// of stratigraphic units (layer groups with their own mean); kz = anisotropy x kr; porosity follows
// ln kr, as in the training data sampler (python/ufno/data/cases.py), so generated cases stay
// inside the distribution the models were trained on. Deterministic from a seed.
#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

struct GeostatParams {
  double kgeo_md = 100.0;              // geometric mean of kr [mD]
  double sigma_lnk = 0.8;              // standard deviation of ln kr
  double corr_r_cells = 10.0;          // radial correlation length [radial cells]
  double corr_z_cells = 1.5;           // vertical correlation length [layers]
  double anisotropy = 0.1;             // kz / kr
  double poro_mean = 0.18;             // porosity at kr = kgeo
  std::string structure = "gaussian";  // or "layered" (units of 1-6 layers plus lateral noise)
  unsigned long seed = 1;
};

// The one table of the generator's numeric limits; validate_geostat_params (sweeps) and
// parse_case_request (apps/WebCase.cpp, the web front end) check against it, and
// apply_geostat_field clips with it. docs/sweeps.md quotes it.
struct GeostatLimits {
  double lo, hi;
};
struct GeostatRange {
  const char* name;  // the key in a sweep's "field" and a web request's "geostat"
  double GeostatParams::*value;
  GeostatLimits valid;
};
// Valid parameter ranges: the training sampler's (python/ufno/data/cases.py RANGES), widened;
// outside the sampler's ranges the models extrapolate.
inline constexpr GeostatRange kGeostatRanges[] = {
    {"kgeo_md", &GeostatParams::kgeo_md, {2.0, 10000.0}},
    {"sigma_lnk", &GeostatParams::sigma_lnk, {0.0, 3.0}},
    {"corr_r_cells", &GeostatParams::corr_r_cells, {0.5, 200.0}},
    {"corr_z_cells", &GeostatParams::corr_z_cells, {0.1, 50.0}},
    {"anisotropy", &GeostatParams::anisotropy, {1e-3, 1.0}},
    {"poro_mean", &GeostatParams::poro_mean, {0.05, 0.35}},
};
// Generated kr [mD] and porosity are clipped to these.
inline constexpr GeostatLimits kGeostatKrClipMd{2.0, 10000.0};
inline constexpr GeostatLimits kGeostatPoroClip{0.05, 0.35};

// A standard normal field (nx, ny) row-major with covariance exp(-(dz/lz)^2 - (dr/lr)^2)
// (lengths in cells), made by separable convolution of white noise with a normalised Gaussian
// kernel on a grid padded by the kernel half-width, so the edges are not wrapped.
std::vector<double> gaussian_random_field(int nx, int ny, double lz, double lr, unsigned long seed);

// Throws InputError (field "geostat", naming the parameter) for parameters outside their ranges.
void validate_geostat_params(const GeostatParams& p);

// Replaces PERMX, PERMZ and PORO of the active cells of `rc` (a whole-grid case) with a field
// drawn from `p`; inactive cells (PERMX = 0) stay inactive. Throws InputError on parameters
// outside their valid ranges (field named "geostat.<name>").
void apply_geostat_field(ReservoirCase& rc, const GeostatParams& p);

}  // namespace ufno
