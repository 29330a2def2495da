#include "operators/DistributedSpectralConv3d.hpp"

#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/Parallel.hpp"

namespace ufno {

DistributedSpectralConv3d::DistributedSpectralConv3d(const dist::ProcessGrid& grid,
                                                     std::array<int, 3> n, int in, int out,
                                                     std::array<int, 3> modes,
                                                     const std::array<HostArray, 4>& corners,
                                                     dist::ExchangeAlgorithm alg)
    : out_(out),
      rank_(grid.rank()),
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

void DistributedSpectralConv3d::add_output_bias(const std::vector<float>& bias) {
  if (int(bias.size()) != out_)
    throw std::invalid_argument("DistributedSpectralConv3d: bias of " +
                                std::to_string(bias.size()) + " values for " +
                                std::to_string(out_) + " output channels");
  const auto lo = fft_->spectral_layout().box(rank_).lo;
  if (fft_->spectral_layout().box(rank_).empty() || lo != std::array<int, 3>{0, 0, 0}) return;
  if (!dc_bias_.size()) dc_bias_ = Kokkos::View<float*, DeviceSpace>("spectral.dc_bias", out_);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dc_bias_);
  for (int o = 0; o < out_; ++o) h(o) += bias[o];
  Kokkos::deep_copy(dc_bias_, h);
}

CTensor DistributedSpectralConv3d::mixed_modes(const Tensor& x) {
  // The 1/N of the inverse transform is folded into the mode multiply, as in SpectralConv3d.
  CTensor a = fft_->forward(x);
  LayerTimer::Scope t("  spectral mix");
  a = spectral_mix(a, w_, scale_);
  if (dc_bias_.size()) {
    auto d = dc_bias_;
    const int O = out_;
    ufno::parallel_for(
        "ufno::spectral_dc_bias", Kokkos::RangePolicy<ExecSpace>(0, long(a.extent(0)) * O),
        KOKKOS_LAMBDA(const int64_t i) { a(i / O, i % O, 0, 0, 0) += complexf(d(i % O), 0.f); });
  }
  return a;
}

Tensor DistributedSpectralConv3d::forward(const Tensor& x) {
  return fft_->backward(mixed_modes(x));
}

CTensor DistributedSpectralConv3d::forward_t_modes(const Tensor& x) {
  return fft_->backward_to_t_modes(mixed_modes(x));
}

CTensor DistributedSpectralConv3d::forward_y_modes(const Tensor& x) {
  return fft_->backward_to_y_modes(mixed_modes(x));
}

}  // namespace ufno
