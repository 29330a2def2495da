// ufno_predict end to end: a tensor run equals the PyTorch fixture, a case run writes SG and dP,
// and every kind of bad input exits with code 2, one stderr line naming file and field, and no
// output file (nor temporary) left behind.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include "core/Bf16.hpp"
#include "io/Hdf5File.hpp"
#include "support/CaseWriter.hpp"
#include "support/FileTamper.hpp"
#include "support/RunCommand.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;
using test::Run;
namespace fs = std::filesystem;

namespace {

Run predict(const std::string& args) {
  return test::run_command(std::string(UFNO_PREDICT_EXE) + " " + args);
}

// Nothing named out.h5 or out.h5.tmp.* remains in the working directory.
bool no_output_left(const std::string& out) {
  for (const auto& e : fs::directory_iterator("."))
    if (e.path().filename().string().rfind(out, 0) == 0) return false;
  return true;
}

void expect_failure(const std::string& args, const std::string& file, const std::string& field,
                    const std::string& what) {
  fs::remove("out_bad.h5");
  Run r = predict(args + " --out out_bad.h5");
  INFO("args: " << args << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(file) != std::string::npos);
  CHECK(r.err.find(field) != std::string::npos);
  CHECK(r.err.find(what) != std::string::npos);
  CHECK(no_output_left("out_bad.h5"));
}

}  // namespace

TEST_CASE("ufno_predict --tensor reproduces the PyTorch output", "[cli]") {
  const std::string model = test::data_path("ufno_small.h5"),
                    io = test::data_path("ufno_small_io.h5");
  fs::remove("out_tensor.h5");
  Run r = predict("--model " + model + " --tensor " + io + " --out out_tensor.h5 --threads 1");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("ufno_predict: 2 case(s) dP") == 0);
  CHECK(r.out.find(" s (load") != std::string::npos);
  auto f = h5::File::open_read("out_tensor.h5");
  std::vector<std::size_t> shape;
  auto dp = f.read_floats("dP", &shape);
  CHECK(shape == std::vector<std::size_t>{2, 8, 16, 24});  // (B, T, X, Y)
  CHECK(f.string_attribute("dP", "units").value_or("") == "bar");
  CHECK(!f.has_dataset("SG"));
  // The fixture is (B, X, Y, T): transpose to compare.
  // The fixture is the unmasked network output; ufno_predict writes 0 in inactive cells
  // (input channel 0 exactly 0), so the reference is masked the same way.
  const auto fixture = test::read_all(io).arrays;
  const auto& ref = fixture.at("output").data;
  const auto& in = fixture.at("input").data;  // (B, X, Y, T, 12)
  std::vector<float> ref_t(ref.size());
  std::size_t inactive = 0;
  for (int b = 0; b < 2; ++b)
    for (int x = 0; x < 16; ++x)
      for (int y = 0; y < 24; ++y)
        for (int t = 0; t < 8; ++t) {
          const bool active = in[((((b * 16 + x) * 24 + y) * 8 + t) * 12)] != 0.0f;
          inactive += !active;
          ref_t[((b * 8 + t) * 16 + x) * 24 + y] =
              active ? ref[((b * 16 + x) * 24 + y) * 8 + t] : 0.0f;
        }
  CHECK(inactive > 0);  // the fixture has inactive cells, so the masking is exercised
  auto e = test::compare(dp, ref_t);
  CHECK(e.rel_l2 <= 1e-5);
  CHECK(e.max_abs <= 1e-5 * e.max_ref);
  fs::remove("out_tensor.h5");
}

