// The U-Net branch against the PyTorch U_net (eval mode, random BatchNorm statistics), with the
// top level in slabs of several sizes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "io/Hdf5File.hpp"
#include "operators/UNet3d.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

TEST_CASE("UNet3d matches the PyTorch U_net", "[unet][parity]") {
  const std::string path = test::data_path("unet_small.h5");
  auto f = test::read_all(path);
  auto file = h5::File::open_read(path);
  const int width = int(file.numeric_attribute("width")[0]);
  const double eps = file.numeric_attribute("batchnorm_eps")[0];
  const float slope = float(file.numeric_attribute("leaky_relu_slope")[0]);
  // The fixture stores the U_net's keys without a prefix; load under an empty one.
  test::MapWeights w;
  for (auto& [k, v] : f.arrays) w.arrays["u." + k] = v;
  UNet3d unet = UNet3d::load(w, "u", width, eps, slope);
  const auto& in = f.arrays.at("input");
  const Tensor x = test::to_device(in.data, {int(in.shape[0]), int(in.shape[1]), int(in.shape[2]),
                                             int(in.shape[3]), int(in.shape[4])});
  // The top level runs in slabs of X rows: one row, an odd count that leaves a partial last
  // slab, the default, and more rows than the grid has must all give the reference.
  // Both kernels of the output convolution: oneDNN and, where the CPU has AVX-512, PlaneConv3d.
  for (bool plane : {false, true})
    for (int rows : {1, 3, 8, 1000}) {
      unet.set_plane_conv(plane);
      unet.set_rows_per_slab(rows);
      auto e = test::compare(test::to_host(unet.forward(x)), f.arrays.at("output").data);
      INFO("plane conv " << unet.plane_conv() << ", rows per slab " << rows << ": rel L2 "
                         << e.rel_l2 << " max abs " << e.max_abs);
      CHECK(e.rel_l2 < 1e-6);
      CHECK(e.max_abs <= 1e-5 * e.max_ref);
    }
}

TEST_CASE("UNet3d streams its output rows and no longer reads the rows it has handed out",
          "[unet]") {
  const std::string path = test::data_path("unet_small.h5");
  auto f = test::read_all(path);
  auto file = h5::File::open_read(path);
  test::MapWeights w;
  for (auto& [k, v] : f.arrays) w.arrays["u." + k] = v;
  UNet3d unet = UNet3d::load(w, "u", int(file.numeric_attribute("width")[0]),
                             file.numeric_attribute("batchnorm_eps")[0],
                             float(file.numeric_attribute("leaky_relu_slope")[0]));
  const auto& in = f.arrays.at("input");
  const auto& ref = f.arrays.at("output").data;
  const int B = in.shape[0], C = in.shape[1], X = in.shape[2], Y = in.shape[3], T = in.shape[4];
  for (int rows : {1, 3, 8}) {
    unet.set_rows_per_slab(rows);
    unet.set_plane_conv(rows != 3);  // both kernels of the output convolution
    const Tensor x = test::to_device(in.data, {B, C, X, Y, T});
    std::vector<float> got(ref.size(), std::nanf(""));
    std::vector<int> seen(std::size_t(B) * X, 0);
    unet.forward_streamed(x, [&](int b, int r0, const Tensor& o) {
      const int R = o.extent(2), Co = o.extent(1);
      REQUIRE(int(o.extent(3)) == Y);
      REQUIRE(int(o.extent(4)) == T);
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o);
      for (int i = 0; i < R; ++i) {
        seen[std::size_t(b) * X + r0 + i] += 1;
        for (int c = 0; c < Co; ++c)
          for (int y = 0; y < Y; ++y)
            for (int t = 0; t < T; ++t)
              got[((((std::size_t(b) * Co + c) * X + r0 + i) * Y + y) * T) + t] = h(0, c, i, y, t);
      }
      // The sink may overwrite the input rows it was given: poison them.
      auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
      for (int c = 0; c < C; ++c)
        for (int i = 0; i < R; ++i)
          for (int y = 0; y < Y; ++y)
            for (int t = 0; t < T; ++t) hx(b, c, r0 + i, y, t) = std::nanf("");
      Kokkos::deep_copy(x, hx);
    });
    INFO("rows per slab " << rows);
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    auto e = test::compare(got, ref);
    CHECK(e.rel_l2 < 1e-6);  // a NaN anywhere fails this
  }
}

TEST_CASE("UNet3d rejects extents not divisible by 8", "[unet]") {
  auto f = test::read_all(test::data_path("unet_small.h5"));
  test::MapWeights w;
  for (auto& [k, v] : f.arrays) w.arrays["u." + k] = v;
  auto file = h5::File::open_read(test::data_path("unet_small.h5"));
  UNet3d unet = UNet3d::load(w, "u", int(file.numeric_attribute("width")[0]), 1e-5, 0.1f);
  Tensor x("x", 1, int(file.numeric_attribute("width")[0]), 12, 16, 8);
  CHECK_THROWS_WITH(unet.forward(x), Catch::Contains("divisible by 8"));
}
