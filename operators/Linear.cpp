#include "operators/Linear.hpp"

#include <stdexcept>

#include "operators/backend/Gemm.hpp"

namespace ufno {

Linear::Linear(int in, int out, const HostArray& weight, const HostArray& bias)
    : in_(in), out_(out), w_("linear.w", out, in), b_("linear.b", out) {
  if (weight.data.size() != std::size_t(in) * out || bias.data.size() != std::size_t(out))
    throw std::invalid_argument("Linear: weight/bias sizes do not match (in, out)");
  auto hw = Kokkos::create_mirror_view(w_);
  auto hb = Kokkos::create_mirror_view(b_);
  for (int o = 0; o < out; ++o) {
    for (int i = 0; i < in; ++i) hw(o, i) = weight.data[std::size_t(o) * in + i];
    hb(o) = bias.data[o];
  }
  Kokkos::deep_copy(w_, hw);
  Kokkos::deep_copy(b_, hb);
}

Linear Linear::load(const WeightSource& w, const std::string& prefix, int in, int out,
                    bool conv1d) {
  std::vector<std::size_t> ws{std::size_t(out), std::size_t(in)};
  if (conv1d) ws.push_back(1);
  HostArray weight = w.take(prefix + ".weight", ws);
  HostArray bias = w.take(prefix + ".bias", {std::size_t(out)});
  return Linear(in, out, weight, bias);
}

Tensor Linear::forward(const Tensor& x, Activation act) const {
  Tensor y("linear.out", x.extent(0), out_, x.extent(2), x.extent(3), x.extent(4));
  forward_accumulate(x, y, act);  // y starts at zero
  return y;
}

void Linear::forward_accumulate(const Tensor& x, const Tensor& y, Activation act) const {
  if (int(x.extent(1)) != in_ || int(y.extent(1)) != out_ || x.extent(0) != y.extent(0) ||
      x.extent(2) != y.extent(2) || x.extent(3) != y.extent(3) || x.extent(4) != y.extent(4))
    throw std::invalid_argument("Linear: input " + to_string(shape_of(x)) + " / output " +
                                to_string(shape_of(y)) + " do not fit " + std::to_string(in_) +
                                " -> " + std::to_string(out_));
  const long voxels = long(x.extent(2)) * x.extent(3) * x.extent(4);
  for (std::size_t n = 0; n < x.extent(0); ++n) {
    const float* xs = x.data() + n * in_ * voxels;
    float* ys = y.data() + n * out_ * voxels;
    backend::gemm(out_, int(voxels), in_, 1.f, w_.data(), in_, xs, int(voxels), 1.f, ys,
                  int(voxels));
  }
  // Bias and activation in one pass over the output.
  auto b = b_;
  float* p = y.data();
  const int C = out_;
  Kokkos::parallel_for(
      "ufno::linear_bias_act", Kokkos::RangePolicy<ExecSpace>(0, y.span()),
      KOKKOS_LAMBDA(const std::size_t i) {
        const int c = int((i / voxels) % C);
        p[i] = activate(act, 0.f, p[i] + b(c));
      });
}

}  // namespace ufno