TEST_CASE("ufno_predict --tensor runs a time-first (TXYZ) model in its own order", "[cli]") {
  // The published-order GLOBAL model of the nested fixture on the site's GLOBAL input permuted
  // (0, 4, 1, 2, 3, 5) to (1, T, X, Y, Z, 8), as the reference feeds it: the output is
  // (1, T, X, Y, Z), the chain's GLOBAL dP of nested/published/expected.h5.
  const std::string dir = test::data_path("nested/");
  std::vector<std::size_t> s;
  const auto site = h5::File::open_read(dir + "site.h5").read_floats("GLOBAL/input", &s);
  REQUIRE(s == std::vector<std::size_t>{1, 10, 12, 2, 24, 8});
  std::vector<float> x(site.size());
  for (std::size_t i = 0; i < 10; ++i)
    for (std::size_t j = 0; j < 12; ++j)
      for (std::size_t k = 0; k < 2; ++k)
        for (std::size_t t = 0; t < 24; ++t)
          for (std::size_t c = 0; c < 8; ++c)
            x[((((t * 10 + i) * 12 + j) * 2 + k) * 8) + c] =
                site[((((i * 12 + j) * 2 + k) * 24 + t) * 8) + c];
  {
    auto f = h5::File::create("txyz_in.h5");
    f.write_floats("input", {1, 24, 10, 12, 2, 8}, x.data());
  }
  fs::remove("txyz_out.h5");
  Run r = predict("--model " + dir + "published/models/GLOBAL_dP.h5 --tensor txyz_in.h5" +
                  " --out txyz_out.h5 --threads 1");
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::vector<std::size_t> got_shape, want_shape;
  const auto got = h5::File::open_read("txyz_out.h5").read_floats("dP", &got_shape);
  const auto want =
      h5::File::open_read(dir + "published/expected.h5").read_floats("GLOBAL/dP", &want_shape);
  CHECK(got_shape == std::vector<std::size_t>{1, 24, 10, 12, 2});
  CHECK(want_shape == std::vector<std::size_t>{24, 10, 12, 2});
  const auto e = test::compare(got, want);
  CHECK(e.rel_l2 <= 1e-5);
  fs::remove("txyz_in.h5");
  fs::remove("txyz_out.h5");
}

TEST_CASE("ufno_predict writes SG within [0, 1 - SWI] and 0 outside the formation", "[cli][kpi]") {
  // fno_small predicts SG with random weights: its raw output leaves [0, 1 - SWI] on both sides,
  // so the clamp is exercised; the fixture's input has random SWI channels and inactive rows.
  const std::string io = test::data_path("fno_small_io.h5");
  fs::remove("out_sg.h5");
  Run r = predict("--model " + test::data_path("fno_small.h5") + " --tensor " + io +
                  " --out out_sg.h5 --threads 1");
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto f = h5::File::open_read("out_sg.h5");
  const auto sg = f.read_floats("SG", nullptr);  // (B, T, X, Y)
  const auto fixture = test::read_all(io).arrays;
  const auto& raw = fixture.at("output").data;  // (B, X, Y, T), unbounded network output
  const auto& in = fixture.at("input").data;    // (B, X, Y, T, 12)
  const int B = 2, X = 16, Y = 24, T = 8;
  std::size_t below = 0, above = 0, inactive = 0, bad = 0;
  double max_err = 0;
  for (int b = 0; b < B; ++b)
    for (int x = 0; x < X; ++x)
      for (int y = 0; y < Y; ++y)
        for (int t = 0; t < T; ++t) {
          const std::size_t cell = ((std::size_t(b) * X + x) * Y + y) * T + t;
          const float* ch = &in[cell * 12];
          const float v = sg[((std::size_t(b) * T + t) * X + x) * Y + y];
          const double hi = 1.0 - (0.1 + 0.2 * ch[7]);
          if (ch[0] == 0.0f) {
            inactive++;
            bad += v != 0.0f;
            continue;
          }
          below += raw[cell] < 0;
          above += raw[cell] > hi;
          bad += !(v >= 0.0f && v <= hi + 1e-6);
          max_err = std::max(max_err, std::abs(v - std::clamp(double(raw[cell]), 0.0, hi)));
        }
  CHECK(below > 0);  // the fixture breaks both bounds, so both are exercised
  CHECK(above > 0);
  CHECK(inactive > 0);
  CHECK(bad == 0);
  CHECK(max_err <= 1e-4);
  fs::remove("out_sg.h5");
}

