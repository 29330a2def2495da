#pragma once
// The per-launch cost model of a forward pass on the whole-tensor plan (core/ExecutionPlan.hpp),
// computed from the model's shapes on the host (no device needed): for each launch group, the
// floating-point operations (multiply and add counted apart, as benchmarks/ModelFlops.hpp) and
// the bytes it moves, each of its tensors (weights and DFT matrices included) read or written
// once. That is the least traffic the operation needs: a launch that reads an operand twice, or
// two launches that hand a temporary through memory where one fused launch would not, move more.
// Bias adds, batch norm and activations folded into a launch count no FLOPs; the elementwise
// launches count one FLOP per added term and per activation.
//
// The launch groups follow the pass in order: padding and the lift, then per Fourier layer the
// truncated transforms (the pruned DFTs as the GEMMs they are: the last axis real, the others
// complex), the mode mix, the inverse transforms, the 1x1 convolution w, the U-Net's convolutions
// (U-Fourier layers; transposed convolutions in sub-pixel form: 8 taps per output, 64 weights),
// the layer's update, then the head (fused, on the kept cells). benchmarks/GpuRoofline.hpp turns a
// table into a predicted time; bench_model --plan whole-tensor prints both.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "core/Fno4dSpec.hpp"
#include "core/ModelSpec.hpp"

