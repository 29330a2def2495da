// The per-launch cost model (benchmarks/LaunchCost.hpp) and its roofline (GpuRoofline.hpp),
// checked against FLOPs and bytes worked out by hand, without running a model.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "benchmarks/GpuRoofline.hpp"
#include "benchmarks/LaunchCost.hpp"
#include "benchmarks/ModelFlops.hpp"

using namespace ufno::bench;

namespace {

const LaunchCost& find(const std::vector<LaunchCost>& costs, const std::string& layer,
                       const std::string& launch) {
  for (const LaunchCost& c : costs)
    if (c.layer == layer && c.launch == launch) return c;
  FAIL("no launch " << layer << " / " << launch);
  return costs.front();
}

}  // namespace

TEST_CASE("cost model: a 1x1 linear layer, truncated DFTs and a 3x3x3 convolution by hand",
          "[cost]") {
  // 10 points, 3 -> 2 channels: 2 x 10 x 3 x 2 FLOPs; 10 x (3 + 2) values, 6 weights, 2 biases.
  const LaunchCost lin = linear_cost("l", "fc", 10, 3, 2);
  CHECK(lin.flops == 120);
  CHECK(lin.bytes == 4 * (50 + 6 + 2));
  CHECK(lin.intensity() == Approx(120.0 / 232));

  // 4 real lines of 8 keeping 3 modes: 2 x 4 x 8 x 6 FLOPs; 32 floats in, 12 complex out, a
  // complex 8 x 3 matrix.
  const LaunchCost rdft = real_dft_cost("l", "t", 4, 8, 3);
  CHECK(rdft.flops == 384);
  CHECK(rdft.bytes == 4 * 32 + 8 * (12 + 24));

  // 2 complex lines of 8 keeping 4: 8 x 2 x 8 x 4 FLOPs; 16 complex in, 8 out, 32 in the matrix.
  const LaunchCost cdft = complex_dft_cost("l", "y", 2, 8, 4);
  CHECK(cdft.flops == 512);
  CHECK(cdft.bytes == 8 * (16 + 8 + 32));

  // One case, 2 -> 2 channels, 27 taps on a 4 x 4 x 4 grid (stride 1): 2 x 2 x 2 x 27 x 64
  // FLOPs; 2 x 64 values in and out, 2 x 2 x 27 weights, 2 biases.
  const LaunchCost conv = conv_cost("l", "c", 1, 2, 2, 27, 27, 64, 64);
  CHECK(conv.flops == 13824);
  CHECK(conv.bytes == 4 * (128 + 128 + 108 + 2));

  // The mode mix of 2 cases, 3 -> 3 channels, 5 modes: the weights read once for both cases.
  const LaunchCost mix = mode_mix_cost("l", 2, 3, 3, 5);
  CHECK(mix.flops == 8 * 2 * 9 * 5);
  CHECK(mix.bytes == 8 * (30 + 45 + 30));
}

TEST_CASE("cost model: the paper U-FNO's launches and the FLOPs of ModelFlops", "[cost]") {
  const ufno::ModelSpec paper;  // the defaults are the paper U-FNO: 96 x 200 x 24 padded by 8
  const auto costs = net3d_costs(paper, 1);
  // pad, fc0; per layer 6 transforms, the mode mix, w, update; 9 U-Net convolutions per U-Fourier
  // layer; the fused head.
  CHECK(costs.size() == 2 + 6 * 9 + 3 * 9 + 1);

  const double V = 104.0 * 208 * 32;
  const LaunchCost& fc0 = find(costs, "lift", "fc0 1x1");
  CHECK(fc0.flops == 2 * V * 12 * 36);
  CHECK(fc0.bytes == 4 * (V * 48 + 12 * 36 + 36));
  // T forward: 36 x 104 x 208 lines of 32, 10 kept modes.
  const LaunchCost& t = find(costs, "fourier 1", "T forward (real DFT)");
  CHECK(t.flops == 2 * 36 * 104 * 208 * 32.0 * 20);
  // The head on the 96 x 200 x 24 kept cells: 36 -> 128 -> 1 per cell, the input's 36 channels
  // read and one channel written there, its weights once.
  const double U = 96.0 * 200 * 24;
  const LaunchCost& head = find(costs, "head", "fc1 + ReLU + fc2, kept cells");
  CHECK(head.flops == 2 * U * (36 * 128 + 128));
  CHECK(head.bytes == 4 * (U * 37 + 36 * 128 + 128 + 128 + 1));
  // The output convolution: 72 -> 36 channels, 27 taps at every padded voxel.
  const LaunchCost& out = find(costs, "u-fourier 6", "U-Net output 3x3x3");
  CHECK(out.flops == 2 * 72 * 36 * 27 * V);
  CHECK(out.bytes == 4 * (V * (72 + 36) + 72 * 36 * 27 + 36));

  // The GEMMs, transforms and convolutions are the FLOPs the roofline line of bench_model counts.
  double counted = 0;
  for (const LaunchCost& c : costs)
    if (c.launch.find("update") == std::string::npos) counted += c.flops;
  CHECK(counted == Approx(model_flops(paper).total()).epsilon(1e-12));
}

