#include "operators/MlpHead.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/Backend.hpp"
#include "core/ExecutionPlan.hpp"
#include "core/LaunchLog.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define UFNO_AVX512 __attribute__((target("avx512f,fma")))
#endif

// Register arrays indexed in loops stay in registers only when nvcc unrolls the loops (the device
// pass; the host compiler does not know the pragma).
#if defined(__CUDA_ARCH__)
#define UFNO_UNROLL _Pragma("unroll")
#else
#define UFNO_UNROLL
#endif

namespace ufno {

namespace {

constexpr int kBlock = 8;    // hidden channels per register block (the AVX-512 kernel)
constexpr int kCells = 16;   // kept cells per iteration of the host kernels
constexpr int kMaxIn = 256;  // input channels the AVX-512 kernel gathers on its stack

// Where the kept cells lie in x: the box's origin and its Y and T extents, and x's strides. Kept
// cell k (0 <= k < count, T fastest, then Y, then X) is at offset(k) in a channel plane of x.
struct Cells {
  int x0 = 0, y0 = 0, t0 = 0, ky = 1, kt = 1;
  long line = 0, plane = 0;  // x's strides of a Y step and an X step
  long count = 0;            // kept cells per case
  KOKKOS_INLINE_FUNCTION long offset(long k) const {
    const long t = k % kt, r = k / kt;
    return (r / ky + x0) * plane + (r % ky + y0) * line + t + t0;
  }
};

bool avx512_available() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, DeviceSpace>;
using Vector = Kokkos::View<float*, DeviceSpace>;

struct HeadWeights {
  Matrix w1;  // (padded, in)
  Vector b1;
  Matrix w2;  // (out, padded)
  Vector b2;
  int in, hidden, out;
  Activation act;
  float slope;
};

// The portable kernel: TW kept cells per iteration, y (B, out, count).
template <int TW>
void head_cells(const float* xp, float* yp, int B, const Cells& cells, long cs,
                const HeadWeights& h) {
  const long K = cells.count, tiles = (K + TW - 1) / TW, case_stride = cs * h.in;
  const Matrix w1 = h.w1, w2 = h.w2;
  const Vector b1 = h.b1, b2 = h.b2;
  const int in = h.in, hidden = h.hidden, nout = h.out;
  const Activation act = h.act;
  const float slope = h.slope;
  ufno::parallel_for(
      "ufno::mlp_head", Kokkos::RangePolicy<ExecSpace>(0, B * tiles),
      KOKKOS_LAMBDA(const int64_t i) {
        const long b = i / tiles, k0 = (i % tiles) * TW;
        const int n = K - k0 < TW ? int(K - k0) : TW;
        long off[TW] = {};
        for (int l = 0; l < n; ++l) off[l] = cells.offset(k0 + l);
        const float* xb = xp + b * case_stride;
        float o[MlpHead::kMaxOut][TW] = {};
        for (int q = 0; q < nout; ++q)
          for (int l = 0; l < n; ++l) o[q][l] = b2(q);
        for (int j = 0; j < hidden; ++j) {
          float a[TW] = {};
          for (int l = 0; l < n; ++l) a[l] = b1(j);
          for (int c = 0; c < in; ++c) {
            const float w = w1(j, c);
            const float* xc = xb + c * cs;
            for (int l = 0; l < n; ++l) a[l] += w * xc[off[l]];
          }
          for (int l = 0; l < n; ++l) a[l] = activate(act, slope, a[l]);
          for (int q = 0; q < nout; ++q) {
            const float w = w2(q, j);
            for (int l = 0; l < n; ++l) o[q][l] += w * a[l];
          }
        }
        for (int q = 0; q < nout; ++q)
          for (int l = 0; l < n; ++l) yp[(b * nout + q) * K + k0 + l] = o[q][l];
      });
}

// The whole-tensor plan's kernel (a GPU's): a thread per kept cell, whose InPad input channels
// (zero beyond h.in, as are w1's columns there) are read once into registers; the sums run in
// the same order as head_cells'.
template <int InPad>
void head_cells_in_registers(const float* xp, float* yp, int B, const Cells& cells, long cs,
                             const HeadWeights& h) {
  const long K = cells.count, case_stride = cs * h.in;
  const HeadWeights w = h;  // captured by value: its views and sizes travel to the device
  ufno::parallel_for(
      "ufno::mlp_head", Kokkos::RangePolicy<ExecSpace>(0, B * K), KOKKOS_LAMBDA(const int64_t i) {
        const long b = i / K, k = i % K;
        const float* xb = xp + b * case_stride + cells.offset(k);
        float xr[InPad];
        UFNO_UNROLL
        for (int c = 0; c < InPad; ++c) xr[c] = c < w.in ? xb[c * cs] : 0.f;
        float o[MlpHead::kMaxOut];
        UFNO_UNROLL
        for (int q = 0; q < MlpHead::kMaxOut; ++q) o[q] = q < w.out ? w.b2(q) : 0.f;
        for (int j = 0; j < w.hidden; ++j) {
          float a = w.b1(j);
          UFNO_UNROLL
          for (int c = 0; c < InPad; ++c) a += w.w1(j, c) * xr[c];
          a = activate(w.act, w.slope, a);
          UFNO_UNROLL
          for (int q = 0; q < MlpHead::kMaxOut; ++q)
            if (q < w.out) o[q] += w.w2(q, j) * a;
        }
        UFNO_UNROLL
        for (int q = 0; q < MlpHead::kMaxOut; ++q)
          if (q < w.out) yp[(b * w.out + q) * K + k] = o[q];
      });
}

// head_cells_in_registers for the padded input width n (a multiple of kInStep up to
// kMaxRegisterIn); false for another n.
template <int InPad = MlpHead::kInStep>
bool head_cells_in_registers_for(int n, const float* xp, float* yp, int B, const Cells& cells,
                                 long cs, const HeadWeights& h) {
  if constexpr (InPad > MlpHead::kMaxRegisterIn) {
    return false;
  } else {
    if (n != InPad)
      return head_cells_in_registers_for<InPad + MlpHead::kInStep>(n, xp, yp, B, cells, cs, h);
    head_cells_in_registers<InPad>(xp, yp, B, cells, cs, h);
    return true;
  }
}

#if defined(__x86_64__)
// Kept cells [k0, k0 + n) (n <= kCells) of one case: y[q * count + k] for every output q. xb is
// the case's input channel 0, cs the channel stride. w1b (padded / 8, in, 8), w2 (out, padded).
UFNO_AVX512 void head_tile(const float* xb, long cs, const Cells& cells, long k0, int n, int in,
                           int padded, int out, bool relu, const float* w1b, const float* b1,
                           const float* w2, const float* b2, float* y) {
  alignas(64) float xs[kMaxIn * kCells];
  const float* src = xs;
  long stride = kCells;
  if (n == kCells && k0 % cells.kt + kCells <= cells.kt) {
    src = xb + cells.offset(k0);  // one run of a T line: read in place
    stride = cs;
  } else {
    long off[kCells];
    for (int l = 0; l < n; ++l) off[l] = cells.offset(k0 + l);
    for (int c = 0; c < in; ++c)
      for (int l = 0; l < kCells; ++l) xs[c * kCells + l] = l < n ? xb[c * cs + off[l]] : 0.f;
  }
  __m512 o[MlpHead::kMaxOut];
  for (int q = 0; q < out; ++q) o[q] = _mm512_set1_ps(b2[q]);
  const __m512 zero = _mm512_setzero_ps();
  for (int j = 0; j < padded; j += kBlock) {
    const float* w = w1b + long(j) * in;
    __m512 a[kBlock];
    for (int r = 0; r < kBlock; ++r) a[r] = _mm512_set1_ps(b1[j + r]);
    for (int c = 0; c < in; ++c) {
      const __m512 v = _mm512_loadu_ps(src + c * stride);
      for (int r = 0; r < kBlock; ++r)
        a[r] = _mm512_fmadd_ps(_mm512_set1_ps(w[c * kBlock + r]), v, a[r]);
    }
    if (relu)  // v > 0 ? v : 0, as the portable kernel (NaN gives 0)
      for (int r = 0; r < kBlock; ++r)
        a[r] = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a[r], zero, _CMP_GT_OQ), a[r]);
    for (int q = 0; q < out; ++q)
      for (int r = 0; r < kBlock; ++r)
        o[q] = _mm512_fmadd_ps(_mm512_set1_ps(w2[q * padded + j + r]), a[r], o[q]);
  }
  for (int q = 0; q < out; ++q) {
    float* d = y + q * cells.count + k0;
    if (n == kCells) {
      _mm512_storeu_ps(d, o[q]);
    } else {
      alignas(64) float tmp[kCells];
      _mm512_store_ps(tmp, o[q]);
      for (int l = 0; l < n; ++l) d[l] = tmp[l];
    }
  }
}
#endif

}  // namespace

