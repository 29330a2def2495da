#pragma once
// The spectral convolution of a Fourier layer on a distributed tensor of D grid axes (the U-FNO's
// SpectralConv3d, the 4-D FNO's SpectralConv4d): the truncating distributed FFT (only kept modes
// travel between ranks), the mode multiply with the weights of the modes this rank owns in the
// A1-pencil spectral layout (no rank stores the others'), and the inverse transform, scaled by
// 1/N as PyTorch's irfftn.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "decomposition/DistributedFft.hpp"
#include "operators/SpectralWeights.hpp"

namespace ufno {

template <std::size_t D>
class DistributedSpectralConv {
 public:
  using Extents = std::array<int, D>;
  using Real = GridView<D, float>;
  using Complex = GridView<D, complexf>;
  using Fft = dist::DistributedFft<D>;

  // n: global extents of the (padded) grid the layer acts on; corners as SpectralWeights.hpp.
  DistributedSpectralConv(const dist::ProcessGrid& grid, Extents n, int in, int out, Extents modes,
                          const std::vector<HostArray>& corners, dist::ExchangeAlgorithm alg);
  static DistributedSpectralConv load(const WeightSource& w, const std::string& prefix,
                                      const dist::ProcessGrid& grid, Extents n, int in, int out,
                                      Extents modes, dist::ExchangeAlgorithm alg);
  // The layer without its mode weights, for a model that holds one layer's weights at a time:
  // load_weights() before forward, release_weights() after (the spectral weights of a 4-D FNO
  // at LGR size are 300 MB per layer, more than a third of its activation).
  static DistributedSpectralConv without_weights(const dist::ProcessGrid& grid, Extents n, int in,
                                                 int out, Extents modes,
                                                 dist::ExchangeAlgorithm alg);
  void load_weights(const WeightSource& w, const std::string& prefix);
  void release_weights() { w_ = SpectralWeightView(); }
  // Or, instead of holding them, read the weights from `w` (which must outlive the layer) at
  // every forward call, one corner's owned part at a time, and multiply the modes of each part
  // as it arrives: the layer's memory then holds one corner's part of one layer's weights, not
  // the whole layer's (a 4-D FNO reads each layer once per pass either way). Checks the corner
  // shapes now; values are checked as they are read.
  void stream_weights_from(const WeightSource& w, const std::string& prefix);

  Real forward(const Real& x);  // local real block -> local real block (same layout)
  // All of forward() but its last step: the kept T bins of the output on x's block,
  // (B, out, local extents with T -> m_T), that fft().pruned_t()->backward turns into forward()'s
  // result.
  Complex forward_t_modes(const Real& x);
  // One rank holding the whole domain (fft().streams_rows()): forward() up to the inverse A1
  // stage; fft().t_modes_of_rows() gives forward_t_modes()'s rows from it.
  Complex forward_first_axis_modes(const Real& x);
  // A zero-padded grid's interior, the box [offset, offset + n) of the layer's grid: a second
  // plan over the box (DistributedFft::Window), with the same kept modes and spectral layout.
  // - Input zero outside the box (a first layer): forward_*_of_box take the box's tensor, on that
  //   plan's real layout, and give what the calls above give for it padded with zeros.
  // - Output needed only inside the box (a last layer, then cropped):
  //   forward_first_axis_modes_to_box(x) gives the box plan's first-axis stage, from which
  //   box_fft()->t_modes_of_rows() gives the T modes of the box's rows and columns only;
  //   forward_t_modes_to_box(x) gives them all at once (the whole-tensor plan), (B, out, the
  //   box plan's block with T -> m_T), for box_fft()->pruned_t().
  void add_box_plan(const dist::ProcessGrid& grid, Extents offset, Extents n,
                    dist::ExchangeAlgorithm alg);
  const Fft* box_fft() const { return box_fft_.get(); }
  Complex forward_t_modes_of_box(const Real& box);
  Complex forward_first_axis_modes_of_box(const Real& box);
  Complex forward_first_axis_modes_to_box(const Real& x);
  Complex forward_t_modes_to_box(const Real& x);
  // Adds a constant per output channel to the layer's output at no cost: a constant field is
  // exactly the zero mode of the unnormalised inverse transform, so it goes into that bin of the
  // mixed spectrum (on the rank that owns it).
  void add_output_bias(const std::vector<float>& bias);
  const Fft& fft() const { return *fft_; }

  // Public only for nvcc: an extended __host__ __device__ lambda (KOKKOS_LAMBDA) needs a public
  // enclosing function in a GPU build.
  // Forward transform (of the box's tensor on box_fft(), when of_box), mode mix, DC bias.
  Complex mixed_modes(const Real& x, bool of_box = false);

 private:
  DistributedSpectralConv(const dist::ProcessGrid& grid, Extents n, int in, int out, Extents modes,
                          std::shared_ptr<Fft> fft);
  int in_, out_;
  Extents modes_;
  int rank_;
  float scale_;
  std::shared_ptr<Fft> fft_;
  std::shared_ptr<Fft> box_fft_;                 // add_box_plan()
  SpectralWeightView w_;                         // owned modes only
  const WeightSource* stream_source_ = nullptr;  // stream_weights_from()
  std::string stream_prefix_;
  Complex mix_streamed(const Complex& a) const;
  Kokkos::View<float*, DeviceSpace> dc_bias_;  // empty unless this rank owns the zero mode
};

using DistributedSpectralConv3d = DistributedSpectralConv<3>;
using DistributedSpectralConv4d = DistributedSpectralConv<4>;

}  // namespace ufno
