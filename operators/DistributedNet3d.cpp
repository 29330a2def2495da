#include "operators/DistributedNet3d.hpp"

#include "operators/FourierLayerUpdate.hpp"
#include "operators/OutputScaling.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/Bf16.hpp"
#include "core/LayerTimer.hpp"
#include "operators/backend/ConvPrimitive.hpp"

namespace ufno {

DistributedNet3d::DistributedNet3d(const ModelSpec& s, const WeightSource& w,
                                   const dist::ProcessGrid& grid, dist::ExchangeAlgorithm alg,
                                   const RunOptions& options)
    : spec_(s) {
  if (options.bf16 &&
      (!backend::ConvPrimitives<backend::Default>::kBf16 || !backend::bf16_supported()))
    throw std::invalid_argument(
        "bf16 convolutions are a CPU option and need AVX512_BF16 or AMX-BF16; this build or CPU "
        "has neither");
  if (grid.axes() != 3 || grid.parts()[2] != 1)
    throw std::invalid_argument("DistributedNet3d: the process grid must not split T");
  const auto np = s.padded_grid();
  padding_.emplace(grid.comm(), s.grid, s.padding, grid.parts_of<3>(), alg);
  const int c = s.width;
  fc0_ = Linear::load(w, ModelSpec::key("fc0"), s.in_channels, c);
  for (int k = 0; k < s.layers(); ++k) {
    const std::string id = std::to_string(k);
    conv_.push_back(DistributedSpectralConv3d::load(w, ModelSpec::key("conv", k), grid, np, c, c,
                                                    s.modes, alg));
    w_.push_back(Linear::load(w, ModelSpec::key("w", k), c, c, /*conv1d=*/true));
    // w_k's bias rides on the spectral layer's constant mode, so that the Fourier layer's sum
    // relu(conv_k(x) + w_k(x)) is one GEMM with accumulation and ReLU fused.
    conv_.back().add_output_bias(w_.back().release_bias());
    if (!conv_.back().fft().pruned_t())  // the fused layer end needs the pruned T transform
      throw std::logic_error("DistributedNet3d: spectral layer " + id + " is not truncated");
    if (k >= s.n_fourier) {
      UNet3d unet = UNet3d::load(w, ModelSpec::key("unet", k), c, s.bn_eps, float(s.leaky_slope),
                                 options.bf16);
      // In its direct form the float32 plane kernel is slower than oneDNN's bf16 one; in
      // Winograd tiles it is faster, and faster again with its products in bf16.
      const bool tiles = options.winograd != WinogradTiles::off;
      const bool plane = options.plane_conv && (tiles || !options.bf16);
      const bool plane_bf16 =
          plane && tiles && options.bf16 && backend::PlaneConv3d::bf16_available();
      if (!plane) unet.set_plane_conv(false);
      unet.set_winograd(options.winograd);
      unet.set_plane_bf16(plane_bf16);
      unet_.emplace_back(std::in_place, unet, grid.comm(), np, grid.parts_of<3>(), alg, plane,
                         options.winograd, plane_bf16);
    } else {
      unet_.emplace_back(std::nullopt);
    }
  }
  head_ = MlpHead(Linear::load(w, ModelSpec::key("fc1"), c, s.hidden), Activation::ReLU,
                  Linear::load(w, ModelSpec::key("fc2"), s.hidden, 1));
}

Tensor DistributedNet3d::forward_raw(const Tensor& input) {
  Tensor y = empty_tensor("net3d.out", input.extent(0), 1, input.extent(1), input.extent(2),
                          input.extent(3));
  forward_raw(input, y);
  return y;
}

void DistributedNet3d::forward_raw(const Tensor& input, const Tensor& output) {
  if (int(input.extent(4)) != spec_.in_channels)
    throw std::invalid_argument("DistributedNet3d: input has " + std::to_string(input.extent(4)) +
                                " channels, the model expects " +
                                std::to_string(spec_.in_channels));
  if (output.extent(0) != input.extent(0) || output.extent(1) != 1 ||
      output.extent(2) != input.extent(1) || output.extent(3) != input.extent(2) ||
      output.extent(4) != input.extent(3))
    throw std::invalid_argument("DistributedNet3d: output " + shape_string(output) +
                                " does not match the input " + shape_string(input));
  Workspace::Pass pass(*workspace_, workspace_key_ + shape_string(input));
  using Scope = LayerTimer::Scope;
  Tensor x;
  {
    Scope t("pad + fc0");
    x = fc0_.forward(padding_->pad(input));
  }
  for (std::size_t k = 0; k < conv_.size(); ++k) {
    if (conv_[k].fft().streams_rows() && (!unet_[k] || unet_[k]->streams_rows()))
      fourier_layer_in_row_groups(k, x);
    else
      fourier_layer(k, x);
  }
  // fc1 and fc2 act per cell, so they run fused on the cells the crop keeps and nowhere else:
  // straight into the output when those are this rank's output block, else into a one-channel
  // tensor that the crop then moves to the ranks that own its cells.
  Scope t("head (fc1 + fc2) on the kept cells");
  if (padding_->kept_in_place()) {
    head_.forward(x, padding_->kept_box(), output);
    return;
  }
  Tensor kept = head_.forward(x, padding_->kept_box());
  x = Tensor();
  padding_->crop_kept(kept, output);
}

void DistributedNet3d::fourier_layer(std::size_t k, const Tensor& x) {
  using Scope = LayerTimer::Scope;
  // The U-Net branch first: its large intermediates then never coexist with the spectral
  // branch's (about 100 MB less peak memory at paper size).
  Tensor u;
  if (unet_[k]) {
    Scope t("u-net");
    u = unet_[k]->forward(x);
  }
  // The spectral branch stops before its last inverse step; that step, w_k, the U-Net term and
  // the ReLU then run fused and in place over x (FourierLayerUpdate.hpp).
  CTensor t_modes;
  {
    Scope t("spectral conv");
    t_modes = conv_[k].forward_t_modes(x);
  }
  Scope t("T inverse + w + residual + relu, fused");
  fourier_layer_update<3>(x, t_modes, *conv_[k].fft().pruned_t(), w_[k], u, Activation::ReLU);
}

void DistributedNet3d::fourier_layer_in_row_groups(std::size_t k, const Tensor& x) {
  using Scope = LayerTimer::Scope;
  // The spectral branch up to its inverse X stage is small (6 MB at paper size); the inverse Y
  // and T stages, w_k, the U-Net term and the ReLU then finish a few X rows at a time, as the
  // U-Net hands out its output rows. Neither the U-Net output nor the T modes of the whole grid
  // is ever allocated (100 + 62 MB at paper size).
  CTensor y_modes;
  {
    Scope t("spectral conv");
    y_modes = conv_[k].forward_first_axis_modes(x);
  }
  const auto& fft = conv_[k].fft();
  auto finish_rows = [&](int b, int r0, const Tensor& u_rows, int rows) {
    Scope t("  T inverse + w + residual + relu, fused, in row groups");
    fourier_layer_update_rows<3>(x, b, r0, fft.t_modes_of_rows(y_modes, b, r0, rows),
                                 *fft.pruned_t(), w_[k], u_rows, Activation::ReLU);
  };
  if (unet_[k]) {
    Scope t("u-net, streamed into the layer's end");
    unet_[k]->forward_streamed(x, [&](int b, int r0, const Tensor& u_rows) {
      finish_rows(b, r0, u_rows, u_rows.extent(2));
    });
    return;
  }
  Scope t("T inverse + w + relu, fused, in row groups");
  constexpr int kRows = 8;
  const int X = x.extent(2);
  for (int b = 0; b < int(x.extent(0)); ++b)
    for (int r0 = 0; r0 < X; r0 += kRows) finish_rows(b, r0, Tensor(), std::min(kRows, X - r0));
}

Tensor DistributedNet3d::forward(const Tensor& input) {
  Tensor y = forward_raw(input);
  descale_output(y, spec_);
  return y;
}

void DistributedNet3d::forward(const Tensor& input, const Tensor& output) {
  forward_raw(input, output);
  Tensor y = output;
  descale_output(y, spec_);
}

}  // namespace ufno
