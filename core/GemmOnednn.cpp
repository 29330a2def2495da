// Host GEMM through oneDNN's matmul primitive. It replaced OpenBLAS because on the skinny shapes
// of this code ((voxels x 32) x (32 x 20) for the pruned transforms, (36 x 36) x (36 x voxels)
// for the pointwise layers) oneDNN's brgemm kernels ran 2-7x faster, it fuses the accumulation
// and the activation as post-ops (one pass over C instead of three), and it shares the OpenMP
// pool of the convolutions instead of a second pool competing for the same cores.
// Primitives are cached per shape; a bias per row of C is not fused, because oneDNN 2.6 runs that
// form only in its reference kernel.
#include <dnnl.hpp>

#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "core/Gemm.hpp"
#include "core/LaunchLog.hpp"

namespace ufno::backend {

namespace {

using dnnl::memory;

// Everything that selects a primitive: the batched product with its strides, scaling and
// epilogue. gemm() is the batch-1 case of the same core.
struct Product {
  int batch, M, N, K;
  long stride_a, stride_b, stride_c;  // 0 shares that operand across the batch (not for C)
  int lda, ldb, ldc;
  float alpha, beta;
  Activation act;
  float slope;
  auto key() const {
    return std::make_tuple(batch, M, N, K, stride_a, stride_b, stride_c, lda, ldb, ldc, alpha, beta,
                           int(act), slope);
  }
};

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// (batch or 1, rows, cols) row-major with leading dimension ld; a batch of 1 is broadcast.
memory::desc matrices(int batch, long stride, int rows, int cols, int ld) {
  return memory::desc({stride ? batch : 1, rows, cols}, memory::data_type::f32,
                      memory::dims{stride ? stride : long(rows) * ld, ld, 1});
}

dnnl::matmul make_matmul(const Product& p) {
  dnnl::primitive_attr attr;
  if (p.alpha != 1.f) attr.set_output_scales(0, {p.alpha});
  dnnl::post_ops ops;
  if (p.beta != 0.f) ops.append_sum(p.beta);
  if (p.act == Activation::GELU)
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
  else if (p.act != Activation::None)
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu,
                       p.act == Activation::LeakyReLU ? p.slope : 0.f, 0.f);
  attr.set_post_ops(ops);
  dnnl::matmul::desc d(matrices(p.batch, p.stride_a, p.M, p.K, p.lda),
                       matrices(p.batch, p.stride_b, p.K, p.N, p.ldb),
                       matrices(p.batch, p.stride_c, p.M, p.N, p.ldc));
  return dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, engine()));
}

// oneDNN 2.6 runs a batched product whose items are not stored one after the other (the
// channel planes of a grid: a stride larger than rows x ld) in its generic gemm kernel, about a
// third slower than its brgemm kernel on the items one by one. Items this large go one by one
// (each still threaded); smaller ones stay batched, where one call's overhead would dominate.
constexpr long kItemMacs = 4L << 20;

bool one_by_one(const Product& p) {
  const bool spread = (p.stride_a && p.stride_a != long(p.M) * p.lda) ||
                      (p.stride_b && p.stride_b != long(p.K) * p.ldb) ||
                      p.stride_c != long(p.M) * p.ldc;
  return p.batch > 1 && spread && long(p.M) * p.N * p.K >= kItemMacs;
}

void execute(const Product& p, const float* A, const float* B, float* C) {
  if (p.batch == 0 || p.M == 0 || p.N == 0) return;
  if (one_by_one(p)) {
    Product item = p;
    item.batch = 1;
    item.stride_a = item.stride_b = 0;
    item.stride_c = long(p.M) * p.ldc;
    for (int i = 0; i < p.batch; ++i)
      execute(item, A + i * p.stride_a, B + i * p.stride_b, C + i * p.stride_c);
    return;
  }
  static std::mutex mutex;
  static std::map<decltype(p.key()), dnnl::matmul> cache;
  dnnl::matmul prim;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(p.key());
    if (it == cache.end()) it = cache.emplace(p.key(), make_matmul(p)).first;
    prim = it->second;
  }
  auto& eng = engine();
  dnnl::stream strm(eng);
  memory a(matrices(p.batch, p.stride_a, p.M, p.K, p.lda), eng, const_cast<float*>(A));
  memory b(matrices(p.batch, p.stride_b, p.K, p.N, p.ldb), eng, const_cast<float*>(B));
  memory c(matrices(p.batch, p.stride_c, p.M, p.N, p.ldc), eng, C);
  prim.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  LaunchLog::record_library("onednn::matmul");
  strm.wait();
}

dnnl::eltwise_forward make_eltwise(long n, Activation act) {
  const memory::desc d({n}, memory::data_type::f32, memory::format_tag::a);
  const auto alg =
      act == Activation::GELU ? dnnl::algorithm::eltwise_gelu_erf : dnnl::algorithm::eltwise_relu;
  dnnl::eltwise_forward::desc e(dnnl::prop_kind::forward_inference, alg, d, 0.f, 0.f);
  return dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(e, engine()));
}

}  // namespace

void Gemm<Host>::activate(float* C, long n, Activation act) {
  if (act == Activation::LeakyReLU)
    throw std::invalid_argument("Gemm<Host>::activate: LeakyReLU needs its slope");
  static std::mutex mutex;
  static std::map<std::pair<long, int>, dnnl::eltwise_forward> cache;
  dnnl::eltwise_forward prim;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto key = std::make_pair(n, int(act));
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, make_eltwise(n, act)).first;
    prim = it->second;
  }
  auto& eng = engine();
  dnnl::stream strm(eng);
  memory m({{n}, memory::data_type::f32, memory::format_tag::a}, eng, C);
  prim.execute(strm, {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}});
  LaunchLog::record_library("onednn::eltwise");
  strm.wait();
}

void Gemm<Host>::run(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                     int ldb, float beta, float* C, int ldc, Activation act, float slope) {
  execute({1, M, N, K, 0, 0, long(M) * ldc, lda, ldb, ldc, alpha, beta, act, slope}, A, B, C);
}

void Gemm<Host>::batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                         const float* B, long stride_b, int ldb, float beta, float* C,
                         long stride_c, int ldc, Activation act) {
  execute({batch, M, N, K, stride_a, stride_b, stride_c, lda, ldb, ldc, 1.f, beta, act, 0.f}, A, B,
          C);
}

}  // namespace ufno::backend
