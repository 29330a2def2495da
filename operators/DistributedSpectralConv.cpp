#include "operators/DistributedSpectralConv.hpp"

#include <stdexcept>

#include "core/LayerTimer.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

namespace ufno {

namespace {
template <std::size_t D>
float inverse_size(const std::array<int, D>& n) {
  float s = 1.f;
  for (int v : n) s /= float(v);
  return s;
}
}  // namespace

template <std::size_t D>
DistributedSpectralConv<D>::DistributedSpectralConv(const dist::ProcessGrid& grid, Extents n,
                                                    int in, int out, Extents modes,
                                                    const std::vector<HostArray>& corners,
                                                    dist::ExchangeAlgorithm alg)
    : in_(in),
      out_(out),
      modes_(modes),
      rank_(grid.rank()),
      scale_(inverse_size(n)),
      fft_(std::make_shared<Fft>(grid, n, modes, alg)) {
  w_ = combine_corner_weights<D>(in, out, modes, corners, fft_->spectral_layout().box(grid.rank()));
}

template <std::size_t D>
DistributedSpectralConv<D>::DistributedSpectralConv(const dist::ProcessGrid& grid, Extents n,
                                                    int in, int out, Extents modes,
                                                    std::shared_ptr<Fft> fft)
    : in_(in),
      out_(out),
      modes_(modes),
      rank_(grid.rank()),
      scale_(inverse_size(n)),
      fft_(std::move(fft)) {}

template <std::size_t D>
DistributedSpectralConv<D> DistributedSpectralConv<D>::without_weights(
    const dist::ProcessGrid& grid, Extents n, int in, int out, Extents modes,
    dist::ExchangeAlgorithm alg) {
  return DistributedSpectralConv(grid, n, in, out, modes,
                                 std::make_shared<Fft>(grid, n, modes, alg));
}

template <std::size_t D>
void DistributedSpectralConv<D>::load_weights(const WeightSource& w, const std::string& prefix) {
  // Only the modes this rank owns are read (SpectralWeights.hpp, load_owned_weights).
  w_ = load_owned_weights<D>(w, prefix, in_, out_, modes_, fft_->spectral_layout().box(rank_));
}

template <std::size_t D>
void DistributedSpectralConv<D>::stream_weights_from(const WeightSource& w,
                                                     const std::string& prefix) {
  check_corner_shapes<D>(w, prefix, in_, out_, modes_);
  w_ = SpectralWeightView();
  stream_source_ = &w;
  stream_prefix_ = prefix;
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Complex DistributedSpectralConv<D>::mix_streamed(
    const Complex& a) const {
  const auto& owned = fft_->spectral_layout().box(rank_);
  // No initialisation: the corner parts tile the owned modes, each written once.
  auto out = temporary_grid_view<D, complexf>("spec.mixed", a.extent(0), out_, grid_extents<D>(a));
  HostArray part;  // one buffer for every corner's part
  for (const CornerPart<D>& p : owned_corner_parts<D>(in_, out_, modes_, owned)) {
    const std::string name = corner_name(stream_prefix_, p.corner);
    {
      LayerTimer::Scope t("  spectral weights read");
      // Unchecked: the multiply screens every value it reads (no extra pass over 300 MB a layer
      // at LGR size), and a part with a suspect value is read again, checked, so the source
      // refuses it with its own message (or accepts a large but legal value).
      stream_source_->get_block_into(name, p.start, p.count, part, /*check_values=*/false);
    }
    // Far below any source's limit, far above trained spectral weights.
    constexpr float kSuspect = 1e3f;
    if (spectral_mix_part<D>(a, part, p, out, scale_, kSuspect) > 0)
      stream_source_->get_block_into(name, p.start, p.count, part, /*check_values=*/true);
  }
  return out;
}

template <std::size_t D>
DistributedSpectralConv<D> DistributedSpectralConv<D>::load(
    const WeightSource& w, const std::string& prefix, const dist::ProcessGrid& grid, Extents n,
    int in, int out, Extents modes, dist::ExchangeAlgorithm alg) {
  DistributedSpectralConv c = without_weights(grid, n, in, out, modes, alg);
  c.load_weights(w, prefix);
  return c;
}

template <std::size_t D>
void DistributedSpectralConv<D>::add_output_bias(const std::vector<float>& bias) {
  if (int(bias.size()) != out_)
    throw std::invalid_argument("DistributedSpectralConv: bias of " + std::to_string(bias.size()) +
                                " values for " + std::to_string(out_) + " output channels");
  const auto& box = fft_->spectral_layout().box(rank_);
  if (box.empty() || box.lo != Extents{}) return;
  if (!dc_bias_.size()) dc_bias_ = Kokkos::View<float*, DeviceSpace>("spectral.dc_bias", out_);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dc_bias_);
  for (int o = 0; o < out_; ++o) h(o) += bias[o];
  Kokkos::deep_copy(dc_bias_, h);
}

template <std::size_t D>
void DistributedSpectralConv<D>::add_box_plan(const dist::ProcessGrid& grid, Extents offset,
                                              Extents n, dist::ExchangeAlgorithm alg) {
  auto box = std::make_shared<Fft>(grid, n, modes_, alg, dist::FftKind::R2C,
                                   typename Fft::Window{fft_->extents(), offset});
  // The mode multiply reads the box plan's spectrum as the grid plan's.
  if (box->spectral_layout().global() != fft_->spectral_layout().global() ||
      box->spectral_layout().boxes() != fft_->spectral_layout().boxes())
    throw std::logic_error("DistributedSpectralConv: the box plan's spectral layout differs");
  box_fft_ = std::move(box);
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Complex DistributedSpectralConv<D>::mixed_modes(const Real& x,
                                                                                     bool of_box) {
  if (of_box && !box_fft_)
    throw std::logic_error("DistributedSpectralConv: a box's input without add_box_plan");
  // The 1/N of the inverse transform is folded into the mode multiply.
  Complex a = of_box ? box_fft_->forward(x) : fft_->forward(x);
  LayerTimer::Scope t("  spectral mix");
  if (!stream_source_) {
    if (w_.extent(2) != std::size_t(fft_->spectral_layout().box(rank_).count()))
      throw std::logic_error("DistributedSpectralConv: forward without the mode weights loaded");
    return spectral_mix<D>(a, w_, scale_, dc_bias_);  // the bias in the same pass
  }
  a = mix_streamed(a);
  if (dc_bias_.size() && a.size()) {
    auto d = dc_bias_;
    const int O = out_;
    const long M = long(a.size()) / (long(a.extent(0)) * O);  // modes per (b, o)
    complexf* p = a.data();
    ufno::parallel_for(
        "ufno::spectral_dc_bias", Kokkos::RangePolicy<ExecSpace>(0, long(a.extent(0)) * O),
        KOKKOS_LAMBDA(const int64_t i) { p[i * M] += complexf(d(i % O), 0.f); });
  }
  return a;
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Real DistributedSpectralConv<D>::forward(const Real& x) {
  return fft_->backward(mixed_modes(x));
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Complex DistributedSpectralConv<D>::forward_t_modes(
    const Real& x) {
  return fft_->backward_to_t_modes(mixed_modes(x));
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Complex DistributedSpectralConv<D>::forward_first_axis_modes(
    const Real& x) {
  return fft_->backward_first_axis(mixed_modes(x));
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Complex DistributedSpectralConv<D>::forward_t_modes_of_box(
    const Real& box) {
  return fft_->backward_to_t_modes(mixed_modes(box, /*of_box=*/true));
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Complex
DistributedSpectralConv<D>::forward_first_axis_modes_of_box(const Real& box) {
  return fft_->backward_first_axis(mixed_modes(box, /*of_box=*/true));
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Complex
DistributedSpectralConv<D>::forward_first_axis_modes_to_box(const Real& x) {
  if (!box_fft_)
    throw std::logic_error("DistributedSpectralConv: a box's output without add_box_plan");
  return box_fft_->backward_first_axis(mixed_modes(x));
}

template <std::size_t D>
typename DistributedSpectralConv<D>::Complex DistributedSpectralConv<D>::forward_t_modes_to_box(
    const Real& x) {
  if (!box_fft_)
    throw std::logic_error("DistributedSpectralConv: a box's output without add_box_plan");
  return box_fft_->backward_to_t_modes(mixed_modes(x));
}

template class DistributedSpectralConv<3>;
template class DistributedSpectralConv<4>;

}  // namespace ufno