namespace ufno::bench {

struct LaunchCost {
  std::string layer;   // "lift", "fourier 1", "head"
  std::string launch;  // what runs: "T forward (real DFT)", "conv1 3x3x3 /2", ...
  double flops = 0;
  double bytes = 0;  // reads + writes
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
};

constexpr double kFloatBytes = 4, kComplexBytes = 8;

// A 1x1 linear layer (one GEMM) over `points` points (cases x voxels): cin -> cout channels,
// its weights and bias read once.
inline LaunchCost linear_cost(std::string layer, std::string launch, double points, double cin,
                              double cout) {
  return {std::move(layer), std::move(launch), 2 * points * cin * cout,
          kFloatBytes * (points * (cin + cout) + cin * cout + cout)};
}

// A fused two-layer head over `points` points: cin -> hidden -> act -> cout per point, the
// hidden channels kept in registers; it reads each point's cin inputs and writes its cout
// outputs once, its weights and biases once.
inline LaunchCost mlp_head_cost(std::string layer, std::string launch, double points, double cin,
                                double hidden, double cout) {
  return {std::move(layer), std::move(launch), 2 * points * (cin * hidden + hidden * cout),
          kFloatBytes * (points * (cin + cout) + cin * hidden + hidden + hidden * cout + cout)};
}

// A truncated DFT of `lines` real lines of length n keeping `kept` complex modes (or its inverse,
// the same cost): a real GEMM of n inputs against 2 * kept outputs per line, its complex DFT
// matrix (n x kept) read once.
inline LaunchCost real_dft_cost(std::string layer, std::string launch, double lines, double n,
                                double kept) {
  return {std::move(layer), std::move(launch), 2 * lines * n * 2 * kept,
          kFloatBytes * lines * n + kComplexBytes * (lines * kept + n * kept)};
}

// A truncated DFT of `lines` complex lines of length n keeping `kept` modes (or its inverse): a
// complex GEMM, 8 FLOPs per complex multiply-add.
inline LaunchCost complex_dft_cost(std::string layer, std::string launch, double lines, double n,
                                   double kept) {
  return {std::move(layer), std::move(launch), 8 * lines * n * kept,
          kComplexBytes * (lines * n + lines * kept + n * kept)};
}

// The mode mix: per kept mode, a complex cin -> cout product of each case's modes with that
// mode's weights (read once for all cases).
inline LaunchCost mode_mix_cost(std::string layer, double cases, double cin, double cout,
                                double modes) {
  return {std::move(layer), "mode mix", 8 * cases * cin * cout * modes,
          kComplexBytes * (cases * cin * modes + cin * cout * modes + cases * cout * modes)};
}

// A convolution: each of the `out_voxels` outputs (per case) takes `taps` taps of its cin input
// channels; it reads in_voxels x cin, writes out_voxels x cout, and its cin x cout x weight_taps
// weights and bias once. A 3x3x3 convolution has 27 taps and weights; a stride-2 one reads 8
// input voxels per output; a sub-pixel transposed 4x4x4 stride-2 convolution has 8 taps, 64
// weights and 8 outputs per input voxel.
inline LaunchCost conv_cost(std::string layer, std::string launch, double cases, double cin,
                            double cout, double taps, double weight_taps, double in_voxels,
                            double out_voxels) {
  return {std::move(layer), std::move(launch), 2 * cases * cin * cout * taps * out_voxels,
          kFloatBytes *
              (cases * (cin * in_voxels + cout * out_voxels) + cin * cout * weight_taps + cout)};
}

// An elementwise launch: reads `read` values, writes `written`, `flops_per_value` per written.
inline LaunchCost elementwise_cost(std::string layer, std::string launch, double read,
                                   double written, double flops_per_value) {
  return {std::move(layer), std::move(launch), written * flops_per_value,
          kFloatBytes * (read + written)};
}

struct CostTotals {
  double flops = 0, bytes = 0;
};
inline CostTotals totals(const std::vector<LaunchCost>& costs) {
  CostTotals t;
  for (const LaunchCost& c : costs) t.flops += c.flops, t.bytes += c.bytes;
  return t;
}

// The U-Net branch of a U-Fourier layer on a padded grid of V voxels, C channels (UNet3d.hpp):
// extents halve at each stride-2 encoder level; the decoder joins by concatenation (2C inputs).
inline void add_unet_costs(std::vector<LaunchCost>& out, const std::string& layer, double B,
                           double C, double V) {
  const double v1 = V / 8, v2 = V / 64, v3 = V / 512;
  struct Conv {
    const char* name;
    double cin, taps, weight_taps, in, out;
  };
  const Conv convs[] = {
      {"U-Net conv1 3x3x3 /2", C, 27, 27, V, v1},
      {"U-Net conv2 3x3x3 /2", C, 27, 27, v1, v2},
      {"U-Net conv2_1 3x3x3", C, 27, 27, v2, v2},
      {"U-Net conv3 3x3x3 /2", C, 27, 27, v2, v3},
      {"U-Net conv3_1 3x3x3", C, 27, 27, v3, v3},
      {"U-Net deconv2 4x4x4 x2", C, 8, 64, v3, v2},
      {"U-Net deconv1 4x4x4 x2", 2 * C, 8, 64, v2, v1},
      {"U-Net deconv0 4x4x4 x2", 2 * C, 8, 64, v1, V},
      {"U-Net output 3x3x3", 2 * C, 27, 27, V, V},
  };
  for (const Conv& c : convs)
    out.push_back(conv_cost(layer, c.name, B, c.cin, C, c.taps, c.weight_taps, c.in, c.out));
}

// One pass of a U-FNO / FNO (DistributedNet3d on one rank) over `cases` cases.
inline std::vector<LaunchCost> net3d_costs(const ModelSpec& s, int cases) {
  const auto n = s.padded_grid();
  const double B = cases, C = s.width, X = n[0], Y = n[1], T = n[2], V = X * Y * T;
  const double U = double(s.grid[0]) * s.grid[1] * s.grid[2];  // unpadded voxels
  const double kx = 2.0 * s.modes[0], ky = 2.0 * s.modes[1], kt = s.modes[2];
  std::vector<LaunchCost> c;
  c.push_back(
      elementwise_cost("lift", "pad input", B * s.in_channels * U, B * s.in_channels * V, 0));
  c.push_back(linear_cost("lift", "fc0 1x1", B * V, s.in_channels, C));
  for (int k = 0; k < s.layers(); ++k) {
    const bool unet = k >= s.n_fourier;
    const std::string l = (unet ? "u-fourier " : "fourier ") + std::to_string(k + 1);
    c.push_back(real_dft_cost(l, "T forward (real DFT)", B * C * X * Y, T, kt));
    c.push_back(complex_dft_cost(l, "Y forward (DFT)", B * C * X * kt, Y, ky));
    c.push_back(complex_dft_cost(l, "X forward (DFT)", B * C * ky * kt, X, kx));
    c.push_back(mode_mix_cost(l, B, C, C, kx * ky * kt));
    c.push_back(complex_dft_cost(l, "X inverse (DFT)", B * C * ky * kt, X, kx));
    c.push_back(complex_dft_cost(l, "Y inverse (DFT)", B * C * X * kt, Y, ky));
    c.push_back(real_dft_cost(l, "T inverse (real DFT)", B * C * X * Y, T, kt));
    c.push_back(linear_cost(l, "w 1x1", B * V, C, C));
    if (unet) add_unet_costs(c, l, B, C, V);
    // spectral + w (+ U-Net), then the activation (none after the last layer)
    const double terms = unet ? 3 : 2, act = k + 1 < s.layers() ? 1 : 0;
    c.push_back(
        elementwise_cost(l, "update + activation", terms * B * C * V, B * C * V, terms - 1 + act));
  }
  // fc1, ReLU and fc2 in one launch on the cells the crop keeps, into the output (one rank).
  c.push_back(mlp_head_cost("head", "fc1 + ReLU + fc2, kept cells", B * U, C, s.hidden, 1));
  return c;
}

// One pass of a 4-D FNO (DistributedFno4d on one rank) over `cases` cases: the lift on the
// unpadded grid into the padded block (zeros only in the T padding of the interior's columns,
// nothing written outside them), the Fourier layers on the padded grid (A4 the real,
// half-spectrum axis), the head on the interior. As the pass runs them: the first layer
// transforms the interior alone (a plan over the box; its input is zero outside) and runs w on the
// interior's columns alone; the last layer's inverse transforms, w and update produce the interior
// alone (the crop keeps nothing else); the layers between work on the whole padded grid.
inline std::vector<LaunchCost> fno4d_costs(const Fno4dSpec& s, int cases) {
  const auto p = s.padded_grid();
  const auto& u = s.grid;
  const double B = cases, C = s.width;
  const double V = double(p[0]) * p[1] * p[2] * p[3];
  const double U = double(u[0]) * u[1] * u[2] * u[3];
  const double columns = double(u[0]) * u[1] * u[2] * p[3];  // the interior's columns, padded T
  const double k1 = 2.0 * s.modes[0], k2 = 2.0 * s.modes[1], k3 = 2.0 * s.modes[2], k4 = s.modes[3];
  std::vector<LaunchCost> c;
  c.push_back(linear_cost("lift", "fc0 1x1", B * U, s.in_channels, C));
  c.push_back(
      elementwise_cost("lift", "zero T padding (interior columns)", 0, B * C * (columns - U), 0));
  // The real-side extents the transforms read (forward) or write (inverse).
  using E = std::array<double, 4>;
  const E padded{double(p[0]), double(p[1]), double(p[2]), double(p[3])};
  const E interior{double(u[0]), double(u[1]), double(u[2]), double(u[3])};
  for (int k = 0; k < s.layers; ++k) {
    const std::string l = "fourier " + std::to_string(k + 1);
    const bool first = k == 0, last = k > 0 && k + 1 == s.layers;
    const E f = first ? interior : padded, i = last ? interior : padded;
    c.push_back(real_dft_cost(l, "A4 forward (real DFT)", B * C * f[0] * f[1] * f[2], f[3], k4));
    c.push_back(complex_dft_cost(l, "A3 forward (DFT)", B * C * f[0] * f[1] * k4, f[2], k3));
    c.push_back(complex_dft_cost(l, "A2 forward (DFT)", B * C * f[0] * k3 * k4, f[1], k2));
    c.push_back(complex_dft_cost(l, "A1 forward (DFT)", B * C * k2 * k3 * k4, f[0], k1));
    c.push_back(mode_mix_cost(l, B, C, C, k1 * k2 * k3 * k4));
    c.push_back(complex_dft_cost(l, "A1 inverse (DFT)", B * C * k2 * k3 * k4, i[0], k1));
    c.push_back(complex_dft_cost(l, "A2 inverse (DFT)", B * C * i[0] * k3 * k4, i[1], k2));
    c.push_back(complex_dft_cost(l, "A3 inverse (DFT)", B * C * i[0] * i[1] * k4, i[2], k3));
    c.push_back(real_dft_cost(l, "A4 inverse (real DFT)", B * C * i[0] * i[1] * i[2], i[3], k4));
    // w where its input is not zero and its output is kept.
    const double w_points = first ? columns : last ? U : V, out = last ? U : V;
    c.push_back(linear_cost(l, "w 1x1", B * w_points, C, C));
    const double act = k + 1 < s.layers ? 1 : 0;  // GELU between layers
    c.push_back(elementwise_cost(l, "update + GELU", B * C * (out + w_points), B * C * out,
                                 (w_points == out ? 1 : w_points / out) + act));
  }
  c.push_back(linear_cost("head", "fc1 1x1 + GELU (interior)", B * U, C, s.hidden));
  c.push_back(linear_cost("head", "fc2 1x1", B * U, s.hidden, 1));
  return c;
}

}  // namespace ufno::bench
