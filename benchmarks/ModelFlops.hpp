#pragma once
// Floating-point operations of one forward pass of a model, counted as this code executes it
// (multiply and add counted separately; elementwise passes, padding and copies not counted):
// the pointwise GEMMs, the pruned transforms as the GEMMs they are, the mode mix, and the U-Net's
// convolutions with the transposed ones in sub-pixel form (8 taps per output instead of 64).
// The roofline line divides this by the measured time.
#include "core/ModelSpec.hpp"

namespace ufno::bench {

struct Flops {
  double pointwise = 0, spectral = 0, unet = 0;
  double total() const { return pointwise + spectral + unet; }
};

inline Flops model_flops(const ModelSpec& s) {
  const auto n = s.padded_grid();
  const double C = s.width, X = n[0], Y = n[1], T = n[2];
  const double V = X * Y * T;                                                  // padded voxels
  const double U = double(s.grid[0]) * s.grid[1] * s.grid[2];                  // kept voxels
  const double kx = 2.0 * s.modes[0], ky = 2.0 * s.modes[1], kt = s.modes[2];  // kept modes
  Flops f;
  // fc0 and w_k per layer on the padded grid, the head fc1 -> fc2 on the cells the crop keeps.
  f.pointwise = 2 * s.in_channels * C * V + s.layers() * 2 * C * C * V + 2 * C * s.hidden * U +
                2 * s.hidden * U;
  // Per Fourier layer, forward and inverse: T (real, 2kt real columns), Y and X (complex as
  // stacked real and imaginary DFT rows), and the complex mode mix (8 flops per multiply-add).
  const double t_pair = 2 * (2 * C * X * Y * T * 2 * kt);
  const double y_pair = 2 * (2 * C * X * (2 * ky) * Y * (2 * kt));
  const double x_pair = 2 * (2 * C * (2 * kx) * X * (ky * 2 * kt));
  const double mix = 8 * C * C * kx * ky * kt;
  f.spectral = s.layers() * (t_pair + y_pair + x_pair + mix);
  // U-Net per U-Fourier layer: extents halve at each stride-2 encoder level.
  const double v1 = V / 8, v2 = V / 64, v3 = V / 512;
  const double conv3 = 2 * C * C * 27;  // flops per output voxel of a 3x3x3 C -> C convolution
  const double enc = conv3 * (v1 + v2 + v2 + v3 + v3);
  // Sub-pixel transposed convolutions: each output voxel takes 8 taps of its input channels.
  const double dec = 2 * 8 * (C * C * v2 + 2 * C * C * v1 + 2 * C * C * V);
  const double out = 2 * (2 * C) * C * 27 * V;
  f.unet = s.n_ufourier * (enc + dec + out);
  return f;
}

}  // namespace ufno::bench
