#pragma once
// The architecture of a U-FNO / FNO as the model file's attributes state it. One code path serves
// the paper model and the small test models: nothing here is a compiled-in constant.
#include <array>
#include <string>

namespace ufno {

// Weight names are the reference's state_dict keys: its Net3d wraps the network (SimpleBlock3d)
// as `conv1`, so every key starts with this.
inline const std::string kWeightPrefix = "conv1.";

struct ModelSpec {
  std::string architecture = "UFNO";  // "UFNO" or "FNO"
  std::string variable = "SG";        // "SG" or "dP"
  int width = 36;
  std::array<int, 3> modes{10, 10, 10};  // X, Y, T
  int n_fourier = 3;                     // plain Fourier layers, first
  int n_ufourier = 3;                    // U-Fourier layers (with a U-Net branch), after them
  int in_channels = 12;
  int hidden = 128;                                // fc1 width
  std::array<int, 3> padding{8, 8, 8};             // X zero, Y replicate, T replicate (at the end)
  std::array<int, 3> grid{96, 200, 24};            // unpadded X, Y, T the model was trained on
  double output_scale = 1.0, output_offset = 0.0;  // physical = raw * scale + offset
  std::string output_units = "1";
  double leaky_slope = 0.1;
  double bn_eps = 1e-5;

  int layers() const { return n_fourier + n_ufourier; }
  // The state_dict key of a layer: key("fc0") = "conv1.fc0", key("unet", 3) = "conv1.unet3".
  static std::string key(const std::string& layer, int k = -1) {
    return kWeightPrefix + layer + (k < 0 ? "" : std::to_string(k));
  }
  std::array<int, 3> padded_grid() const {
    return {grid[0] + padding[0], grid[1] + padding[1], grid[2] + padding[2]};
  }
};

}  // namespace ufno