TEST_CASE("ufno_predict --case with an SG and a dP model writes both fields", "[cli]") {
  test::write_case("cli_case.h5", test::valid_case(16, 24));
  fs::remove("out_case.h5");
  Run r = predict("--model " + test::data_path("ufno_small.h5") + " --model " +
                  test::data_path("fno_small.h5") + " --case cli_case.h5 --out out_case.h5");
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto f = h5::File::open_read("out_case.h5");
  CHECK(f.shape("SG") == std::vector<std::size_t>{1, 8, 16, 24});
  CHECK(f.shape("dP") == std::vector<std::size_t>{1, 8, 16, 24});
  CHECK(f.string_attribute("SG", "units").value_or("") == "1");
  CHECK(f.shape("TIMES") == std::vector<std::size_t>{8});
  fs::remove("out_case.h5");
}

TEST_CASE("ufno_predict refuses bad input cleanly", "[cli][errors]") {
  const std::string model = test::data_path("ufno_small.h5");
  const std::string io = test::data_path("ufno_small_io.h5");
  SECTION("execution options out of range") {
    const std::string run = "--model " + model + " --tensor " + io;
    expect_failure(run + " --plan gpu", "--plan", "gpu", "not in");
    expect_failure(run + " --cases-per-pass 0", "--cases-per-pass", "0", "not in range");
    expect_failure(run + " --cases-per-pass 1e9", "--cases-per-pass", "1e9", "");
    expect_failure("--tf32=maybe " + run, "--tf32", "maybe", "");
    expect_failure("--plan whole-tensor --plan streaming " + run, "--plan", "", "");
  }
  SECTION("an unknown execution plan in the environment") {
    fs::remove("out_bad.h5");
    Run r = test::run_command("UFNO_PLAN=fastest " + std::string(UFNO_PREDICT_EXE) +
                              " --threads 1 --model " + model + " --tensor " + io +
                              " --out out_bad.h5");
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("UFNO_PLAN: fastest: is neither streaming nor whole-tensor") !=
          std::string::npos);
    CHECK(no_output_left("out_bad.h5"));
  }
  SECTION("an output that cannot be written is named as given, not by its temporary name") {
    Run r =
        predict("--threads 1 --model " + model + " --tensor " + io + " --out no_such_dir/pred.h5");
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("no_such_dir/pred.h5: cannot be created") != std::string::npos);
    CHECK(r.err.find(".tmp.") == std::string::npos);
  }
  SECTION("an on/off switch in the environment that is neither 0 nor 1") {
    for (const char* var :
         {"UFNO_TF32", "UFNO_PROFILE", "UFNO_PLANE_CONV", "UFNO_HEAP_REUSE", "UFNO_BF16"}) {
      fs::remove("out_bad.h5");
      Run r = test::run_command(std::string(var) + "=yes " + std::string(UFNO_PREDICT_EXE) +
                                " --threads 1 --model " + model + " --tensor " + io +
                                " --out out_bad.h5");
      INFO(var << ": " << r.err);
      CHECK(r.code == 2);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.find(std::string(var) + ": yes: is neither 0 (off) nor 1 (on)") !=
            std::string::npos);
      CHECK(no_output_left("out_bad.h5"));
    }
  }
  SECTION("a Winograd tiling in the environment that is none of 1, x and 0") {
    fs::remove("out_bad.h5");
    Run r = test::run_command("UFNO_WINOGRAD=yes " + std::string(UFNO_PREDICT_EXE) +
                              " --threads 1 --model " + model + " --tensor " + io +
                              " --out out_bad.h5");
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("UFNO_WINOGRAD: yes: is neither 1 (X and Y tiles), x (X tiles) nor 0 "
                     "(none)") != std::string::npos);
    CHECK(no_output_left("out_bad.h5"));
  }
  SECTION("missing model file") {
    expect_failure("--model nope.h5 --tensor " + io, "nope.h5", "--model", "does not exist");
  }
  SECTION("tensor file without /input") {
    expect_failure("--model " + model + " --tensor " + model, model, "input", "dataset is missing");
  }
  SECTION("tensor of the wrong shape") {
    const std::string spec = test::data_path("spectral_small.h5");
    expect_failure("--model " + model + " --tensor " + spec, spec, "input",
                   "but the model expects");
  }
  SECTION("NaN in the tensor") {
    test::copy_fixture(io, "nan_input.h5");
    test::poison_first_value("nan_input.h5", "input", std::nanf(""));
    expect_failure("--model " + model + " --tensor nan_input.h5", "nan_input.h5", "input",
                   "NaN or Inf");
    fs::remove("nan_input.h5");
  }
  SECTION("truncated tensor file") {
    test::copy_fixture(io, "cut_input.h5");
    test::truncate_file("cut_input.h5", 4096);
    expect_failure("--model " + model + " --tensor cut_input.h5", "cut_input.h5", "input", "");
    fs::remove("cut_input.h5");
  }
  SECTION("case with negative permeability") {
    auto c = test::valid_case(16, 24);
    c["PERMX"].values[30] = -5;
    test::write_case("neg_case.h5", c);
    expect_failure("--model " + model + " --case neg_case.h5", "neg_case.h5", "PERMX",
                   "negative permeability");
    fs::remove("neg_case.h5");
  }
  SECTION("case with porosity above 1") {
    auto c = test::valid_case(16, 24);
    c["PORO"].values[3] = 1.5;
    test::write_case("poro_case.h5", c);
    expect_failure("--model " + model + " --case poro_case.h5", "poro_case.h5", "PORO",
                   "outside (0, 1]");
    fs::remove("poro_case.h5");
  }
  SECTION("model whose attributes contradict its weights") {
    test::copy_fixture(model, "bad_width.h5");
    test::set_int_attribute("bad_width.h5", "width", {9});
    expect_failure("--model bad_width.h5 --tensor " + io, "bad_width.h5", "conv1.fc0.weight",
                   "does not match");
    fs::remove("bad_width.h5");
  }
  SECTION("two models for the same variable") {
    expect_failure("--model " + model + " --model " + model + " --tensor " + io, model, "variable",
                   "two models");
  }
  SECTION("physically impossible scalars and cells") {
    for (const auto& [field, value, what] : {std::tuple{"TEMP", 1e300, "physically impossible"},
                                             {"INJ_RATE", -1.0, "physically impossible"},
                                             {"PRESSURE", 1e300, "physically impossible"},
                                             {"VG_LAMBDA", 1e300, "physically impossible"}}) {
      auto c = test::valid_case(16, 24);
      c[field].values[0] = value;
      test::write_case("absurd_case.h5", c);
      expect_failure("--model " + model + " --case absurd_case.h5", "absurd_case.h5", field, what);
    }
    auto c = test::valid_case(16, 24);
    c["PERMX"].values[5] = 1e30;
    test::write_case("absurd_case.h5", c);
    expect_failure("--model " + model + " --case absurd_case.h5", "absurd_case.h5", "PERMX",
                   "radial cell 6");
    fs::remove("absurd_case.h5");
  }
  SECTION("a FIFO as the case does not hang") {
    fs::remove("fifo_case.h5");
    REQUIRE(std::system("mkfifo fifo_case.h5") == 0);
    expect_failure("--model " + model + " --case fifo_case.h5", "fifo_case.h5", "",
                   "is not a regular file");
    fs::remove("fifo_case.h5");
  }
  SECTION("a tensor value no encoding gives (it would overflow inside the network)") {
    test::copy_fixture(io, "huge_input.h5");
    test::poison_first_value("huge_input.h5", "input", 3e38f);
    expect_failure("--model " + model + " --tensor huge_input.h5", "huge_input.h5", "input",
                   "far outside the encoded range");
    fs::remove("huge_input.h5");
  }
  SECTION("a model whose output is physically impossible") {
    // Weights at the loader's limit chained through every layer give dP of about 1e6 bar.
    test::copy_fixture(model, "huge_model.h5");
    for (const char* w : {"conv1.w0.weight", "conv1.w1.weight", "conv1.w2.weight",
                          "conv1.w3.weight", "conv1.w4.weight", "conv1.w5.weight",
                          "conv1.fc0.weight", "conv1.fc1.weight", "conv1.fc2.weight"})
      test::poison_first_value("huge_model.h5", w, 1e6f);
    expect_failure("--model huge_model.h5 --tensor " + io, "huge_model.h5", "dP",
                   "physically impossible");
    fs::remove("huge_model.h5");
  }
  SECTION("a process grid too large to be a number") {
    expect_failure("--model " + model + " --tensor " + io + " --grid 99999999999x1", "--grid", "",
                   "is not a grid");
  }
  SECTION("more threads than the node has CPUs") {
    expect_failure("--model " + model + " --tensor " + io + " --threads 100000", "--threads", "",
                   "100000 is more than this node's");
    expect_failure("--model " + model + " --tensor " + io + " --threads 0", "--threads", "",
                   "must be at least 1");
  }
  SECTION("an output that is an input, a device, a FIFO, a directory or a link") {
    test::write_case("in_case.h5", test::valid_case(16, 24));
    const auto before = test::read_all("in_case.h5").arrays.at("PERMX").data;
    const std::string run = "--model " + model + " --case in_case.h5 --out ";
    auto refused = [&](const std::string& out, const std::string& what) {
      Run r = predict(run + out);
      INFO(out << ": " << r.err);
      CHECK(r.code == 2);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK(r.err.find(out + ": --out: " + what) != std::string::npos);
    };
    refused("in_case.h5", "is the input file in_case.h5");
    refused("./in_case.h5", "is the input file");
    refused(model, "is the input file");
    fs::remove("link_out.h5");
    fs::create_symlink("in_case.h5", "link_out.h5");
    refused("link_out.h5", "is a symbolic link");
    fs::create_directories("dir_out.h5");
    refused("dir_out.h5", "is a directory");
    fs::remove("fifo_out.h5");
    REQUIRE(std::system("mkfifo fifo_out.h5") == 0);
    refused("fifo_out.h5", "is not a regular file");
    refused("/dev/null", "is not a regular file");
    CHECK(fs::is_character_file("/dev/null"));
    CHECK(test::read_all("in_case.h5").arrays.at("PERMX").data == before);
    for (const char* f : {"link_out.h5", "dir_out.h5", "fifo_out.h5", "in_case.h5"}) fs::remove(f);
  }
  SECTION("output directory that does not exist") {
    Run r = predict("--model " + model + " --tensor " + io + " --out no_dir/out.h5");
    CHECK(r.code == 2);
    CHECK(r.err.find("no_dir/out.h5") != std::string::npos);
  }
}

