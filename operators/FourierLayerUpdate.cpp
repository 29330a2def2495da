#include "operators/FourierLayerUpdate.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/Gemm.hpp"
#include "core/Parallel.hpp"
#include "core/Workspace.hpp"
#include "decomposition/ColumnRunCopy.hpp"

namespace ufno {

namespace {

// The U-Net term of a block of columns, channels first: value (c, v) at data[c * channel_stride
// + v], v = column * T + t counted from the block's first column, case b's at data + b *
// case_stride. No data: no U-Net term.
struct UnetTerm {
  const float* data = nullptr;
  long channel_stride = 0, case_stride = 0;
};

// Where a block of columns of `cases` cases lies: x's channel c of case b starts at xb + b *
// x_case + c * x_plane, its T modes at mb + b * m_case + c * m_plane, all at the block's first
// column.
struct ColumnBlock {
  int cases = 1;
  float* xb = nullptr;
  long x_plane = 0, x_case = 0;
  const complexf* mb = nullptr;
  long m_plane = 0, m_case = 0;
};

// x <- act(T^-1(modes) + w(x) + u) on `cols` columns of T values for every channel of every case
// of the block. w null: x is zero on these columns, so w(x) is w's bias, which the Fourier layers
// add through the spectral layer's zero mode: x <- act(T^-1(modes) + u). The streaming plan works
// in cache-sized groups of columns; the whole-tensor plan takes every column of every case at
// once, so each step is one launch (the products, per case, are library calls).
void update_columns(int C, const ColumnBlock& blk, UnetTerm u, long cols,
                    const fft::TruncatedRealDft& t_inverse, const Linear* w, Activation act,
                    long chunk) {
  const int T = t_inverse.length(), m = t_inverse.kept(), B = blk.cases;
  if (cols == 0 || B == 0) return;
  const long R = std::max(1L, execution_plan().cache_blocked ? std::min(chunk, cols) : cols);
  auto tmp = temporary<Kokkos::View<float*, DeviceSpace>>("flu.tmp", long(B) * C * R * T);
  float* t = tmp.data();
  for (long r0 = 0; r0 < cols; r0 += R) {
    const long n = std::min(R, cols - r0) * T;  // values per channel in this group
    if (u.data) {                               // a contiguous run per channel
      const float* ub = u.data + r0 * T;
      const long cs = u.channel_stride, us = u.case_stride;
      ufno::parallel_runs(
          "ufno::flu_take_unet", long(B) * C, n,
          KOKKOS_LAMBDA(const int64_t bc, int64_t v0, int64_t v1) {
            const float* src = ub + (bc / C) * us + (bc % C) * cs;
            for (int64_t v = v0; v < v1; ++v) t[bc * n + v] = src[v];
          });
    }
    for (int b = 0; b < B; ++b) {
      float* tb = t + long(b) * C * n;
      t_inverse.backward_batched(blk.mb + b * blk.m_case + r0 * m, blk.m_plane, tb, n, C, n / T,
                                 u.data ? 1.f : 0.f);
      // The activation goes into the write-back pass, not into the product's epilogue: oneDNN's
      // GELU epilogue costs more than the product itself, and the copy is memory-bound anyway.
      if (w)
        w->apply_columns(blk.xb + b * blk.x_case + r0 * T, blk.x_plane, tb, n, n,
                         /*accumulate=*/true, Activation::None);
    }
    float* xb = blk.xb;
    const long xp = blk.x_plane, xc = blk.x_case;
    ufno::parallel_runs(
        "ufno::flu_write_back", long(B) * C, n,
        KOKKOS_LAMBDA(const int64_t bc, int64_t v0, int64_t v1) {
          activate_run(act, 0.f, t + bc * n + v0, xb + (bc / C) * xc + (bc % C) * xp + r0 * T + v0,
                       v1 - v0);
        });
  }
}

// One case's block (the row-group updates).
void update_columns(int C, float* xb, long x_plane, const complexf* mb, long m_plane, UnetTerm u,
                    long cols, const fft::TruncatedRealDft& t_inverse, const Linear* w,
                    Activation act, long chunk) {
  update_columns(C, ColumnBlock{1, xb, x_plane, 0, mb, m_plane, 0}, u, cols, t_inverse, w, act,
                 chunk);
}

template <class View>
void check_layer(const View& x, const fft::TruncatedRealDft& t_inverse, const Linear& w) {
  const int C = x.extent(1);
  if (int(x.extent(View::rank - 1)) != t_inverse.length() || w.in_channels() != C ||
      w.out_channels() != C)
    throw std::invalid_argument("fourier_layer_update: x " + shape_string(x) +
                                " does not fit the T transform or w");
}

// Columns of T cells in one first-axis row of x, when case b's rows [r0, r0 + R) and their T
// modes (1, C, R, the other axes, m) fit x; -1 when they do not.
template <std::size_t D>
long row_columns(const GridView<D>& x, int b, int r0, const GridView<D, complexf>& t_modes_rows,
                 int m) {
  const int R = t_modes_rows.extent(2);
  bool fits = b >= 0 && b < int(x.extent(0)) && r0 >= 0 && r0 + R <= int(x.extent(2)) &&
              t_modes_rows.extent(0) == 1 && t_modes_rows.extent(1) == x.extent(1) &&
              int(t_modes_rows.extent(D + 1)) == m;
  long row = 1;
  for (std::size_t a = 3; a < D + 1; ++a) {
    row *= x.extent(a);
    fits = fits && t_modes_rows.extent(a) == x.extent(a);
  }
  return fits ? row : -1;
}

template <class View>
bool same_shape(const View& a, const View& b) {
  for (std::size_t i = 0; i < View::rank; ++i)
    if (a.extent(i) != b.extent(i)) return false;
  return true;
}

}  // namespace

template <std::size_t D>
void fourier_layer_update(const GridView<D>& x, const GridView<D, complexf>& t_modes,
                          const fft::TruncatedRealDft& t_inverse, const Linear& w,
                          const GridView<D>& u, Activation act, long columns_per_chunk) {
  check_layer(x, t_inverse, w);
  const int B = x.extent(0), C = x.extent(1), T = x.extent(D + 1), m = t_inverse.kept();
  long cols = 1;  // columns of T cells in one channel of one case
  bool fits = t_modes.extent(0) == x.extent(0) && t_modes.extent(1) == x.extent(1) &&
              int(t_modes.extent(D + 1)) == m && (!u.data() || same_shape(u, x));
  for (std::size_t a = 2; a < D + 1; ++a) {
    cols *= x.extent(a);
    fits = fits && t_modes.extent(a) == x.extent(a);
  }
  if (!fits)
    throw std::invalid_argument("fourier_layer_update: x " + shape_string(x) + ", T modes " +
                                shape_string(t_modes) + ", U-Net branch " + shape_string(u) +
                                " do not fit together");
  const long plane = cols * T;  // one channel of one case
  // The whole-tensor plan takes every case in one block; the streaming plan one case at a time.
  const int fold = execution_plan().cache_blocked ? 1 : B;
  for (int b = 0; b < B; b += fold) {
    const int cases = std::min(fold, B - b);
    UnetTerm ut;
    if (u.data()) ut = {u.data() + long(b) * C * plane, plane, long(C) * plane};
    const ColumnBlock blk{cases,
                          x.data() + long(b) * C * plane,
                          plane,
                          long(C) * plane,
                          t_modes.data() + long(b) * C * cols * m,
                          cols * m,
                          long(C) * cols * m};
    update_columns(C, blk, ut, cols, t_inverse, &w, act, columns_per_chunk);
  }
}

template <std::size_t D>
void fourier_layer_update_rows(const GridView<D>& x, int b, int r0,
                               const GridView<D, complexf>& t_modes_rows,
                               const fft::TruncatedRealDft& t_inverse, const Linear& w,
                               const GridView<D>& u_rows, Activation act, long columns_per_chunk) {
  check_layer(x, t_inverse, w);
  const int C = x.extent(1), X = x.extent(2), T = x.extent(D + 1);
  const int m = t_inverse.kept(), R = t_modes_rows.extent(2);
  const long row = row_columns<D>(x, b, r0, t_modes_rows, m);  // of one first-axis row
  bool fits = row >= 0;
  if (u_rows.data()) {
    fits =
        fits && u_rows.extent(0) == 1 && int(u_rows.extent(1)) == C && int(u_rows.extent(2)) == R;
    for (std::size_t a = 3; a < D + 2; ++a) fits = fits && u_rows.extent(a) == x.extent(a);
  }
  if (!fits)
    throw std::invalid_argument("fourier_layer_update_rows: x " + shape_string(x) + ", rows from " +
                                std::to_string(r0) + ", T modes " + shape_string(t_modes_rows) +
                                ", U-Net rows " + shape_string(u_rows) + " do not fit together");
  const long plane = long(X) * row * T, cols = long(R) * row;
  UnetTerm ut;
  if (u_rows.data()) ut = {u_rows.data(), cols * T, 0};
  update_columns(C, x.data() + long(b) * C * plane + long(r0) * row * T, plane, t_modes_rows.data(),
                 cols * m, ut, cols, t_inverse, &w, act, columns_per_chunk);
}

template <std::size_t D>
void fourier_layer_update_rows(const GridView<D>& x, int b, int r0,
                               const GridView<D, complexf>& t_modes_rows,
                               const fft::TruncatedRealDft& t_inverse, const Linear& w,
                               Activation act, Support support, const dist::Box<D>& inside,
                               long columns_per_chunk) {
  if (support == Support::All) {
    fourier_layer_update_rows<D>(x, b, r0, t_modes_rows, t_inverse, w, GridView<D>(), act,
                                 columns_per_chunk);
    return;
  }
  check_layer(x, t_inverse, w);
  if (support == Support::InputInside && w.has_bias())
    throw std::invalid_argument(
        "fourier_layer_update_rows: InputInside needs w's bias moved into the spectral branch "
        "(w(0) is then 0)");
  const int C = x.extent(1), X = x.extent(2), T = x.extent(D + 1);
  const int m = t_inverse.kept(), R = t_modes_rows.extent(2);
  const std::array<int, D> e = grid_extents<D>(x);
  const long row = row_columns<D>(x, b, r0, t_modes_rows, m);
  bool fits = row >= 0;
  for (std::size_t a = 0; a + 1 < D; ++a)
    fits = fits && (inside.empty() || (inside.lo[a] >= 0 && inside.hi[a] <= e[a]));
  if (!fits)
    throw std::invalid_argument("fourier_layer_update_rows: x " + shape_string(x) + ", rows from " +
                                std::to_string(r0) + ", T modes " + shape_string(t_modes_rows) +
                                ", box " + inside.str() + " do not fit together");
  const long plane = long(X) * row * T, m_plane = long(R) * row * m;
  float* xb = x.data() + long(b) * C * plane;
  const complexf* mb = t_modes_rows.data();
  // Rows of the group inside the box, and its columns in each of them.
  const int in0 = inside.empty() ? r0 : std::max(r0, inside.lo[0]);
  const int in1 = inside.empty() ? r0 : std::min(r0 + R, inside.hi[0]);
  const dist::DeviceColumnRuns runs = dist::kept_device_column_runs<D>(e, inside);
  const long cols = runs.columns(), rows_in = cols > 0 ? std::max(0, in1 - in0) : 0;
  // The box's x in each of those rows, taken before anything is written (InputInside writes
  // every column first), and one row's T modes at a time.
  auto xin = temporary<Kokkos::View<float*, DeviceSpace>>("flu.inside_x", rows_in * C * cols * T);
  auto mc = temporary<Kokkos::View<complexf*, DeviceSpace>>("flu.inside_modes",
                                                            rows_in > 0 ? long(C) * cols * m : 0);
  const long compact = long(C) * cols * T;  // one row's box
  for (long i = 0; i < rows_in; ++i)
    dist::copy_column_runs<float>(xb + (in0 + i) * row * T, plane, T, 0, xin.data() + i * compact,
                                  runs, C, T, true);
  if (support == Support::InputInside)  // every column, w left out (x is zero but in the box)
    update_columns(C, xb + long(r0) * row * T, plane, mb, m_plane, UnetTerm(), long(R) * row,
                   t_inverse, nullptr, act, columns_per_chunk);
  for (long i = 0; i < rows_in; ++i) {  // the box: the whole update on the compact columns
    float* xi = xin.data() + i * compact;
    dist::copy_column_runs<complexf>(const_cast<complexf*>(mb) + (in0 + i - r0) * row * m, m_plane,
                                     m, 0, mc.data(), runs, C, m, true);
    update_columns(C, xi, cols * T, mc.data(), cols * m, UnetTerm(), cols, t_inverse, &w, act,
                   columns_per_chunk);
    dist::copy_column_runs<float>(xb + (in0 + i) * row * T, plane, T, 0, xi, runs, C, T, false);
  }
}

template <std::size_t D>
void fourier_layer_update_box_rows(const GridView<D>& x, int b, int r0,
                                   const GridView<D, complexf>& box_t_modes_rows,
                                   const fft::TruncatedRealDft& box_t_inverse, const Linear& w,
                                   Activation act, const dist::Box<D>& box,
                                   long columns_per_chunk) {
  if (box.empty()) return;  // a rank without interior cells (its caller's T modes are empty)
  const int C = x.extent(1), X = x.extent(2), T = x.extent(D + 1);
  const int m = box_t_inverse.kept(), R = box_t_modes_rows.extent(2);
  const std::array<int, D> e = grid_extents<D>(x);
  bool fits = b >= 0 && b < int(x.extent(0)) && w.in_channels() == C && w.out_channels() == C &&
              box_t_inverse.period() == T && box_t_inverse.length() == box.extent(D - 1) &&
              box_t_modes_rows.extent(0) == 1 && int(box_t_modes_rows.extent(1)) == C &&
              int(box_t_modes_rows.extent(D + 1)) == m && r0 >= 0 && r0 + R <= box.extent(0);
  for (std::size_t a = 0; a < D && fits; ++a)
    fits = box.lo[a] >= 0 && box.hi[a] <= e[a] &&
           (a == 0 || a + 1 == D || int(box_t_modes_rows.extent(a + 2)) == box.extent(a));
  if (!fits)
    throw std::invalid_argument("fourier_layer_update_box_rows: x " + shape_string(x) +
                                ", box rows from " + std::to_string(r0) + ", T modes " +
                                shape_string(box_t_modes_rows) + ", box " + box.str() +
                                " do not fit together");
  long row = 1;  // columns of one first-axis row of x
  for (std::size_t a = 1; a + 1 < D; ++a) row *= e[a];
  const long plane = long(X) * row * T;
  const dist::DeviceColumnRuns runs = dist::kept_device_column_runs<D>(e, box);
  const long cols = runs.columns(), TI = box.extent(D - 1);
  float* xb = x.data() + long(b) * C * plane;
  auto xin = temporary<Kokkos::View<float*, DeviceSpace>>("flu.box_x", long(C) * cols * TI);
  for (int i = 0; i < R; ++i) {  // box row r0 + i is x's row box.lo[0] + r0 + i
    float* xrow = xb + (box.lo[0] + r0 + i) * row * T;
    dist::copy_column_runs<float>(xrow, plane, T, box.lo[D - 1], xin.data(), runs, C, TI, true);
    update_columns(C, xin.data(), cols * TI, box_t_modes_rows.data() + long(i) * cols * m,
                   long(R) * cols * m, UnetTerm(), cols, box_t_inverse, &w, act, columns_per_chunk);
    dist::copy_column_runs<float>(xrow, plane, T, box.lo[D - 1], xin.data(), runs, C, TI, false);
  }
}

template <std::size_t D>
void fourier_layer_update(const GridView<D>& x, const GridView<D, complexf>& t_modes,
                          const fft::TruncatedRealDft& t_inverse, const Linear& w, Activation act,
                          Support support, const dist::Box<D>& inside,
                          const dist::DeviceColumnRuns& runs, long columns_per_chunk) {
  if (support == Support::All) {
    fourier_layer_update<D>(x, t_modes, t_inverse, w, GridView<D>(), act, columns_per_chunk);
    return;
  }
  check_layer(x, t_inverse, w);
  if (support == Support::InputInside && w.has_bias())
    throw std::invalid_argument(
        "fourier_layer_update: InputInside needs w's bias moved into the spectral branch (w(0) "
        "is then 0)");
  const int B = x.extent(0), C = x.extent(1), X = x.extent(2), T = x.extent(D + 1);
  const int m = t_inverse.kept();
  const std::array<int, D> e = grid_extents<D>(x);
  bool fits = t_modes.extent(0) == x.extent(0) && t_modes.extent(1) == x.extent(1) &&
              int(t_modes.extent(D + 1)) == m;
  long row = 1;  // columns of one first-axis row
  for (std::size_t a = 2; a < D + 1; ++a) fits = fits && t_modes.extent(a) == x.extent(a);
  for (std::size_t a = 1; a + 1 < D; ++a) row *= e[a];
  for (std::size_t a = 0; a + 1 < D; ++a)
    fits = fits && (inside.empty() || (inside.lo[a] >= 0 && inside.hi[a] <= e[a]));
  fits = fits && runs.columns() == (inside.empty() ? 0 : dist::column_runs<D>(e, inside).columns());
  if (!fits)
    throw std::invalid_argument("fourier_layer_update: x " + shape_string(x) + ", T modes " +
                                shape_string(t_modes) + ", box " + inside.str() +
                                " do not fit together");
  const long plane = long(X) * row * T, m_plane = long(X) * row * m;
  // The box's columns of every row, channel and case, compact (B C, rows, columns, T), taken
  // before anything is written, and their T modes.
  const int BC = B * C, rows = inside.empty() ? 0 : inside.extent(0);
  const long in_cols = long(rows) * runs.columns();
  auto xin = temporary<Kokkos::View<float*, DeviceSpace>>("flu.inside_x", BC * in_cols * T);
  auto mc = temporary<Kokkos::View<complexf*, DeviceSpace>>("flu.inside_modes", BC * in_cols * m);
  float* xr = x.data() + long(rows ? inside.lo[0] : 0) * row * T;
  if (in_cols > 0) {
    dist::copy_column_runs<float>(xr, plane, row * T, T, 0, xin.data(), runs, BC, rows, T, true);
    dist::copy_column_runs<complexf>(t_modes.data() + long(inside.lo[0]) * row * m, m_plane,
                                     row * m, m, 0, mc.data(), runs, BC, rows, m, true);
  }
  if (support == Support::InputInside) {
    // Every column with w left out (x is zero but in the box): the inverse straight into x, no
    // temporary of the block's size, then the activation in place.
    t_inverse.backward_batched(t_modes.data(), m_plane, x.data(), plane, BC, long(X) * row, 0.f);
    apply_activation(x, act);
  }
  if (in_cols == 0) return;
  // The box: the whole update on the compact columns, then back into x.
  const ColumnBlock blk{B,         xin.data(),  in_cols * T,    C * in_cols * T,
                        mc.data(), in_cols * m, C * in_cols * m};
  update_columns(C, blk, UnetTerm(), in_cols, t_inverse, &w, act, columns_per_chunk);
  dist::copy_column_runs<float>(xr, plane, row * T, T, 0, xin.data(), runs, BC, rows, T, false);
}

template <std::size_t D>
void fourier_layer_update_box(const GridView<D>& x, const GridView<D, complexf>& box_t_modes,
                              const fft::TruncatedRealDft& box_t_inverse, const Linear& w,
                              Activation act, const dist::Box<D>& box,
                              const dist::DeviceColumnRuns& runs, long columns_per_chunk) {
  if (box.empty()) return;  // a rank without interior cells (its T modes are empty)
  const int B = x.extent(0), C = x.extent(1), X = x.extent(2), T = x.extent(D + 1);
  const int m = box_t_inverse.kept(), TI = box.extent(D - 1);
  const std::array<int, D> e = grid_extents<D>(x);
  bool fits = w.in_channels() == C && w.out_channels() == C && box_t_inverse.period() == T &&
              box_t_inverse.length() == TI && box_t_modes.extent(0) == x.extent(0) &&
              int(box_t_modes.extent(1)) == C && int(box_t_modes.extent(D + 1)) == m &&
              runs.columns() == dist::column_runs<D>(e, box).columns();
  for (std::size_t a = 0; a < D && fits; ++a)
    fits = box.lo[a] >= 0 && box.hi[a] <= e[a] &&
           (a + 1 == D || int(box_t_modes.extent(a + 2)) == box.extent(a));
  if (!fits)
    throw std::invalid_argument("fourier_layer_update_box: x " + shape_string(x) + ", T modes " +
                                shape_string(box_t_modes) + ", box " + box.str() +
                                " do not fit together");
  long row = 1;  // columns of one first-axis row of x
  for (std::size_t a = 1; a + 1 < D; ++a) row *= e[a];
  const long plane = long(X) * row * T;
  const int BC = B * C, rows = box.extent(0);
  const long in_cols = long(rows) * runs.columns();
  // The box's cells of every row, channel and case, compact (B C, rows, columns, box T): the
  // box plan's T modes are in that order.
  auto xin = temporary<Kokkos::View<float*, DeviceSpace>>("flu.box_x", BC * in_cols * TI);
  float* xr = x.data() + long(box.lo[0]) * row * T;
  dist::copy_column_runs<float>(xr, plane, row * T, T, box.lo[D - 1], xin.data(), runs, BC, rows,
                                TI, true);
  const ColumnBlock blk{
      B,           xin.data(),     in_cols * TI, C * in_cols * TI, box_t_modes.data(),
      in_cols * m, C * in_cols * m};
  update_columns(C, blk, UnetTerm(), in_cols, box_t_inverse, &w, act, columns_per_chunk);
  dist::copy_column_runs<float>(xr, plane, row * T, T, box.lo[D - 1], xin.data(), runs, BC, rows,
                                TI, false);
}

template void fourier_layer_update<3>(const GridView<3>&, const GridView<3, complexf>&,
                                      const fft::TruncatedRealDft&, const Linear&,
                                      const GridView<3>&, Activation, long);
template void fourier_layer_update<4>(const GridView<4>&, const GridView<4, complexf>&,
                                      const fft::TruncatedRealDft&, const Linear&,
                                      const GridView<4>&, Activation, long);
template void fourier_layer_update_rows<3>(const GridView<3>&, int, int,
                                           const GridView<3, complexf>&,
                                           const fft::TruncatedRealDft&, const Linear&,
                                           const GridView<3>&, Activation, long);
template void fourier_layer_update_rows<4>(const GridView<4>&, int, int,
                                           const GridView<4, complexf>&,
                                           const fft::TruncatedRealDft&, const Linear&,
                                           const GridView<4>&, Activation, long);

template void fourier_layer_update_rows<3>(const GridView<3>&, int, int,
                                           const GridView<3, complexf>&,
                                           const fft::TruncatedRealDft&, const Linear&, Activation,
                                           Support, const dist::Box<3>&, long);
template void fourier_layer_update_rows<4>(const GridView<4>&, int, int,
                                           const GridView<4, complexf>&,
                                           const fft::TruncatedRealDft&, const Linear&, Activation,
                                           Support, const dist::Box<4>&, long);

template void fourier_layer_update_box_rows<3>(const GridView<3>&, int, int,
                                               const GridView<3, complexf>&,
                                               const fft::TruncatedRealDft&, const Linear&,
                                               Activation, const dist::Box<3>&, long);
template void fourier_layer_update_box_rows<4>(const GridView<4>&, int, int,
                                               const GridView<4, complexf>&,
                                               const fft::TruncatedRealDft&, const Linear&,
                                               Activation, const dist::Box<4>&, long);

template void fourier_layer_update<3>(const GridView<3>&, const GridView<3, complexf>&,
                                      const fft::TruncatedRealDft&, const Linear&, Activation,
                                      Support, const dist::Box<3>&, const dist::DeviceColumnRuns&,
                                      long);
template void fourier_layer_update<4>(const GridView<4>&, const GridView<4, complexf>&,
                                      const fft::TruncatedRealDft&, const Linear&, Activation,
                                      Support, const dist::Box<4>&, const dist::DeviceColumnRuns&,
                                      long);
template void fourier_layer_update_box<3>(const GridView<3>&, const GridView<3, complexf>&,
                                          const fft::TruncatedRealDft&, const Linear&, Activation,
                                          const dist::Box<3>&, const dist::DeviceColumnRuns&, long);
template void fourier_layer_update_box<4>(const GridView<4>&, const GridView<4, complexf>&,
                                          const fft::TruncatedRealDft&, const Linear&, Activation,
                                          const dist::Box<4>&, const dist::DeviceColumnRuns&, long);

}  // namespace ufno
