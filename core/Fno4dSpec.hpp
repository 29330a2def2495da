#pragma once
// The architecture of a 4-D FNO (nested FNO's FNO4d) as its model file's attributes state it
// (docs/model-format.md, section FNO4D): a lift fc0, zero padding on both sides of every axis,
// `layers` Fourier layers with exact GELU between them, the crop and an fc1/GELU/fc2 head, over
// the grid axes (A1, A2, A3, A4), which are (x, y, z, t) or, in the published models, (t, x, y,
// z) (`axis_order`), with optional Gaussian normalisers of the last input channel and of the
// output, pointwise (with eps) or one per report time (no eps).
#include <array>
#include <string>

namespace ufno {

struct Fno4dSpec {
  std::string variable = "SG";  // "SG" or "dP"
  std::string output_units = "1";
  std::string level;  // GLOBAL or LGR1..LGR4 in a nested chain (docs/nested-sites.md), else empty
  int width = 28;
  int in_channels = 9;
  int hidden = 112;  // fc1 outputs
  int layers = 4;
  std::array<int, 4> modes{6, 10, 10, 10};   // A1, A2, A3, A4
  std::array<int, 4> padding{8, 16, 16, 8};  // zeros before and after each axis
  std::array<int, 4> grid{40, 40, 25, 24};   // unpadded A1, A2, A3, A4
  // What (A1, A2, A3, A4) are: "XYZT" (the project's order; a file without the attribute) or
  // "TXYZ" (the published nested-FNO models). The half-spectrum axis is always A4.
  std::string axis_order = "XYZT";
  double normalizer_eps = 1e-5;
  bool input_normalizer = false, output_normalizer = false;
  // A normaliser per report time (TimeGaussianNormalizer: mean and std of shape (T), no eps)
  // rather than pointwise (UnitGaussianNormalizer: of the grid's shape, std + eps).
  bool input_per_time = false, output_per_time = false;

  bool time_first() const { return axis_order == "TXYZ"; }
  int time_axis() const { return time_first() ? 0 : 3; }

  std::array<int, 4> padded_grid() const {
    std::array<int, 4> p{};
    for (int a = 0; a < 4; ++a) p[a] = grid[a] + 2 * padding[a];
    return p;
  }
  // State_dict keys: the Fourier layers and the head live in the submodule `conv`.
  static std::string key(const std::string& layer, int k = -1) {
    return (layer == "fc0" ? "" : "conv.") + layer + (k < 0 ? "" : std::to_string(k));
  }
};

}  // namespace ufno
