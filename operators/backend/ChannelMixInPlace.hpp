#pragma once
// The end of a Fourier layer on the host, in one pass and in place: x = ReLU(t + W x) over
// `cols` voxels of C channels (W the layer's C x C w_k, t its spectral and U-Net terms), with
// AVX-512. The GEMM route (oneDNN into t, then t copied back into x) streams t twice more;
// here a block of 32 voxels of x is copied to an L1 buffer and its outputs are written straight
// over it. Host memory only (kHostTensors).
namespace ufno::backend {

// True when this CPU has AVX-512F (and the library was built for x86-64).
bool channel_mix_in_place_available();

// x[o * ldx + v] = max(0, t[o * ldt + v] + sum_i wt[i * C + o] * x[i * ldx + v]) for o < C,
// v < cols; wt is W transposed, (in, out). Threads: the host's (host_parallel_for).
void channel_mix_relu_in_place(int C, const float* wt, float* x, long ldx, const float* t, long ldt,
                               long cols);

}  // namespace ufno::backend
