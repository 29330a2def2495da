#pragma once
// SpectralConv3d on a distributed tensor: the truncating distributed FFT (only kept modes travel
// between ranks), the mode multiply with the weights of the modes this rank owns in the X-pencil
// spectral layout (no rank stores the others'), and the inverse transform.
#include <array>
#include <string>
#include <vector>

#include "decomposition/DistributedFft3d.hpp"
#include "operators/SpectralWeights.hpp"

namespace ufno {

class DistributedSpectralConv3d {
 public:
  // n: global extents of the (padded) grid the layer acts on.
  DistributedSpectralConv3d(const dist::ProcessGrid& grid, std::array<int, 3> n, int in, int out,
                            std::array<int, 3> modes, const std::array<HostArray, 4>& corners,
                            dist::ExchangeAlgorithm alg);
  static DistributedSpectralConv3d load(const WeightSource& w, const std::string& prefix,
                                        const dist::ProcessGrid& grid, std::array<int, 3> n, int in,
                                        int out, std::array<int, 3> modes,
                                        dist::ExchangeAlgorithm alg);

  Tensor forward(const Tensor& x);  // local real block -> local real block (same layout)
  // All of forward() but its last step: the kept T bins of the output on x's block,
  // (B, out, lx, ly, mt), that fft().pruned_t()->backward turns into forward()'s result. Only
  // for truncated layers (fft().pruned_t() != nullptr).
  CTensor forward_t_modes(const Tensor& x);
  // One rank holding the whole domain (fft().streams_rows()): forward() up to the inverse X
  // stage, (B, out, X, KY, mt); fft().t_modes_of_rows() gives forward_t_modes()'s rows from it.
  CTensor forward_y_modes(const Tensor& x);
  // Adds a constant per output channel to the layer's output at no cost: a constant field is
  // exactly the (0, 0, 0) mode of the unnormalised inverse transform, so it goes into that bin
  // of the mixed spectrum (on the rank that owns it).
  void add_output_bias(const std::vector<float>& bias);
  const dist::DistributedFft3d& fft() const { return *fft_; }

  // Public only for nvcc: an extended __host__ __device__ lambda (KOKKOS_LAMBDA) needs a public
  // enclosing function in a GPU build.
  CTensor mixed_modes(const Tensor& x);  // forward transform, mode mix, DC bias

 private:
  int out_;
  int rank_;
  float scale_;
  std::shared_ptr<dist::DistributedFft3d> fft_;
  SpectralWeightView w_;                       // owned modes only
  Kokkos::View<float*, DeviceSpace> dc_bias_;  // empty unless this rank owns mode (0, 0, 0)
};

}  // namespace ufno
