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
#include <tuple>

#include "operators/backend/Gemm.hpp"

namespace ufno::backend {

namespace {

using dnnl::memory;
using Key = std::tuple<int, int, int, int, int, int, float, float, int, float>;
using BatchKey = std::tuple<int, int, int, int, long, int, long, int, float, long, int>;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

memory::desc matrix(int rows, int cols, int ld) {
  return memory::desc({rows, cols}, memory::data_type::f32, memory::dims{ld, 1});
}

dnnl::matmul make_matmul(int M, int N, int K, float alpha, int lda, int ldb, float beta, int ldc,
                         Activation act, float slope) {
  dnnl::primitive_attr attr;
  if (alpha != 1.f) attr.set_output_scales(0, {alpha});
  dnnl::post_ops ops;
  if (beta != 0.f) ops.append_sum(beta);
  if (act != Activation::None)
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu,
                       act == Activation::LeakyReLU ? slope : 0.f, 0.f);
  attr.set_post_ops(ops);
  dnnl::matmul::desc d(matrix(M, K, lda), matrix(K, N, ldb), matrix(M, N, ldc));
  return dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, engine()));
}

}  // namespace

void gemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc, Activation act, float slope) {
  if (M == 0 || N == 0) return;
  static std::mutex mutex;
  static std::map<Key, dnnl::matmul> cache;
  dnnl::matmul prim;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const Key key{M, N, K, lda, ldb, ldc, alpha, beta, int(act), slope};
    auto it = cache.find(key);
    if (it == cache.end())
      it = cache.emplace(key, make_matmul(M, N, K, alpha, lda, ldb, beta, ldc, act, slope)).first;
    prim = it->second;
  }
  auto& eng = engine();
  dnnl::stream strm(eng);
  memory a(matrix(M, K, lda), eng, const_cast<float*>(A));
  memory b(matrix(K, N, ldb), eng, const_cast<float*>(B));
  memory c(matrix(M, N, ldc), eng, C);
  prim.execute(strm, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  strm.wait();
}

void gemm_batched(int batch, int M, int N, int K, const float* A, long stride_a, int lda,
                  const float* B, long stride_b, int ldb, float beta, float* C, long stride_c,
                  int ldc) {
  if (batch == 0 || M == 0 || N == 0) return;
  // A shared operand is a batch dimension of extent 1, which oneDNN broadcasts.
  const memory::desc a({stride_a ? batch : 1, M, K}, memory::data_type::f32,
                       memory::dims{stride_a ? stride_a : long(M) * lda, lda, 1});
  const memory::desc b({stride_b ? batch : 1, K, N}, memory::data_type::f32,
                       memory::dims{stride_b ? stride_b : long(K) * ldb, ldb, 1});
  const memory::desc c({batch, M, N}, memory::data_type::f32, memory::dims{stride_c, ldc, 1});
  static std::mutex mutex;
  static std::map<BatchKey, dnnl::matmul> cache;
  dnnl::matmul prim;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const BatchKey key{batch, M, N, K, stride_a, lda, stride_b, ldb, beta, stride_c, ldc};
    auto it = cache.find(key);
    if (it == cache.end()) {
      dnnl::primitive_attr attr;
      if (beta != 0.f) {
        dnnl::post_ops ops;
        ops.append_sum(beta);
        attr.set_post_ops(ops);
      }
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine());
      it = cache.emplace(key, dnnl::matmul(pd)).first;
    }
    prim = it->second;
  }
  auto& eng = engine();
  dnnl::stream strm(eng);
  memory ma(a, eng, const_cast<float*>(A)), mb(b, eng, const_cast<float*>(B)), mc(c, eng, C);
  prim.execute(strm, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  strm.wait();
}

// oneDNN runs on the OpenMP pool, whose size set_conv_threads sets; nothing else to do.
void set_gemm_threads(int) {}

}  // namespace ufno::backend