MlpHead::MlpHead(const Linear& first, Activation act, const Linear& second, float slope)
    : in_(first.in_channels()),
      hidden_(first.out_channels()),
      padded_((first.out_channels() + kBlock - 1) / kBlock * kBlock),
      out_(second.out_channels()),
      in_padded_((first.in_channels() + kInStep - 1) / kInStep * kInStep),
      act_(act),
      slope_(slope),
      w1_("head.w1", padded_, in_padded_),
      b1_("head.b1", padded_),
      w2_("head.w2", out_, padded_),
      b2_("head.b2", out_) {
  if (second.in_channels() != hidden_)
    throw std::invalid_argument(
        "MlpHead: " + std::to_string(in_) + " -> " + std::to_string(hidden_) + " then " +
        std::to_string(second.in_channels()) + " -> " + std::to_string(out_) + " do not chain");
  if (out_ < 1 || out_ > kMaxOut)
    throw std::invalid_argument("MlpHead: " + std::to_string(out_) +
                                " output channels (the fused head takes 1 to " +
                                std::to_string(kMaxOut) + ")");
  const auto fw1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), first.weight());
  const auto fb1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), first.bias());
  const auto fw2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), second.weight());
  const auto fb2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), second.bias());
  auto hw1 = Kokkos::create_mirror_view(w1_);  // zero-initialised, as are the views
  auto hb1 = Kokkos::create_mirror_view(b1_);
  auto hw2 = Kokkos::create_mirror_view(w2_);
  auto hb2 = Kokkos::create_mirror_view(b2_);
  for (int j = 0; j < padded_; ++j) {
    hb1(j) = j < hidden_ ? fb1(j) : 0.f;
    for (int c = 0; c < in_; ++c) hw1(j, c) = j < hidden_ ? fw1(j, c) : 0.f;
    for (int q = 0; q < out_; ++q) hw2(q, j) = j < hidden_ ? fw2(q, j) : 0.f;
  }
  for (int q = 0; q < out_; ++q) hb2(q) = fb2(q);
  Kokkos::deep_copy(w1_, hw1);
  Kokkos::deep_copy(b1_, hb1);
  Kokkos::deep_copy(w2_, hw2);
  Kokkos::deep_copy(b2_, hb2);
  if (kHostTensors && avx512_available() && in_ <= kMaxIn) {
    w1_blocks_.resize(std::size_t(padded_) * in_);
    for (int j = 0; j < padded_; ++j)
      for (int c = 0; c < in_; ++c)
        w1_blocks_[(std::size_t(j / kBlock) * in_ + c) * kBlock + j % kBlock] = hw1(j, c);
  }
}

