#pragma once
// Tensors of the network: rank-5 Kokkos Views in PyTorch order (B, C, X, Y, T), row-major, so a
// tensor's data() is the contiguous NCDHW buffer that FFT, convolution and GEMM libraries expect.
// The memory space is a template parameter; DeviceSpace is where the default execution space
// runs its kernels (HostSpace in this build, CudaSpace with a CUDA-enabled Kokkos).
#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ufno {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using DeviceSpace = ExecSpace::memory_space;
// Whether the host can read tensors in place (every build but a GPU one): host-only kernels, such
// as the AVX-512 convolution, may run on them.
inline constexpr bool kHostTensors =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, DeviceSpace>::accessible;
using complexf = Kokkos::complex<float>;

template <class Space = DeviceSpace>
using TensorT = Kokkos::View<float*****, Kokkos::LayoutRight, Space>;
template <class Space = DeviceSpace>
using CTensorT = Kokkos::View<complexf*****, Kokkos::LayoutRight, Space>;

using Tensor = TensorT<>;

// The grid-generic engine's tensors: (B, C) then D grid axes, row-major, for D = 3 (the U-FNO's
// X, Y, T; the same type as Tensor) and D = 4 (the 4-D FNO's A1, A2, A3, T).
template <class T, std::size_t Rank>
struct ViewData {
  using type = typename ViewData<T, Rank - 1>::type*;
};
template <class T>
struct ViewData<T, 0> {
  using type = T;
};
template <std::size_t D, class T = float, class Space = DeviceSpace>
using GridView = Kokkos::View<typename ViewData<T, D + 2>::type, Kokkos::LayoutRight, Space>;

namespace detail {
template <class V, class E, std::size_t... I>
V allocate_grid_view(const std::string& label, bool zero, std::size_t b, std::size_t c, const E& e,
                     std::index_sequence<I...>) {
  if (zero) return V(label, b, c, std::size_t(e[I])...);
  return V(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), b, c, std::size_t(e[I])...);
}
}  // namespace detail

// A (b, c, e...) grid view, zero-filled or not (for outputs the caller writes in full).
template <std::size_t D, class T = float>
GridView<D, T> make_grid_view(const std::string& label, std::size_t b, std::size_t c,
                              const std::array<int, D>& e, bool zero = true) {
  return detail::allocate_grid_view<GridView<D, T>>(label, zero, b, c, e,
                                                    std::make_index_sequence<D>());
}

namespace detail {
template <class V, class T, class E, std::size_t... I>
V grid_view_on(T* data, std::size_t b, std::size_t c, const E& e, std::index_sequence<I...>) {
  return V(data, b, c, std::size_t(e[I])...);
}
}  // namespace detail

// An unmanaged (b, c, e...) grid view on memory the caller owns (at least b c prod(e) elements).
template <std::size_t D, class T>
GridView<D, T> grid_view_on(T* data, std::size_t b, std::size_t c, const std::array<int, D>& e) {
  return detail::grid_view_on<GridView<D, T>>(data, b, c, e, std::make_index_sequence<D>());
}

// The grid extents of a (B, C, grid...) view.
template <std::size_t D, class View>
std::array<int, D> grid_extents(const View& v) {
  static_assert(View::rank == D + 2, "grid_extents: the view is not (B, C) plus D grid axes");
  std::array<int, D> e{};
  for (std::size_t a = 0; a < D; ++a) e[a] = int(v.extent(a + 2));
  return e;
}

// "(2,3,4,5,6)" for a view of any rank.
template <class View>
std::string shape_string(const View& v) {
  std::string r = "(";
  for (std::size_t i = 0; i < View::rank; ++i)
    r += std::to_string(v.extent(i)) + (i + 1 < View::rank ? "," : ")");
  return r;
}

using CTensor = CTensorT<>;

using Shape5 = std::array<int, 5>;

template <class View>
Shape5 shape_of(const View& v) {
  return {int(v.extent(0)), int(v.extent(1)), int(v.extent(2)), int(v.extent(3)), int(v.extent(4))};
}

inline Tensor make_tensor(const std::string& label, const Shape5& s) {
  return Tensor(label, s[0], s[1], s[2], s[3], s[4]);
}

inline CTensor make_ctensor(const std::string& label, const Shape5& s) {
  return CTensor(label, s[0], s[1], s[2], s[3], s[4]);
}

// Tensors whose every element the caller writes before reading: no zero-fill. Kokkos initialises
// Views by default, a pass over the memory that cost as much as the layers' own copies here.
inline Tensor empty_tensor(const std::string& label, std::size_t b, std::size_t c, std::size_t x,
                           std::size_t y, std::size_t t) {
  return Tensor(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), b, c, x, y, t);
}

inline CTensor empty_ctensor(const std::string& label, std::size_t b, std::size_t c, std::size_t x,
                             std::size_t y, std::size_t t) {
  return CTensor(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), b, c, x, y, t);
}

inline std::string to_string(const Shape5& s) {
  std::string r = "(";
  for (int i = 0; i < 5; ++i) r += std::to_string(s[i]) + (i < 4 ? "," : ")");
  return r;
}

// The index ranges of the MDRange kernels: rightmost index fastest, as the views are row-major
// (LayoutRight). Kokkos' own default on CUDA is Iterate::Left, which would put threadIdx.x on the
// batch and channel axes and make the loads of a warp land 32 rows apart; every MDRangePolicy of
// the tree is this type (ufno::parallel_for takes no other; tests/test_gpu_launches.cpp).
template <unsigned R>
using RowMajorRange =
    Kokkos::MDRangePolicy<ExecSpace,
                          Kokkos::Rank<R, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;

// Index range over all five dimensions, for MDRange kernels.
template <class View>
RowMajorRange<5> range5(const View& v) {
  return {{0, 0, 0, 0, 0},
          {int64_t(v.extent(0)), int64_t(v.extent(1)), int64_t(v.extent(2)), int64_t(v.extent(3)),
           int64_t(v.extent(4))}};
}

// A device copy of a small host table (indices, signs, run starts), labelled for Kokkos' tools;
// on the host it is a copy too, so the table may go away after the call.
template <class T>
Kokkos::View<T*, DeviceSpace> device_copy_of(const std::vector<T>& v, const std::string& label) {
  Kokkos::View<T*, DeviceSpace> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), v.size());
  Kokkos::deep_copy(
      d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
  return d;
}

}  // namespace ufno