TEST_CASE("ufno_predict --bf16 and UFNO_BF16=1 run the same bf16 model", "[cli][bf16]") {
  const std::string model = test::data_path("ufno_small.h5"),
                    io = test::data_path("ufno_small_io.h5");
  const std::string run = " --threads 1 --model " + model + " --tensor " + io;
  for (const char* out : {"out_f32.h5", "out_bf16.h5", "out_bf16_env.h5"}) fs::remove(out);
  Run r32 = predict(run + " --out out_f32.h5");
  Run r16 = predict(run + " --bf16 --out out_bf16.h5");
  Run renv = test::run_command("UFNO_BF16=1 " + std::string(UFNO_PREDICT_EXE) + run +
                               " --out out_bf16_env.h5");
  INFO(r32.err << r16.err << renv.err);
  REQUIRE(r32.code == 0);
  if (!backend::cpu_has_bf16()) {  // refused in one line naming the flag or the variable
    CHECK(r16.code == 2);
    CHECK(std::count(r16.err.begin(), r16.err.end(), '\n') == 1);
    CHECK(r16.err.find("--bf16: this CPU has neither AVX512_BF16 nor AMX-BF16") !=
          std::string::npos);
    CHECK(renv.code == 2);
    CHECK(renv.err.find("UFNO_BF16: this CPU has neither") != std::string::npos);
    return;
  }
  REQUIRE(r16.code == 0);
  REQUIRE(renv.code == 0);
  // A 4-D FNO runs in float32 only: refused, not silently ignored.
  expect_failure("--bf16 --threads 1 --model " + test::data_path("fno4d_small.h5") + " --tensor " +
                     test::data_path("fno4d_small_io.h5"),
                 "--bf16", "4-D FNO", "float32 only");
  auto read = [](const char* f) {
    std::vector<std::size_t> shape;
    return h5::File::open_read(f).read_floats("dP", &shape);
  };
  const auto f32 = read("out_f32.h5"), bf16 = read("out_bf16.h5"), env = read("out_bf16_env.h5");
  CHECK(bf16 == env);  // the variable and the flag build the same model
  // bf16 in effect (far above float32's 1e-6 of reordering) and within bf16 rounding (the bound
  // of test_bf16's model test).
  const double err = test::compare(bf16, f32).rel_l2;
  INFO("bf16 against float32: relative L2 " << err);
  CHECK(err > 1e-5);
  CHECK(err < 4e-2);
}

