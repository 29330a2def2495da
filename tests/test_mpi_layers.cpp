// Distributed layers against their single-process versions on every 2-D process grid of 1, 2 and
// 4 ranks: the spectral layer, Conv3d (stride 1 and 2) and ConvTranspose3d on odd extents that
// force uneven blocks, the U-Net, and the padding/crop of the global domain.
#include <catch2/catch.hpp>

#include "decomposition/ProcessGrid.hpp"
#include "io/Hdf5File.hpp"
#include "operators/DistributedConv3d.hpp"
#include "operators/DistributedPadding.hpp"
#include "operators/DistributedSpectralConv.hpp"
#include "operators/DistributedUNet3d.hpp"
#include "reference/DomainPadding.hpp"
#include "reference/SpectralConv3d.hpp"
#include "support/MpiUtil.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;
using dist::PencilLayout;

TEST_CASE("distributed SpectralConv3d equals the single-process layer", "[mpi][spectral]") {
  const std::array<int, 3> n{9, 10, 8}, m{3, 4, 3};
  const int B = 2, ci = 3, co = 4;
  std::vector<HostArray> corners(4);
  for (int q = 0; q < 4; ++q)
    corners[q] = test::random_array({std::size_t(ci), std::size_t(co), 3, 4, 3, 2}, 10 + q);
  reference::SpectralConv3d single(ci, co, m, corners);
  Tensor x = test::to_device(test::random_vector(std::size_t(B) * ci * n[0] * n[1] * n[2], 5),
                             {B, ci, n[0], n[1], n[2]});
  Tensor ref = single.forward(x);
  for (auto parts : test::grids_2d(test::mpi_size())) {
    dist::ProcessGrid grid(MPI_COMM_WORLD, parts);
    for (auto alg : {dist::ExchangeAlgorithm::Alltoallv, dist::ExchangeAlgorithm::PointToPoint}) {
      DistributedSpectralConv3d layer(grid, n, ci, co, m, corners, alg);
      const auto box = layer.fft().real_layout().box(grid.rank());
      Tensor y = layer.forward(test::block_of(x, box));
      const double err = test::global_rel_l2(y, ref, box);
      INFO("grid " << grid.str() << " rel L2 " << err);
      CHECK(err < 1e-6);
    }
  }
}

TEST_CASE("distributed Conv3d and ConvTranspose3d equal the single-process layers", "[mpi][conv]") {
  const std::array<int, 3> n{9, 7, 6};
  const int B = 1, ci = 3, co = 2;
  Tensor x = test::to_device(test::random_vector(std::size_t(B) * ci * n[0] * n[1] * n[2], 8),
                             {B, ci, n[0], n[1], n[2]});
  for (auto parts : test::grids_2d(test::mpi_size())) {
    dist::ProcessGrid grid(MPI_COMM_WORLD, parts);
    const PencilLayout<3> in = PencilLayout<3>::block(n, parts);
    const auto box = in.box(grid.rank());
    for (int stride : {1, 2}) {
      backend::ConvSpec s;
      s.in_channels = ci;
      s.out_channels = co;
      s.stride = stride;
      s.has_bias = true;
      s.activation = Activation::LeakyReLU;
      s.slope = 0.1f;
      Conv3d conv(s, test::random_vector(std::size_t(co) * ci * 27, 9),
                  test::random_vector(co, 10));
      Tensor ref = conv.forward(x);
      const PencilLayout<3> out = PencilLayout<3>::block(conv_output_extents(s, n), parts);
      DistributedConv3d dconv(conv, MPI_COMM_WORLD, in, out, dist::ExchangeAlgorithm::Alltoallv);
      const double err =
          test::global_rel_l2(dconv.forward(test::block_of(x, box)), ref, out.box(grid.rank()));
      INFO("grid " << grid.str() << " stride " << stride << " rel L2 " << err);
      CHECK(err < 1e-6);
    }
    backend::ConvSpec t;
    t.in_channels = ci;
    t.out_channels = co;
    t.kernel = 4;
    t.stride = 2;
    t.padding = 1;
    t.has_bias = true;
    ConvTranspose3d deconv(t, test::random_vector(std::size_t(ci) * co * 64, 11),
                           test::random_vector(co, 12));
    Tensor ref = deconv.forward(x);
    const PencilLayout<3> out =
        PencilLayout<3>::block(conv_output_extents(deconv.spec(), n), parts);
    DistributedConvTranspose3d ddeconv(deconv, MPI_COMM_WORLD, in, out,
                                       dist::ExchangeAlgorithm::PointToPoint);
    const double err =
        test::global_rel_l2(ddeconv.forward(test::block_of(x, box)), ref, out.box(grid.rank()));
    INFO("grid " << grid.str() << " transposed, rel L2 " << err);
    CHECK(err < 1e-6);
  }
}