TEST_CASE("cost model: batches share the weights' traffic", "[cost]") {
  ufno::ModelSpec fno;
  fno.n_fourier = 6, fno.n_ufourier = 0;
  const auto one = totals(net3d_costs(fno, 1)), eight = totals(net3d_costs(fno, 8));
  CHECK(eight.flops == Approx(8 * one.flops));
  CHECK(eight.bytes < 8 * one.bytes);  // the mode weights (41 MB a layer) are read once
  CHECK(eight.bytes > 7 * one.bytes);

  const ufno::Fno4dSpec lgr1;  // the defaults are the LGR1 size
  const auto f4 = fno4d_costs(lgr1, 1);
  const LaunchCost& mix = find(f4, "fourier 1", "mode mix");
  CHECK(mix.flops == 8 * 28 * 28 * (12 * 20 * 20 * 10.0));
}

TEST_CASE("roofline: the longer of compute and memory time, summed over launches", "[cost]") {
  GpuPeak h100;
  REQUIRE(find_gpu("h100", h100));
  CHECK(h100.flops_per_s == 67e12);
  CHECK(h100.bytes_per_s == 3.35e12);
  GpuPeak h200;
  REQUIRE(find_gpu("h200", h200));
  CHECK(h200.bytes_per_s == 4.8e12);
  GpuPeak none;
  CHECK(!find_gpu("a100", none));

  const LaunchCost compute{"l", "gemm", 67e12, 1e9}, memory{"l", "copy", 1e9, 6.7e12};
  CHECK(roofline_seconds(compute, h100) == Approx(1.0));
  CHECK(!memory_bound(compute, h100));
  CHECK(roofline_seconds(memory, h100) == Approx(2.0));
  CHECK(memory_bound(memory, h100));
  CHECK(roofline_seconds(std::vector<LaunchCost>{compute, memory}, h100) == Approx(3.0));
}

TEST_CASE("cost model: the 4-D FNO's padding costs only what the pass computes there", "[cost]") {
  // LGR1: 40 x 40 x 25 x 24 padded to 56 x 72 x 57 x 40, width 28, four layers.
  const ufno::Fno4dSpec s;
  const auto f4 = fno4d_costs(s, 1);
  const double C = 28, V = 56.0 * 72 * 57 * 40, U = 40.0 * 40 * 25 * 24;
  const double columns = 40.0 * 40 * 25 * 40;  // the interior's columns, padded T
  // The lift writes zeros in the interior columns' T padding alone, not in the padded block.
  CHECK(find(f4, "lift", "zero T padding (interior columns)").bytes == 4 * C * (columns - U));
  // The first layer transforms the interior (its input is zero outside) and runs w on the
  // interior's columns; the last one transforms back, runs w and updates on the interior alone.
  CHECK(find(f4, "fourier 1", "A4 forward (real DFT)").flops == 2 * C * 40 * 40 * 25 * 24 * 2 * 10);
  CHECK(find(f4, "fourier 1", "w 1x1").flops == 2 * columns * C * C);
  CHECK(find(f4, "fourier 2", "w 1x1").flops == 2 * V * C * C);
  CHECK(find(f4, "fourier 4", "w 1x1").flops == 2 * U * C * C);
  CHECK(find(f4, "fourier 4", "A4 inverse (real DFT)").flops == 2 * C * 40 * 40 * 25 * 24 * 2 * 10);
  CHECK(find(f4, "fourier 4", "update + GELU").bytes == 4 * C * 3 * U);
  std::printf(
      "4-D FNO at LGR1, one case: %.2f GB moved, %.1f GFLOP; lift zero fill %.0f MB "
      "(the whole padded block: %.0f MB)\n",
      totals(f4).bytes / 1e9, totals(f4).flops / 1e9,
      find(f4, "lift", "zero T padding (interior columns)").bytes / 1e6, 4 * C * V / 1e6);
}
