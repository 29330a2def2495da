#pragma once
// The U-FNO / FNO on P ranks: the layers of Net3d in the same order, on block layouts of one
// process grid that splits X and Y (T stays local): the padding and crop act on the global domain,
// the Fourier layers use the truncating distributed FFT, the U-Nets halo exchanges, and the
// pointwise layers (fc0, w_k, fc1, fc2) work on the local blocks. Each rank holds only its blocks
// of the activations and only the spectral weights of the modes it owns.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ModelSpec.hpp"
#include "core/RunOptions.hpp"
#include "core/Workspace.hpp"
#include "decomposition/ProcessGrid.hpp"
#include "operators/DistributedPadding.hpp"
#include "operators/DistributedSpectralConv.hpp"
#include "operators/DistributedUNet3d.hpp"
#include "operators/Linear.hpp"
#include "operators/MlpHead.hpp"

namespace ufno {

class DistributedNet3d {
 public:
  // options: the kernel choices (RunOptions::plane_conv); the rest is process-wide.
  DistributedNet3d(const ModelSpec& spec, const WeightSource& weights,
                   const dist::ProcessGrid& grid,
                   dist::ExchangeAlgorithm alg = dist::ExchangeAlgorithm::Alltoallv,
                   const RunOptions& options = {});

  // This rank's block of the channel-last input (B, lx, ly, T, C), in input_layout(), ->
  // its block of the raw output (B, 1, lx, ly, T).
  Tensor forward_raw(const Tensor& input);
  Tensor forward(const Tensor& input);  // de-scaled to physical units
  // The same into `output`, (B, 1, lx, ly, T), which the caller owns and keeps: with it, a pass
  // after the first over inputs of one shape makes no device allocation (core/Workspace.hpp).
  void forward_raw(const Tensor& input, const Tensor& output);
  void forward(const Tensor& input, const Tensor& output);

  const ModelSpec& spec() const { return spec_; }
  // Block layout of the unpadded (X, Y, T) grid: which cells of input and output a rank holds.
  const dist::PencilLayout<3>& input_layout() const { return padding_->unpadded_layout(); }

 private:
  // Fourier layer k, in place on x: the U-Net output and the T modes of x's whole block in
  // memory (any process grid), or finished in groups of X rows (one rank, the whole domain).
  void fourier_layer(std::size_t k, const Tensor& x);
  void fourier_layer_in_row_groups(std::size_t k, const Tensor& x);

  ModelSpec spec_;
  std::optional<DistributedPadding> padding_;
  Linear fc0_;
  MlpHead head_;  // fc1 -> ReLU -> fc2, on the cells the crop keeps
  std::vector<DistributedSpectralConv3d> conv_;
  std::vector<Linear> w_;
  std::vector<std::optional<DistributedUNet3d>> unet_;
  // Where a pass's temporaries live (shared by the process's models), and this model's plans'
  // key prefix in it.
  std::shared_ptr<Workspace> workspace_ = Workspace::shared();
  std::string workspace_key_ = Workspace::unique_key("net3d");
};

}  // namespace ufno