TEST_CASE("ufno_predict's default thread count follows what the process may use", "[cli]") {
  const std::string args = "--model " + test::data_path("ufno_small.h5") + " --tensor " +
                           test::data_path("ufno_small_io.h5") + " --out out_threads.h5";
  const std::string exe = std::string(UFNO_PREDICT_EXE) + " " + args;
  Run r = test::run_command("env -u SLURM_CPUS_PER_TASK " + exe + " --threads 1");
  INFO(r.out << r.err);
  CHECK(r.out.find("x 1 thread(s) (--threads)") != std::string::npos);
  // One CPU in the affinity mask (as srun --cpu-bind or mpirun --bind-to core set it).
  r = test::run_command("taskset -c 0 env -u SLURM_CPUS_PER_TASK " + exe);
  CHECK(r.code == 0);
  CHECK(r.out.find("x 1 thread(s) (CPU affinity)") != std::string::npos);
  // No binding, but Slurm says one CPU per task (srun -c 1 on a node without task affinity).
  const int cpus = int(std::thread::hardware_concurrency());
  if (cpus > 1) {
    r = test::run_command("SLURM_CPUS_PER_TASK=1 " + exe);
    CHECK(r.out.find("x 1 thread(s) (SLURM_CPUS_PER_TASK)") != std::string::npos);
    r = test::run_command("env -u SLURM_CPUS_PER_TASK " + exe);
    CHECK(r.out.find("x " + std::to_string(cpus) + " thread(s) (node CPUs / ranks)") !=
          std::string::npos);
  } else {
    WARN(
        "one CPU: the SLURM_CPUS_PER_TASK and node-CPU defaults cannot be told apart "
        "(CTest shows multi_cpu_thread_defaults_tested skipped)");
  }
  fs::remove("out_threads.h5");
}

