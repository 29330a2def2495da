#pragma once
// SpectralConv3d: the Fourier layer's global convolution. Built as per-axis 1-D transforms with the
// truncation to the kept modes right after each one (forward T (r2c), then Y, then X; inverse in
// the reverse order, X, Y, then c2r over T), because the distributed version repartitions between
// exactly these steps and only the kept modes should travel. The result equals the reference's
// rfftn / corner multiply / irfftn, including its dropping of the imaginary part of the k_T = 0
// bin in the final c2r.
#include <array>
#include <map>
#include <memory>
#include <string>

#include "core/Tensor.hpp"
#include "core/WeightSource.hpp"
#include "fft/Fft1dPlan.hpp"
#include "operators/SpectralWeights.hpp"

namespace ufno::reference {

class SpectralConv3d {
 public:
  SpectralConv3d() = default;
  // corners[q] = weights{q+1} as (in, out, mx, my, mt, 2) float arrays (re, im).
  SpectralConv3d(int in, int out, std::array<int, 3> modes, const std::vector<HostArray>& corners);
  static SpectralConv3d load(const WeightSource& w, const std::string& prefix, int in, int out,
                             std::array<int, 3> modes);

  Tensor forward(const Tensor& x);

  // The kept-mode spectrum of x, (B, C, 2mx, 2my, mt), and the inverse of such a spectrum back to
  // a real (B, C, X, Y, T) tensor: exposed for tests and for the distributed layer.
  CTensor forward_modes(const Tensor& x);
  Tensor inverse_modes(const CTensor& modes, const Shape5& real_shape);
  CTensor mix(const CTensor& modes, float scale) const;

  const std::array<int, 3>& modes() const { return m_; }

 private:
  struct Plans {
    std::unique_ptr<fft::Fft1dPlan> t_r2c, y_fwd, x_fwd, x_bwd, y_bwd, t_c2r;
  };
  Plans& plans_for(const Shape5& in_shape, int out_channels);

  int in_ = 0, out_ = 0;
  std::array<int, 3> m_{0, 0, 0};
  SpectralWeightView w_;  // (2mx, 2my, mt, in, out), see SpectralWeights.hpp
  std::map<std::pair<Shape5, int>, std::shared_ptr<Plans>> plans_;
};

}  // namespace ufno::reference
