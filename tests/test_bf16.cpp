// bf16 (RunOptions::bf16, --bf16 / UFNO_BF16=1): the small U-FNO with its U-Net convolutions in
// bfloat16 against the same model in float32, on every 2-D process grid; the FNO, which has no
// convolutions, unchanged; and the refusal where the CPU has no bf16 (forced through the test
// hook of core/Bf16.hpp on a CPU that has it): one line naming the flag or the variable.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>

#include "core/Bf16.hpp"
#include "io/ModelFile.hpp"
#include "operators/DistributedNet3d.hpp"
#include "operators/backend/ConvPrimitive.hpp"
#include "runtime/RunOptionsFromEnvironment.hpp"
#include "support/MpiUtil.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;

namespace {

// Relative L2 difference of two ranks' blocks of the same shape, over all ranks.
double rel_l2_all_ranks(const Tensor& got, const Tensor& ref) {
  const auto g = test::to_host(got), r = test::to_host(ref);
  REQUIRE(g.size() == r.size());
  double sums[2] = {0, 0};
  for (std::size_t i = 0; i < g.size(); ++i) {
    sums[0] += (double(g[i]) - r[i]) * (double(g[i]) - r[i]);
    sums[1] += double(r[i]) * r[i];
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(sums[0] / sums[1]);
}

// The bf16 model against the float32 one. Each product of a convolution rounds both operands to
// bf16 (relative 2^-9 each, so at most 2^-8 per product, float32 sums); random signs average
// most of it out, but the error passes through a U-Net's chain of nine convolutions (five down,
// three transposed up, the output one), where it may add up: nine in series at 2^-8 each bound
// it by about 10 x 2^-8 = 3.9e-2 (the U-Fourier layers then add it to the float32 branch);
// a wrong result is O(1). The lower bound shows bf16 in effect: float32 alone reorders sums to
// about 1e-6.
void check_bf16_model(const std::string& model_name, const std::string& io_name, bool convs) {
  ModelFile mf(test::data_path(model_name));
  const auto io = test::read_all(test::data_path(io_name));
  const auto& in = io.arrays.at("input");
  Tensor x = test::to_device(in.data, {int(in.shape[0]), int(in.shape[1]), int(in.shape[2]),
                                       int(in.shape[3]), int(in.shape[4])});
  RunOptions bf16;
  bf16.bf16 = true;
  for (auto parts : test::grids_2d(test::mpi_size())) {
    dist::ProcessGrid grid(MPI_COMM_WORLD, parts);
    DistributedNet3d net32(mf.spec(), mf, grid);
    DistributedNet3d net16(mf.spec(), mf, grid, dist::ExchangeAlgorithm::Alltoallv, bf16);
    const auto box = net32.input_layout().box(grid.rank());
    const Tensor xb = test::block_of(x, box, /*channel_last=*/true);
    const Tensor y32 = net32.forward(xb), y16 = net16.forward(xb);
    const double err = rel_l2_all_ranks(y16, y32);
    INFO(model_name << " grid " << grid.str() << ": bf16 against float32, relative L2 " << err);
    if (convs) {
      CHECK(err > 1e-5);
      CHECK(err < 10 * std::ldexp(1.0, -8));
    } else {
      CHECK(err == 0);  // nothing to round: an FNO has no convolutions
    }
  }
}

// Hides bf16 from the capability check for its lifetime.
struct HiddenBf16 {
  HiddenBf16() { backend::hide_bf16_for_testing(true); }
  ~HiddenBf16() { backend::hide_bf16_for_testing(false); }
};

std::string message_of(bool flag) {
  try {
    run_options_from_environment(1, flag);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("the bf16 U-FNO stays within bf16 rounding of float32", "[mpi][bf16]") {
  if (!backend::ConvPrimitives<backend::Default>::kBf16 || !backend::bf16_supported()) {
    WARN(
        "this CPU has no AVX512_BF16 / AMX-BF16: the bf16 model is not tested here "
        "(CTest shows bf16_numerics_tested skipped)");
    return;
  }
  check_bf16_model("ufno_small.h5", "ufno_small_io.h5", true);
}

TEST_CASE("the FNO, without convolutions, is the same with bf16", "[mpi][bf16]") {
  if (!backend::ConvPrimitives<backend::Default>::kBf16 || !backend::bf16_supported())
    return;  // as above
  check_bf16_model("fno_small.h5", "fno_small_io.h5", false);
}

TEST_CASE("bf16 is refused in one line where the CPU has none", "[mpi][bf16]") {
  unsetenv("UFNO_BF16");
  CHECK_FALSE(run_options_from_environment(1, false).bf16);
  HiddenBf16 hidden;
  CHECK_FALSE(backend::bf16_supported());
  // A GPU build says first that bf16 is a CPU option.
  const std::string why =
      backend::ConvPrimitives<backend::Default>::kBf16
          ? "this CPU has neither AVX512_BF16 nor AMX-BF16, which bfloat16 needs; run without it"
          : "bfloat16 is a CPU option; this build runs the models on a GPU (its faster mode is "
            "--tf32)";
  const std::string flag = message_of(true);
  CHECK(flag == "--bf16: " + why);
  CHECK(flag.find('\n') == std::string::npos);
  setenv("UFNO_BF16", "1", 1);
  CHECK(message_of(false) == "UFNO_BF16: " + why);
  CHECK(message_of(true).rfind("--bf16: ", 0) == 0);  // the flag is named when given
  setenv("UFNO_BF16", "yes", 1);
  CHECK(message_of(false) == "UFNO_BF16: yes: is neither 0 (off) nor 1 (on)");
  setenv("UFNO_BF16", "0", 1);
  CHECK(message_of(false) == "(accepted)");  // off: nothing to refuse
  unsetenv("UFNO_BF16");
  // A model built with bf16 directly is refused as well.
  ModelFile mf(test::data_path("ufno_small.h5"));
  dist::ProcessGrid grid(MPI_COMM_WORLD, test::grids_2d(test::mpi_size()).front());
  RunOptions bf16;
  bf16.bf16 = true;
  CHECK_THROWS_WITH(DistributedNet3d(mf.spec(), mf, grid, dist::ExchangeAlgorithm::Alltoallv, bf16),
                    Catch::Contains("AVX512_BF16"));
}