TEST_CASE("ufno_predict without --model uses the default models of UFNO_MODEL_DIR", "[cli]") {
  // A model directory laid out like models/: the small test models under the default names.
  fs::create_directories("default_models");
  fs::copy_file(test::data_path("ufno_small.h5"), "default_models/dp_ufno.h5",
                fs::copy_options::overwrite_existing);
  fs::copy_file(test::data_path("fno_small.h5"), "default_models/sg_ufno.h5",
                fs::copy_options::overwrite_existing);
  // fno_small predicts dP too; give it the SG name the lookup expects by re-labelling a copy.
  test::set_string_attribute("default_models/sg_ufno.h5", "variable", "SG");
  auto c = test::valid_case(16, 24);
  c["PERMX"].values[0] = 0;  // one inactive cell: layer 1, radial cell 1
  c["PERMZ"].values[0] = 0;
  c["PORO"].values[0] = 0;
  test::write_case("default_case.h5", c);
  fs::remove("out_default.h5");
  Run r = test::run_command("UFNO_MODEL_DIR=default_models " + std::string(UFNO_PREDICT_EXE) +
                            " --case default_case.h5 --out out_default.h5 --threads 1");
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto f = h5::File::open_read("out_default.h5");
  std::vector<std::size_t> shape;
  for (const char* v : {"SG", "dP"}) {
    auto a = f.read_floats(v, &shape);
    CHECK(shape == std::vector<std::size_t>{1, 8, 16, 24});
    // The inactive cell is 0 at every time; active cells are not all 0 (SG may be clamped to 0
    // in some, as this random model's raw output is negative there).
    for (int t = 0; t < 8; ++t) CHECK(a[t * 16 * 24] == 0.0f);
    CHECK(std::any_of(a.begin() + 1, a.begin() + 16 * 24, [](float v) { return v != 0.0f; }));
  }
  fs::remove("out_default.h5");

  SECTION("a model directory without the default models is a clear error") {
    fs::create_directories("empty_models");
    Run e = test::run_command("UFNO_MODEL_DIR=empty_models " + std::string(UFNO_PREDICT_EXE) +
                              " --case default_case.h5 --out out_default.h5");
    CHECK(e.code == 2);
    CHECK(std::count(e.err.begin(), e.err.end(), '\n') == 1);
    CHECK(e.err.find("--model") != std::string::npos);
    CHECK(e.err.find("empty_models") != std::string::npos);
    CHECK(no_output_left("out_default.h5"));
  }
}

