#pragma once
// The 4-D FNO of nested FNO (FNO4d) on a distributed tensor: every rank holds one block of the
// (A1, A2, A3) grid, all of T. The forward pass (docs/model-format.md, "The FNO4D forward pass"):
// the input normaliser on the last channel, the fc0 lift, zero padding on both sides of every axis
// (a repartition into boxes that reach outside the domain), `layers` Fourier layers
// x <- act(S_k(x) + w_k(x)) with exact GELU after all but the last, each ending fused and in place
// (FourierLayerUpdate), the crop (a repartition back to the unpadded blocks), the fc1/GELU/fc2
// head on the cropped grid and the output normaliser. S_k is DistributedSpectralConv<4>, its
// weights sharded by mode ownership. On one rank the Fourier layers stream first-axis rows, so no
// T-mode tensor of the whole padded grid exists. The first layer's spectral branch transforms the
// lift's unpadded result (a windowed plan, DistributedSpectralConv::add_box_plan), not
// the zero-padded block, which its update then writes without its ever being zeroed (w_k on the
// interior's columns alone); the last layer computes only the interior that the crop keeps (a
// second box plan, where the interiors are the unpadded blocks, as on one rank). Both execution
// plans do both: the streaming one a few rows at a time, the whole-tensor one on whole blocks.
#include <memory>
#include <string>
#include <vector>

#include "core/Fno4dSpec.hpp"
#include "core/WeightSource.hpp"
#include "core/Workspace.hpp"
#include "decomposition/ColumnRunCopy.hpp"
#include "decomposition/Repartition.hpp"
#include "operators/DistributedSpectralConv.hpp"
#include "operators/Linear.hpp"
#include "operators/WeightResidency.hpp"

namespace ufno {

class DistributedFno4d {
 public:
  using Real = GridView<4>;
  // residency: operators/WeightResidency.hpp; with PerLayer the weight source must outlive the
  // model.
  DistributedFno4d(const Fno4dSpec& spec, const WeightSource& w, const dist::ProcessGrid& grid,
                   dist::ExchangeAlgorithm alg = dist::ExchangeAlgorithm::Alltoallv,
                   WeightResidency residency = WeightResidency::All);

  // The block of the unpadded (A1, A2, A3, T) grid each rank reads and writes.
  const dist::PencilLayout<4>& layout() const { return unpadded_; }
  const Fno4dSpec& spec() const { return spec_; }

  // x: this rank's block of the channels-last input, (B, a1, a2, a3, t, C) in a rank-6 view;
  // returns the prediction on the same block, (B, 1, a1, a2, a3, t), normalisers applied.
  Real forward(const Real& channels_last);
  // The network alone (no normalisers), for the parity tests.
  Real forward_raw(const Real& channels_last);
  // The same into `output`, (B, 1, a1, a2, a3, t), which the caller owns and keeps: with it, a
  // pass after the first over inputs of one shape makes no device allocation (core/Workspace.hpp).
  void forward(const Real& channels_last, const Real& output);
  void forward_raw(const Real& channels_last, const Real& output);

  // Public only for nvcc: an extended __host__ __device__ lambda (KOKKOS_LAMBDA) needs a public
  // enclosing function in a GPU build.
  // fc0 into the interior of the padded block, zero in the T padding of the interior's
  // columns, the rest of the block left for the first layer to write (its update reads only the
  // interior's columns: no zero fill of the block); *box_out, when given, receives the interior
  // alone, (B, W, interior extents) on the interiors' layout.
  Real lift(const Real& channels_last, Real* box_out = nullptr) const;
  // This rank's interior of the channels-last input (its block checked against the layout),
  // (B, 1, i0, i1, i2, T C): the input itself when the interior is the rank's own block.
  Real gather_interior(const Real& channels_last) const;
  Real head(const Real& padded) const;  // fc1, GELU, fc2 on the interior
  // Copies interior rows [r, r + R) of case b between a compact (channels, R, i1, i2, T) buffer
  // and the padded block h; `runs` are the interior's column runs in a row of h's block.
  void copy_interior_rows(float* compact, const Real& h, int b, const dist::Box4& interior,
                          const dist::DeviceColumnRuns& runs, int r, int R, bool into_block) const;
  // Interior A1 rows the lift and the head take at a time: one on the streaming plan (a row's
  // intermediates stay in cache), all of them on the whole-tensor plan (few, wide launches).
  int rows_per_step(int rows) const;
  void normalise(const Real& y, const Kokkos::View<float*, DeviceSpace>& mean,
                 const Kokkos::View<float*, DeviceSpace>& stdev, bool encode, int channel) const;

 private:
  // `box`: the lift's interior of x (first layer only), on the first layer's box plan's layout.
  void fourier_layer(std::size_t k, const Real& x, Real box);
  dist::Box4 interior_in_block() const;
  void fourier_layer_in_row_groups(std::size_t k, const Real& x, Real box);

  Fno4dSpec spec_;
  int rank_;
  const WeightSource* per_layer_source_ = nullptr;  // WeightResidency::PerLayer
  dist::PencilLayout<4> unpadded_, padded_, interiors_;
  std::unique_ptr<dist::Repartition<float, 4>> gather_input_, crop_;
  // Interiors -> the first layer's box plan's blocks (the unpadded ones); null when the model
  // has no padding, and the first layer transforms the block itself.
  std::unique_ptr<dist::Repartition<float, 4>> to_box_;
  Linear fc0_, fc1_, fc2_;
  std::vector<DistributedSpectralConv<4>> conv_;
  std::vector<Linear> w_;
  // This rank's blocks of the normalisers' mean and std + eps (empty when absent).
  Kokkos::View<float*, DeviceSpace> in_mean_, in_scale_, out_mean_, out_scale_;
  dist::DeviceColumnRuns interior_runs_;  // interior_in_block()'s runs in the padded block
  // Where a pass's temporaries live (shared by the process's models), and this model's plans'
  // key prefix in it.
  std::shared_ptr<Workspace> workspace_ = Workspace::shared();
  std::string workspace_key_ = Workspace::unique_key("fno4d");
};

}  // namespace ufno