TEST_CASE("distributed Conv3d through PlaneConv3d equals the single-process layer",
          "[mpi][conv][plane]") {
  // The U-Net output convolution's kind (3x3x3, stride 1, bias, no activation) on a T extent of
  // 32, where the gathered halo blocks go to PlaneConv3d; two cases, odd X and Y.
  const std::array<int, 3> n{9, 7, 32};
  const int B = 2, ci = 5, co = 7;
  Tensor x = test::to_device(test::random_vector(std::size_t(B) * ci * n[0] * n[1] * n[2], 21),
                             {B, ci, n[0], n[1], n[2]});
  backend::ConvSpec s;
  s.in_channels = ci;
  s.out_channels = co;
  s.has_bias = true;
  Conv3d conv(s, test::random_vector(std::size_t(co) * ci * 27, 22), test::random_vector(co, 23));
  const Tensor ref = conv.forward(x);
  for (auto parts : test::grids_2d(test::mpi_size())) {
    dist::ProcessGrid grid(MPI_COMM_WORLD, parts);
    const PencilLayout<3> layout = PencilLayout<3>::block(n, parts);
    DistributedConv3d dconv(conv, MPI_COMM_WORLD, layout, layout,
                            dist::ExchangeAlgorithm::Alltoallv);
    for (bool plane : {true, false}) {
      dconv.set_plane_conv(plane);
      if (plane) CHECK(dconv.plane_conv() == backend::PlaneConv3d::available());
      const double err = test::global_rel_l2(
          dconv.forward(test::block_of(x, layout.box(grid.rank()))), ref, layout.box(grid.rank()));
      INFO("grid " << grid.str() << " plane conv " << dconv.plane_conv() << " rel L2 " << err);
      CHECK(err < 1e-6);
    }
  }
}

TEST_CASE("distributed U-Net equals the single-process U-Net", "[mpi][unet]") {
  const std::string path = test::data_path("unet_small.h5");
  auto f = test::read_all(path);
  test::MapWeights w;
  for (auto& [k, v] : f.arrays) w.arrays["u." + k] = v;
  auto file = h5::File::open_read(path);
  const int width = int(file.numeric_attribute("width")[0]);
  UNet3d unet = UNet3d::load(w, "u", width, 1e-5, 0.1f);
  const auto& in = f.arrays.at("input");
  const std::array<int, 3> n{int(in.shape[2]), int(in.shape[3]), int(in.shape[4])};
  Tensor x = test::to_device(in.data, {int(in.shape[0]), int(in.shape[1]), n[0], n[1], n[2]});
  Tensor ref = unet.forward(x);
  for (auto parts : test::grids_2d(test::mpi_size())) {
    dist::ProcessGrid grid(MPI_COMM_WORLD, parts);
    DistributedUNet3d dunet(unet, MPI_COMM_WORLD, n, parts, dist::ExchangeAlgorithm::Alltoallv);
    const auto box = PencilLayout<3>::block(n, parts).box(grid.rank());
    const double err = test::global_rel_l2(dunet.forward(test::block_of(x, box)), ref, box);
    INFO("grid " << grid.str() << " rel L2 " << err);
    CHECK(err < 1e-6);
  }
}

TEST_CASE("distributed padding and crop act on the global domain", "[mpi][padding]") {
  const std::array<int, 3> n{5, 7, 3}, pad{3, 2, 4};
  const int B = 2, C = 3;
  Tensor cl = test::to_device(test::random_vector(std::size_t(B) * n[0] * n[1] * n[2] * C, 4),
                              {B, n[0], n[1], n[2], C});
  reference::DomainPadding single{pad};
  Tensor ref = single.pad_channel_last(cl);
  Tensor ref_crop = single.crop(ref);
  for (auto parts : test::grids_2d(test::mpi_size())) {
    dist::ProcessGrid grid(MPI_COMM_WORLD, parts);
    DistributedPadding dpad(MPI_COMM_WORLD, n, pad, parts, dist::ExchangeAlgorithm::Alltoallv);
    const auto ub = dpad.unpadded_layout().box(grid.rank()),
               pb = dpad.padded_layout().box(grid.rank());
    Tensor p = dpad.pad(test::block_of(cl, ub, /*channel_last=*/true));
    CHECK(test::global_rel_l2(p, ref, pb) == 0.0);
    CHECK(test::global_rel_l2(dpad.crop(p), ref_crop, ub) == 0.0);
    // The cells of the padded block that the crop keeps (what the head computes), moved to the
    // unpadded blocks, are the crop too; in place they are this rank's unpadded block.
    const dist::Box3 kb = dpad.kept_box();
    const auto pe = pb.extents();
    const auto hp = test::to_host(p);
    std::vector<float> kv;
    for (int b = 0; b < B; ++b)
      for (int c = 0; c < C; ++c)
        for (int i = kb.lo[0]; i < kb.hi[0]; ++i)
          for (int j = kb.lo[1]; j < kb.hi[1]; ++j)
            for (int k = kb.lo[2]; k < kb.hi[2]; ++k)
              kv.push_back(hp[(((std::size_t(b) * C + c) * pe[0] + i) * pe[1] + j) * pe[2] + k]);
    Tensor kept = test::to_device(kv, {B, C, kb.extent(0), kb.extent(1), kb.extent(2)});
    Tensor out = make_tensor("out", {B, C, ub.extent(0), ub.extent(1), ub.extent(2)});
    dpad.crop_kept(kept, out);
    INFO("grid " << grid.str());
    CHECK(test::global_rel_l2(out, ref_crop, ub) == 0.0);
    if (dpad.kept_in_place()) {
      CHECK(kb.extents() == ub.extents());
      CHECK(test::to_host(out) == kv);
    }
    if (test::mpi_size() == 1) CHECK(dpad.kept_in_place());
  }
}
