// The U-Net branch against the PyTorch U_net (eval mode, random BatchNorm statistics), with the
// top level in slabs of several sizes.
#include <catch2/catch.hpp>

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
  for (int rows : {1, 3, 8, 1000}) {
    unet.set_rows_per_slab(rows);
    auto e = test::compare(test::to_host(unet.forward(x)), f.arrays.at("output").data);
    INFO("rows per slab " << rows << ": rel L2 " << e.rel_l2 << " max abs " << e.max_abs);
    CHECK(e.rel_l2 < 1e-6);
    CHECK(e.max_abs <= 1e-5 * e.max_ref);
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