Tensor MlpHead::forward(const Tensor& x, const dist::Box<3>& box) const {
  Tensor y =
      temporary_tensor("head.out", x.extent(0), out_, box.extent(0), box.extent(1), box.extent(2));
  forward(x, box, y);
  return y;
}

void MlpHead::forward(const Tensor& x, const dist::Box<3>& box, const Tensor& out) const {
  bool inside = true;
  for (int a = 0; a < 3; ++a)
    inside = inside && box.lo[a] >= 0 && box.hi[a] <= int(x.extent(2 + a)) &&
             int(out.extent(2 + a)) == box.extent(a);
  if (int(x.extent(1)) != in_ || out.extent(0) != x.extent(0) || int(out.extent(1)) != out_ ||
      !inside)
    throw std::invalid_argument(
        "MlpHead: input " + shape_string(x) + ", box " + std::to_string(box.extent(0)) + "x" +
        std::to_string(box.extent(1)) + "x" + std::to_string(box.extent(2)) + ", output " +
        shape_string(out) + " do not fit " + std::to_string(in_) + " -> " + std::to_string(out_));
  const int B = x.extent(0);
  if (B == 0 || box.empty()) return;
  Cells cells;
  cells.x0 = box.lo[0], cells.y0 = box.lo[1], cells.t0 = box.lo[2];
  cells.ky = box.extent(1), cells.kt = box.extent(2);
  cells.line = long(x.extent(4));
  cells.plane = long(x.extent(3)) * x.extent(4);
  cells.count = box.count();
  const long cs = long(x.extent(2)) * cells.plane;
  const float* xp = x.data();
  float* yp = out.data();

#if defined(__x86_64__)
  const bool relu = act_ == Activation::ReLU;
  if constexpr (kHostTensors) {
    if (execution_plan().values_per_iteration > 1 && !w1_blocks_.empty() &&
        (relu || act_ == Activation::None)) {
      const long K = cells.count, tiles = (K + kCells - 1) / kCells, case_stride = cs * in_;
      const int in = in_, nout = out_;
      LaunchLog::record("ufno::mlp_head", B * tiles, B * K);
      const float* w1b = w1_blocks_.data();
      const float *b1 = b1_.data(), *w2 = w2_.data(), *b2 = b2_.data();
      const int padded = padded_;
      host_parallel_for("ufno::mlp_head", B * tiles, [&](int64_t i) {
        const long b = i / tiles, k0 = (i % tiles) * kCells;
        head_tile(xp + b * case_stride, cs, cells, k0, int(std::min<long>(kCells, K - k0)), in,
                  padded, nout, relu, w1b, b1, w2, b2, yp + b * nout * K);
      });
      return;
    }
  }
#endif

  // The portable kernels: a thread per kept cell on the whole-tensor plan (a GPU's), kCells
  // cells per iteration on the streaming plan, whose loops over them vectorise.
  const HeadWeights w{w1_, b1_, w2_, b2_, in_, hidden_, out_, act_, slope_};
  if (execution_plan().values_per_iteration > 1)
    head_cells<kCells>(xp, yp, B, cells, cs, w);
  else if (!head_cells_in_registers_for(in_padded_, xp, yp, B, cells, cs, w))
    head_cells<1>(xp, yp, B, cells, cs, w);
}

}  // namespace ufno
