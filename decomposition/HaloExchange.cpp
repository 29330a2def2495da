#include "decomposition/HaloExchange.hpp"

namespace ufno::dist {

namespace {
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int ceil_div(int a, int b) { return -floor_div(-a, b); }
}  // namespace

std::array<int, 2> conv_input_range(const ConvGeometry& g, int o_lo, int o_hi) {
  if (o_hi <= o_lo) return {0, 0};
  const int k = g.kernel, s = g.stride, p = g.padding;
  if (!g.transposed)  // out[o] reads in[s*o - p + a], a = 0..k-1
    return {s * o_lo - p, s * (o_hi - 1) - p + k};
  // Transposed: out[o] receives in[i] for o = s*i - p + a, a = 0..k-1.
  return {ceil_div(o_lo + p - k + 1, s), floor_div(o_hi - 1 + p, s) + 1};
}

template <std::size_t D>
HaloExchange<D>::HaloExchange(MPI_Comm comm, const Layout& in, const Layout& out, ConvGeometry g,
                              ExchangeAlgorithm alg) {
  MPI_Comm_rank(comm, &rank_);
  std::vector<Box<D>> boxes;
  for (const Box<D>& o : out.boxes()) {
    Box<D> b;
    if (!o.empty())
      for (std::size_t a = 0; a < D; ++a) {
        const auto r = conv_input_range(g, o.lo[a], o.hi[a]);
        b.lo[a] = r[0];
        b.hi[a] = r[1];
      }
    boxes.push_back(b);
  }
  gather_ = Layout(in.global(), boxes);
  r_ = std::make_unique<Repartition<float, D>>(comm, in, gather_, alg);
}

template class HaloExchange<3>;
template class HaloExchange<4>;

}  // namespace ufno::dist
