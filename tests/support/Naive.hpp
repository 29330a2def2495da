#pragma once
// Naive reference implementations, written straight from the definitions (direct sums, direct
// DFTs, scatter-form transposed convolution) in double precision, for the layer tests.
#include <array>
#include <cmath>
#include <complex>
#include <vector>

namespace ufno::test {

using cd = std::complex<double>;

struct Dims5 {
  int n, c, x, y, t;
  std::size_t size() const { return std::size_t(n) * c * x * y * t; }
  std::size_t at(int a, int b, int i, int j, int k) const {
    return ((((std::size_t(a) * c + b) * x + i) * y + j) * t + k);
  }
};

// y = W x + b per voxel; W (out, in).
inline std::vector<double> naive_linear(const std::vector<float>& x, Dims5 d,
                                        const std::vector<float>& w, const std::vector<float>& b,
                                        int out) {
  Dims5 o{d.n, out, d.x, d.y, d.t};
  std::vector<double> y(o.size());
  for (int n = 0; n < d.n; ++n)
    for (int co = 0; co < out; ++co)
      for (int i = 0; i < d.x; ++i)
        for (int j = 0; j < d.y; ++j)
          for (int k = 0; k < d.t; ++k) {
            double s = b[co];
            for (int ci = 0; ci < d.c; ++ci)
              s += double(w[co * d.c + ci]) * x[d.at(n, ci, i, j, k)];
            y[o.at(n, co, i, j, k)] = s;
          }
  return y;
}

// Cross-correlation as PyTorch's Conv3d: w (out, in, K, K, K), zero padding p, stride s.
inline std::vector<double> naive_conv3d(const std::vector<float>& x, Dims5 d,
                                        const std::vector<float>& w, const std::vector<float>& b,
                                        int out, int K, int s, int p, Dims5* od) {
  auto ext = [&](int n) { return (n + 2 * p - K) / s + 1; };
  Dims5 o{d.n, out, ext(d.x), ext(d.y), ext(d.t)};
  *od = o;
  std::vector<double> y(o.size());
  for (int n = 0; n < d.n; ++n)
    for (int co = 0; co < out; ++co)
      for (int i = 0; i < o.x; ++i)
        for (int j = 0; j < o.y; ++j)
          for (int k = 0; k < o.t; ++k) {
            double acc = b.empty() ? 0.0 : b[co];
            for (int ci = 0; ci < d.c; ++ci)
              for (int a = 0; a < K; ++a)
                for (int bb = 0; bb < K; ++bb)
                  for (int c = 0; c < K; ++c) {
                    const int xi = i * s - p + a, yj = j * s - p + bb, tk = k * s - p + c;
                    if (xi < 0 || yj < 0 || tk < 0 || xi >= d.x || yj >= d.y || tk >= d.t) continue;
                    acc += double(w[(((std::size_t(co) * d.c + ci) * K + a) * K + bb) * K + c]) *
                           x[d.at(n, ci, xi, yj, tk)];
                  }
            y[o.at(n, co, i, j, k)] = acc;
          }
  return y;
}

// PyTorch's ConvTranspose3d in scatter form: every input voxel adds w (in, out, K, K, K) times
// itself at output position i*s - p + a.
inline std::vector<double> naive_conv_transpose3d(const std::vector<float>& x, Dims5 d,
                                                  const std::vector<float>& w,
                                                  const std::vector<float>& b, int out, int K,
                                                  int s, int p, Dims5* od) {
  auto ext = [&](int n) { return (n - 1) * s - 2 * p + K; };
  Dims5 o{d.n, out, ext(d.x), ext(d.y), ext(d.t)};
  *od = o;
  std::vector<double> y(o.size());
  for (int n = 0; n < d.n; ++n)
    for (int co = 0; co < out; ++co)
      for (int i = 0; i < o.x; ++i)
        for (int j = 0; j < o.y; ++j)
          for (int k = 0; k < o.t; ++k) y[o.at(n, co, i, j, k)] = b.empty() ? 0.0 : b[co];
  for (int n = 0; n < d.n; ++n)
    for (int ci = 0; ci < d.c; ++ci)
      for (int i = 0; i < d.x; ++i)
        for (int j = 0; j < d.y; ++j)
          for (int k = 0; k < d.t; ++k)
            for (int co = 0; co < out; ++co)
              for (int a = 0; a < K; ++a)
                for (int bb = 0; bb < K; ++bb)
                  for (int c = 0; c < K; ++c) {
                    const int xo = i * s - p + a, yo = j * s - p + bb, to = k * s - p + c;
                    if (xo < 0 || yo < 0 || to < 0 || xo >= o.x || yo >= o.y || to >= o.t) continue;
                    y[o.at(n, co, xo, yo, to)] +=
                        double(w[(((std::size_t(ci) * out + co) * K + a) * K + bb) * K + c]) *
                        x[d.at(n, ci, i, j, k)];
                  }
  return y;
}

// The reference SpectralConv3d from its definition: direct DFT at the kept modes, corner weights
// q = 0..3 given as (in, out, mx, my, mt) complex, complex inverse DFT over X and Y, then the
// real inverse over T that uses only the real part of the k_T = 0 (and Nyquist) bins.
inline std::vector<double> naive_spectral_conv(const std::vector<float>& x, Dims5 d, int out,
                                               std::array<int, 3> m,
                                               const std::array<std::vector<cd>, 4>& w) {
  const int X = d.x, Y = d.y, T = d.t, mx = m[0], my = m[1], mt = m[2];
  const double tau = 2 * M_PI;
  std::vector<int> kxs, kys;
  for (int a = 0; a < mx; ++a) kxs.push_back(a);
  for (int a = 0; a < mx; ++a) kxs.push_back(X - mx + a);
  for (int a = 0; a < my; ++a) kys.push_back(a);
  for (int a = 0; a < my; ++a) kys.push_back(Y - my + a);
  Dims5 o{d.n, out, X, Y, T};
  std::vector<double> y(o.size(), 0.0);
  for (int n = 0; n < d.n; ++n) {
    // Forward DFT at the kept modes: F[ci][ix][iy][kt]
    std::vector<cd> F(std::size_t(d.c) * 2 * mx * 2 * my * mt);
    auto fi = [&](int ci, int ix, int iy, int kt) {
      return ((std::size_t(ci) * 2 * mx + ix) * 2 * my + iy) * mt + kt;
    };
    for (int ci = 0; ci < d.c; ++ci)
      for (int ix = 0; ix < 2 * mx; ++ix)
        for (int iy = 0; iy < 2 * my; ++iy)
          for (int kt = 0; kt < mt; ++kt) {
            cd s = 0;
            for (int i = 0; i < X; ++i)
              for (int j = 0; j < Y; ++j)
                for (int k = 0; k < T; ++k) {
                  const double ph = -tau * (double(kxs[ix]) * i / X + double(kys[iy]) * j / Y +
                                            double(kt) * k / T);
                  s += double(x[d.at(n, ci, i, j, k)]) * cd(std::cos(ph), std::sin(ph));
                }
            F[fi(ci, ix, iy, kt)] = s;
          }
    for (int co = 0; co < out; ++co) {
      // Weighted modes G[ix][iy][kt]
      std::vector<cd> G(std::size_t(2 * mx) * 2 * my * mt);
      for (int ix = 0; ix < 2 * mx; ++ix)
        for (int iy = 0; iy < 2 * my; ++iy)
          for (int kt = 0; kt < mt; ++kt) {
            const int q = (ix >= mx ? 1 : 0) + (iy >= my ? 2 : 0);
            const int a = ix % mx, b = iy % my;
            cd s = 0;
            for (int ci = 0; ci < d.c; ++ci)
              s += F[fi(ci, ix, iy, kt)] *
                   w[q][(((std::size_t(ci) * out + co) * mx + a) * my + b) * mt + kt];
            G[(std::size_t(ix) * 2 * my + iy) * mt + kt] = s;
          }
      for (int i = 0; i < X; ++i)
        for (int j = 0; j < Y; ++j) {
          // Complex inverse over X and Y per kept T bin.
          std::vector<cd> Z(mt, 0.0);
          for (int kt = 0; kt < mt; ++kt)
            for (int ix = 0; ix < 2 * mx; ++ix)
              for (int iy = 0; iy < 2 * my; ++iy) {
                const double ph = tau * (double(kxs[ix]) * i / X + double(kys[iy]) * j / Y);
                Z[kt] +=
                    G[(std::size_t(ix) * 2 * my + iy) * mt + kt] * cd(std::cos(ph), std::sin(ph));
              }
          for (int k = 0; k < T; ++k) {
            double v = 0;
            for (int kt = 0; kt < mt; ++kt) {
              const bool self_conjugate = kt == 0 || (T % 2 == 0 && kt == T / 2);
              const double ph = tau * double(kt) * k / T;
              const double re = (Z[kt] * cd(std::cos(ph), std::sin(ph))).real();
              v += self_conjugate ? (kt == 0 ? Z[kt].real() : Z[kt].real() * std::cos(ph)) : 2 * re;
            }
            y[o.at(n, co, i, j, k)] = v / (double(X) * Y * T);
          }
        }
    }
  }
  return y;
}

inline double rel_l2(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

}  // namespace ufno::test
