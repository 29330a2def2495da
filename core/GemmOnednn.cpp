// Host GEMM through oneDNN's matmul primitive. It replaced OpenBLAS because on the skinny shapes
// of this code ((voxels x 32) x (32 x 20) for the pruned transforms, (36 x 36) x (36 x voxels)
// for the pointwise layers) oneDNN's brgemm kernels ran 2-7x faster, it fuses the accumulation
// and the activation as post-ops (one pass over C instead of three), and it shares the OpenMP
// pool of the convolutions instead of a second pool competing for the same cores.
// Primitives are cached per shape; a bias per row of C is not fused, because oneDNN 2.6 runs that
// form only in its reference kernel. bfloat16 products (run_bf16) take A already rounded and round
// B a block of columns at a time into a buffer (oneDNN 2.6's matmul wants both in bf16).
#include <dnnl.hpp>

#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

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
  bool bf16 = false;  // A and B in bfloat16, C float32
  auto key() const {
    return std::make_tuple(batch, M, N, K, stride_a, stride_b, stride_c, lda, ldb, ldc, alpha, beta,
                           int(act), slope, bf16);
  }
};

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// (batch or 1, rows, cols) row-major with leading dimension ld; a batch of 1 is broadcast.
memory::desc matrices(int batch, long stride, int rows, int cols, int ld,
                      memory::data_type type = memory::data_type::f32) {
  return memory::desc({stride ? batch : 1, rows, cols}, type,
                      memory::dims{stride ? stride : long(rows) * ld, ld, 1});
}

memory::data_type input_type(const Product& p) {
  return p.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
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
  dnnl::matmul::desc d(matrices(p.batch, p.stride_a, p.M, p.K, p.lda, input_type(p)),
                       matrices(p.batch, p.stride_b, p.K, p.N, p.ldb, input_type(p)),
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

// A and B are float32, or bfloat16 bits when p.bf16.
void execute(const Product& p, const void* A, const void* B, float* C) {
  if (p.batch == 0 || p.M == 0 || p.N == 0) return;
  if (one_by_one(p)) {
    Product item = p;
    item.batch = 1;
    item.stride_a = item.stride_b = 0;
    item.stride_c = long(p.M) * p.ldc;
    const long size = p.bf16 ? 2 : 4;
    for (int i = 0; i < p.batch; ++i)
      execute(item, static_cast<const char*>(A) + i * p.stride_a * size,
              static_cast<const char*>(B) + i * p.stride_b * size, C + i * p.stride_c);
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
  memory a(matrices(p.batch, p.stride_a, p.M, p.K, p.lda, input_type(p)), eng,
           const_cast<void*>(A));
  memory b(matrices(p.batch, p.stride_b, p.K, p.N, p.ldb, input_type(p)), eng,
           const_cast<void*>(B));
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

// Columns of B that run_bf16 rounds at a time: the bf16 block (K x this) stays in the caches
// between its rounding and the product.
constexpr int kBf16Columns = 8192;

// The reorder that rounds a (rows x cols) float32 block with leading dimension ld into a dense
// bfloat16 one, cached per shape.
dnnl::reorder rounding_reorder(int rows, int cols, int ld) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int>, dnnl::reorder> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(rows, cols, ld);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const memory::desc f32({rows, cols}, memory::data_type::f32, memory::dims{ld, 1});
    const memory::desc bf16({rows, cols}, memory::data_type::bf16, memory::dims{cols, 1});
    it = cache
             .emplace(key,
                      dnnl::reorder(dnnl::reorder::primitive_desc(engine(), f32, engine(), bf16)))
             .first;
  }
  return it->second;
}

}  // namespace

void Gemm<Host>::run_bf16(int M, int N, int K, const std::uint16_t* A, int lda, const float* B,
                          int ldb, float beta, float* C, int ldc, Activation act, float slope) {
  if (M == 0 || N == 0) return;
  const int block = std::min(N, kBf16Columns);
  thread_local std::vector<std::uint16_t> rounded;
  rounded.resize(std::size_t(K) * block);
  auto& eng = engine();
  for (int j0 = 0; j0 < N; j0 += block) {
    const int n = std::min(block, N - j0);
    {
      dnnl::stream strm(eng);
      memory src({{K, n}, memory::data_type::f32, memory::dims{ldb, 1}}, eng,
                 const_cast<float*>(B + j0));
      memory dst({{K, n}, memory::data_type::bf16, memory::dims{n, 1}}, eng, rounded.data());
      rounding_reorder(K, n, ldb).execute(strm, src, dst);
      LaunchLog::record_library("onednn::reorder");
      strm.wait();
    }
    Product p{1, M, n, K, 0, 0, long(M) * ldc, lda, n, ldc, 1.f, beta, act, slope};
    p.bf16 = true;
    execute(p, A, rounded.data(), C + j0);
  }
}

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
