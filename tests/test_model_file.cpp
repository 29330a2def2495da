// Model files whose attributes contradict their weights, or that are damaged, are refused with a
// one-line message naming the file and the attribute or tensor.
#include <catch2/catch.hpp>

#include "io/ModelFile.hpp"
#include "operators/DistributedNet3d.hpp"
#include "support/FileTamper.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

// Loading the model (file + layers) fails with "path: field: ..." containing `what`.
void expect_model_error(const std::string& path, const std::string& field,
                        const std::string& what) {
  try {
    ModelFile mf(path);
    dist::ProcessGrid grid(MPI_COMM_SELF, {1, 1, 1});
    DistributedNet3d net(mf.spec(), mf, grid);
    FAIL("no error raised for " << field << " (" << what << ")");
  } catch (const InputError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.rfind(path + ": " + field, 0) == 0);
    CHECK(m.find(what) != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("the fixture model files load", "[model-file]") {
  ModelFile mf(test::data_path("ufno_small.h5"));
  const ModelSpec& s = mf.spec();
  CHECK(s.architecture == "UFNO");
  CHECK(s.variable == "dP");
  CHECK(s.width == 8);
  CHECK(s.modes == std::array<int, 3>{4, 5, 3});
  CHECK(s.n_fourier == 3);
  CHECK(s.n_ufourier == 3);
  CHECK(s.grid == std::array<int, 3>{16, 24, 8});
  CHECK(s.output_units == "bar");
  CHECK(s.output_scale == Approx(18.772821433027488));
  ModelFile fno(test::data_path("fno_small.h5"));
  CHECK(fno.spec().architecture == "FNO");
  CHECK(fno.spec().n_ufourier == 0);
  CHECK(fno.spec().layers() == 6);
}

TEST_CASE("model files that contradict themselves are refused", "[model-file][errors]") {
  const std::string p = test::copy_fixture(test::data_path("ufno_small.h5"), "bad_model.h5");
  SECTION("width attribute vs weight shapes") {
    test::set_int_attribute(p, "width", {12});
    expect_model_error(p, "conv1.fc0.weight", "does not match");
  }
  SECTION("modes attribute vs spectral weights") {
    test::set_int_attribute(p, "modes", {4, 4, 3});
    expect_model_error(p, "conv1.conv0.weights1", "does not match");
  }
  SECTION("layer counts vs datasets") {
    test::set_int_attribute(p, "n_fourier", {2});
    expect_model_error(p, "conv1.conv5.weights1", "announce only 5 Fourier layers");
    test::set_int_attribute(p, "n_fourier", {4});
    test::set_int_attribute(p, "n_ufourier", {2});
    expect_model_error(p, "conv1.unet3.conv1.0.weight", "plain Fourier layer");
  }
  SECTION("architecture vs U-Fourier layers") {
    test::set_string_attribute(p, "architecture", "FNO");
    expect_model_error(p, "n_ufourier", "contradicts architecture FNO");
  }
  SECTION("grid that the U-Net cannot halve three times") {
    test::set_int_attribute(p, "grid", {17, 24, 8});
    expect_model_error(p, "grid", "divisible by 8");
  }
  SECTION("missing attribute or tensor") {
    test::delete_attribute(p, "hidden");
    expect_model_error(p, "hidden", "attribute is missing");
    test::copy_fixture(test::data_path("ufno_small.h5"), p);
    test::delete_dataset(p, "conv1.unet4.deconv1.0.bias");
    expect_model_error(p, "conv1.unet4.deconv1.0.bias", "dataset is missing");
  }
  SECTION("NaN weight") {
    test::poison_first_value(p, "conv1.fc1.weight", std::nanf(""));
    expect_model_error(p, "conv1.fc1.weight", "NaN or Inf");
  }
  SECTION("sizes that would allocate without bound are refused before allocating") {
    test::set_int_attribute(p, "grid", {1 << 30, 24, 8});
    expect_model_error(p, "grid", "exceeds");
    test::set_int_attribute(p, "grid", {16, 24, 8});
    test::set_int_attribute(p, "padding", {100000, 8, 8});
    expect_model_error(p, "padding", "exceeds");
    test::set_int_attribute(p, "padding", {8, 8, 8});
    test::set_int_attribute(p, "grid", {1 << 16, 1 << 16, 8});
    expect_model_error(p, "grid", "beyond what this build runs");
  }
  SECTION("statistics and weights no trained model has") {
    test::set_int_attribute(p, "batchnorm_eps", {-1});
    expect_model_error(p, "batchnorm_eps", "must be in (0, 1]");
    test::copy_fixture(test::data_path("ufno_small.h5"), p);
    test::poison_first_value(p, "conv1.unet3.conv1.1.running_var", -0.5f);
    expect_model_error(p, "conv1.unet3.conv1.1.running_var", "running variance is negative");
    test::copy_fixture(test::data_path("ufno_small.h5"), p);
    test::poison_first_value(p, "conv1.fc1.weight", 3e38f);
    expect_model_error(p, "conv1.fc1.weight", "beyond any trained model");
  }
  SECTION("not a model file") {
    test::copy_fixture(test::data_path("ufno_small_io.h5"), p);
    expect_model_error(p, "format", "not a ufno model file");
  }
  SECTION("truncated file") {
    test::truncate_file(p, 100000);
    try {
      ModelFile mf(p);
      dist::ProcessGrid grid(MPI_COMM_SELF, {1, 1, 1});
      DistributedNet3d net(mf.spec(), mf, grid);
      FAIL("no error raised");
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).rfind(p + ": ", 0) == 0);
    }
  }
  std::remove(p.c_str());
}