TEST_CASE("ufno_predict runs the nested chain of a 3-D site and refuses bad site options",
          "[cli]") {
  const std::string site = test::data_path("nested/site.h5"),
                    models = test::data_path("nested/models");
  fs::remove("out_site.h5");
  Run r = predict("--case " + site + " --models " + models + " --out out_site.h5 --threads 1");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("ufno_predict: 3-D site of 2 well(s), 17 levels") == 0);
  CHECK(h5::File::open_read("out_site.h5").has_dataset("INJ2/LGR4/SG"));
  expect_failure("--case " + site, site, "--case", "needs --models DIR");
  expect_failure("--case " + test::data_path("ufno_small_io.h5") + " --models " + models,
                 "--models", "only with a 3-D site file", "");
  expect_failure("--case " + site + " --models " + site, site, "--models", "is not a directory");
  expect_failure(
      "--case " + site + " --models " + models + " --model " + test::data_path("fno4d_small.h5"),
      "--model", "3-D site takes its models from --models", "");
  // A model directory without one of the nine: refused before anything is predicted.
  fs::remove_all("models_eight");
  fs::create_directories("models_eight");
  for (const auto& e : fs::directory_iterator(models))
    if (e.path().filename() != "LGR2_SG.h5")
      fs::copy_file(e.path(), fs::path("models_eight") / e.path().filename());
  expect_failure("--case " + site + " --models models_eight", "models_eight", "--models",
                 "no LGR2 SG model");
}

TEST_CASE("a forged site file is refused in one line before anything runs", "[cli]") {
  const std::string models = test::data_path("nested/models");
  auto forged = [&](auto tamper) {
    const std::string p = test::copy_fixture(test::data_path("nested/site.h5"), "site_forged.h5");
    tamper(p);
    return p;
  };
  // A coarse window reaching outside its source level, a repeat that does not give the level's
  // shape, an unknown format version, a well name that is not a group, a NaN channel.
  expect_failure("--case " + forged([](const std::string& p) {
                   test::set_int_attribute(p, "coarse_window", {0, 40, 0, 4, 0, 8}, "INJ1/LGR3");
                 }) + " --models " +
                     models,
                 "site_forged.h5", "INJ1/LGR3", "outside INJ1/LGR2");
  expect_failure("--case " + forged([](const std::string& p) {
                   test::set_int_attribute(p, "coarse_repeat", {1, 1, 3}, "INJ2/LGR2");
                 }) + " --models " +
                     models,
                 "site_forged.h5", "INJ2/LGR2", "does not give the level's shape");
  expect_failure("--case " + forged([](const std::string& p) {
                   test::set_int_attribute(p, "format_version", {7});
                 }) + " --models " +
                     models,
                 "site_forged.h5", "format_version", "is not 1");
  expect_failure("--case " + forged([](const std::string& p) {
                   test::set_string_attribute(p, "wells", "INJ1 ../x");
                 }) + " --models " +
                     models,
                 "site_forged.h5", "WELSPECS", "well name");
  expect_failure("--case " + forged([](const std::string& p) {
                   test::poison_first_value(p, "INJ2/LGR3/input", std::nanf(""));
                 }) + " --models " +
                     models,
                 "site_forged.h5", "INJ2/LGR3/input", "NaN");
  // A site file cut in half is named as unreadable, not taken for "not a site file".
  expect_failure(
      "--case " + forged([](const std::string& p) { fs::resize_file(p, fs::file_size(p) / 2); }) +
          " --models " + models,
      "site_forged.h5", "", "not a readable HDF5 file");
}
