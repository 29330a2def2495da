#pragma once
// The reference's domain padding on a distributed tensor: each rank gathers the unpadded cells its
// padded block replicates (T and Y: the last cell; X: zeros beyond the end) and fills its block;
// the crop is a repartition from the padded blocks to the unpadded blocks. Both use the block
// layouts of one process grid over the unpadded and the padded extents.
#include <array>
#include <memory>

#include "decomposition/Repartition.hpp"

namespace ufno {

class DistributedPadding {
 public:
  DistributedPadding(MPI_Comm comm, std::array<int, 3> grid, std::array<int, 3> pad,
                     std::array<int, 3> parts, dist::ExchangeAlgorithm alg);

  // Local block of the channel-last input (B, lx, ly, T, C) -> padded channel-first block.
  Tensor pad(const Tensor& channel_last) const;
  // Padded channel-first block -> this rank's block of the unpadded grid.
  Tensor crop(const Tensor& padded) const { return crop_->apply(padded); }
  void crop(const Tensor& padded, const Tensor& out) const { crop_->apply(padded, out); }

  // The cells of this rank's padded block that the crop keeps (those inside the unpadded grid),
  // in the block's own indices: a per-cell layer whose output is cropped (the head) computes
  // only these, and crop_kept() moves them to the unpadded blocks.
  dist::Box3 kept_box() const { return kept_box_; }
  // True when every rank's kept cells are its own block of the unpadded grid (one rank, or grids
  // whose padding falls on the last blocks alone): the kept cells are then the output itself.
  bool kept_in_place() const { return kept_in_place_; }
  // Every rank's kept cells (B, C, kept_box() extents) -> this rank's unpadded block.
  void crop_kept(const Tensor& kept, const Tensor& out) const { crop_kept_->apply(kept, out); }

  const dist::PencilLayout<3>& unpadded_layout() const { return unpadded_; }
  const dist::PencilLayout<3>& padded_layout() const { return padded_; }

 private:
  int rank_ = 0;
  std::array<int, 3> n_;
  dist::PencilLayout<3> unpadded_, padded_, sources_;
  std::unique_ptr<dist::Repartition<float>> gather_, crop_, crop_kept_;
  dist::Box3 kept_box_;
  bool kept_in_place_ = false;
};

}  // namespace ufno
