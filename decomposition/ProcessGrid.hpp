#pragma once
// The Cartesian process grid that splits the spatial axes of the activations: px ranks along X,
// py along Y (T, the short time axis, stays local). `--grid 2x2` sets it; by default P ranks are
// factored so that blocks stay as square as the grid extents allow.
#include <mpi.h>

#include <array>
#include <string>

namespace ufno::dist {

class ProcessGrid {
 public:
  // parts = {px, py, pt}; its product must equal the size of comm.
  ProcessGrid(MPI_Comm comm, std::array<int, 3> parts);

  // "2x2", "4x1", "2x1x1"; "auto" or "" -> automatic for `extents`. Throws InputError
  // (field --grid) for a malformed grid, one that does not match the rank count, or one that
  // splits an axis into more blocks than it has cells.
  static ProcessGrid from_string(MPI_Comm comm, const std::string& spec,
                                 const std::array<int, 3>& extents);
  static std::array<int, 3> automatic(int ranks, const std::array<int, 3>& extents);

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::array<int, 3>& parts() const { return parts_; }
  std::string str() const;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::array<int, 3> parts_{1, 1, 1};
};

}  // namespace ufno::dist
