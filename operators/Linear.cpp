#include "operators/Linear.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/Gemm.hpp"

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
  has_bias_ = std::any_of(bias.data.begin(), bias.data.end(), [](float v) { return v != 0.f; });
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
  Tensor y =
      temporary_tensor("linear.out", x.extent(0), out_, x.extent(2), x.extent(3), x.extent(4));
  apply(x, y, false, act);
  return y;
}

void Linear::forward_accumulate(const Tensor& x, const Tensor& y, Activation act) const {
  apply(x, y, true, act);
}

std::vector<float> Linear::release_bias() {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b_);
  std::vector<float> b(h.data(), h.data() + h.size());
  Kokkos::deep_copy(b_, 0.f);
  has_bias_ = false;
  return b;
}

void Linear::apply(const Tensor& x, const Tensor& y, bool accumulate, Activation act) const {
  if (int(x.extent(1)) != in_ || int(y.extent(1)) != out_ || x.extent(0) != y.extent(0) ||
      x.extent(2) != y.extent(2) || x.extent(3) != y.extent(3) || x.extent(4) != y.extent(4))
    throw std::invalid_argument("Linear: input " + to_string(shape_of(x)) + " / output " +
                                to_string(shape_of(y)) + " do not fit " + std::to_string(in_) +
                                " -> " + std::to_string(out_));
  const long voxels = long(x.extent(2)) * x.extent(3) * x.extent(4);
  for (std::size_t n = 0; n < x.extent(0); ++n)
    apply_columns(x.data() + n * in_ * voxels, voxels, y.data() + n * out_ * voxels, voxels, voxels,
                  accumulate, act);
}

void Linear::apply_columns(const float* x, long ldx, float* y, long ldy, long cols, bool accumulate,
                           Activation act) const {
  // The GEMM fuses accumulation and activation, but not a bias per output channel (a row of the
  // product): the bias goes into y first (y = b, or y += b) and the product accumulates onto it.
  if (has_bias_) {
    auto b = b_;
    ufno::parallel_runs(
        "ufno::linear_bias", out_, cols, KOKKOS_LAMBDA(const int64_t row, int64_t v0, int64_t v1) {
          const float bc = b(row);
          float* r = y + row * ldy;
          for (int64_t v = v0; v < v1; ++v) r[v] = accumulate ? r[v] + bc : bc;
        });
  }
  const float beta = accumulate || has_bias_ ? 1.f : 0.f;
  backend::gemm(out_, int(cols), in_, 1.f, w_.data(), in_, x, int(ldx), beta, y, int(ldy), act);
}

namespace {

// second(act(first(x))) on B cases of `voxels` voxels, channels first: x (B, in, voxels) ->
// y (B, out, voxels).
void mlp_columns(const float* x, float* y, std::size_t batch, long voxels, const Linear& first,
                 Activation act, const Linear& second, long chunk) {
  // The whole-tensor plan runs each product over every voxel at once (one launch, no chunks).
  const long width =
      std::max(1L, execution_plan().cache_blocked ? std::min(chunk, voxels) : voxels);
  auto h = temporary<Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace>>(
      "mlp.hidden", first.out_channels(), width);
  for (std::size_t n = 0; n < batch; ++n) {
    const float* xs = x + n * first.in_channels() * voxels;
    float* ys = y + n * second.out_channels() * voxels;
    for (long v = 0; v < voxels; v += width) {
      const long cols = std::min(width, voxels - v);
      first.apply_columns(xs + v, voxels, h.data(), width, cols, false, act);
      second.apply_columns(h.data(), width, ys + v, voxels, cols, false, Activation::None);
    }
  }
}

template <std::size_t D>
GridView<D> mlp(const GridView<D>& x, const Linear& first, Activation act, const Linear& second,
                long chunk) {
  if (int(x.extent(1)) != first.in_channels() || first.out_channels() != second.in_channels())
    throw std::invalid_argument("pointwise_mlp: " + shape_string(x) + " through " +
                                std::to_string(first.in_channels()) + " -> " +
                                std::to_string(first.out_channels()) + " -> " +
                                std::to_string(second.out_channels()));
  long voxels = 1;
  for (int e : grid_extents<D>(x)) voxels *= e;
  auto y =
      temporary_grid_view<D>("mlp.out", x.extent(0), second.out_channels(), grid_extents<D>(x));
  mlp_columns(x.data(), y.data(), x.extent(0), voxels, first, act, second, chunk);
  return y;
}

}  // namespace

Tensor pointwise_mlp(const Tensor& x, const Linear& first, Activation act, const Linear& second,
                     long chunk) {
  return mlp<3>(x, first, act, second, chunk);
}

GridView<4> pointwise_mlp(const GridView<4>& x, const Linear& first, Activation act,
                          const Linear& second, long chunk) {
  return mlp<4>(x, first, act, second, chunk);
}

}  // namespace ufno
