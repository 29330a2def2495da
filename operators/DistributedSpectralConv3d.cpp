#include "operators/DistributedSpectralConv3d.hpp"

namespace ufno {

DistributedSpectralConv3d::DistributedSpectralConv3d(const dist::ProcessGrid& grid,
                                                     std::array<int, 3> n, int in, int out,
                                                     std::array<int, 3> modes,
                                                     const std::array<HostArray, 4>& corners,
                                                     dist::ExchangeAlgorithm alg)
    : out_(out),
      scale_(1.f / (float(n[0]) * float(n[1]) * float(n[2]))),
      fft_(std::make_shared<dist::DistributedFft3d>(grid, n, modes, alg)) {
  w_ = combine_corner_weights(in, out, modes, corners, fft_->spectral_layout().box(grid.rank()));
}

DistributedSpectralConv3d DistributedSpectralConv3d::load(
    const WeightSource& w, const std::string& prefix, const dist::ProcessGrid& grid,
    std::array<int, 3> n, int in, int out, std::array<int, 3> modes, dist::ExchangeAlgorithm alg) {
  // The full corners are read transiently; only the owned modes are kept.
  return DistributedSpectralConv3d(grid, n, in, out, modes,
                                   load_corner_weights(w, prefix, in, out, modes), alg);
}

Tensor DistributedSpectralConv3d::forward(const Tensor& x) {
  // The 1/N of the inverse transform is folded into the mode multiply, as in SpectralConv3d.
  return fft_->backward(spectral_mix(fft_->forward(x), w_, scale_));
}

}  // namespace ufno
