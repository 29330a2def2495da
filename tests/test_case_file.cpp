// Reading, validating and encoding reservoir case files.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include "io/CaseEncoding.hpp"
#include "io/CaseFile.hpp"
#include "support/CaseWriter.hpp"

using namespace ufno;

namespace {

// Named by process too: ctest runs each test case as its own process, several at once, in one
// directory, and each process's count starts at 0.
std::string tmp_case(const test::CaseFields& c) {
  static int n = 0;
  const std::string p = "test_case_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ".h5";
  test::write_case(p, c);
  return p;
}

// Reading `c` fails with a message that names the file and `field` and contains `what`.
void expect_error(const test::CaseFields& c, const std::string& field, const std::string& what) {
  const std::string p = tmp_case(c);
  INFO("field " << field << ": " << what);
  try {
    read_case(p, 6, 5);
    FAIL("no error raised");
  } catch (const InputError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.find(p + ": " + field + ": ") == 0);
    CHECK(m.find(what) != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
  }
  std::remove(p.c_str());
}

}  // namespace

TEST_CASE("a valid case is read with its values", "[case]") {
  auto fields = test::valid_case(6, 5);
  const std::string p = tmp_case(fields);
  ReservoirCase c = read_case(p, 6, 5);
  CHECK(c.nx == 6);
  CHECK(c.ny == 5);
  CHECK(c.permx[1 * 5 + 2] == Approx(10.0 + 5.0 + 1.0));
  CHECK(c.perforated == std::vector<int>{0, 1, 1, 0, 0, 0});
  CHECK(c.rate_mt_per_year == 1.0);
  CHECK(c.pressure_bar == 200.0);
  std::remove(p.c_str());

  SECTION("the perforation may be given as top and bottom layers (1-based, inclusive)") {
    fields.erase("PERF");
    fields.fields.push_back({"PERF_TOP", {}, {3}, "1"});
    fields.fields.push_back({"PERF_BOTTOM", {}, {5}, "1"});
    const std::string q = tmp_case(fields);
    CHECK(read_case(q, 6, 5).perforated == std::vector<int>{0, 0, 1, 1, 1, 0});
    std::remove(q.c_str());
  }
}

TEST_CASE("the encoding follows the paper's channel definitions", "[case][encoding]") {
  auto fields = test::valid_case(6, 5);
  const std::string p = tmp_case(fields);
  ReservoirCase c = read_case(p, 6, 5);
  std::remove(p.c_str());
  const int T = 4;
  HostArray a = encode_case(c, T);
  REQUIRE(a.shape == std::vector<std::size_t>{1, 6, 5, 4, 12});
  auto at = [&](int x, int y, int t, int ch) {
    return a.data[((std::size_t(x) * 5 + y) * T + t) * 12 + ch];
  };
  // kr = exp(15 a): a = ln(kr) / 15; inactive cells are 0.
  CHECK(at(1, 2, 0, 0) == Approx(std::log(16.0) / 15).epsilon(1e-6));
  CHECK(at(1, 2, 3, 1) == Approx(std::log(0.2 * 16.0) / 15).epsilon(1e-6));
  CHECK(at(5, 2, 0, 0) == 0.f);
  CHECK(at(5, 2, 0, 2) == 0.f);
  CHECK(at(2, 0, 0, 2) == Approx(0.12));
  // Perforation only in the well column of the perforated layers.
  CHECK(at(1, 0, 0, 3) == 1.f);
  CHECK(at(2, 0, 2, 3) == 1.f);
  CHECK(at(1, 1, 0, 3) == 0.f);
  CHECK(at(0, 0, 0, 3) == 0.f);
  // 1 Mt/yr: a = (1 * 1e6/365 * 1000/1.862 - 3e5) / 2.7e6.
  CHECK(at(0, 0, 0, 4) == Approx((1e6 / 365 * 1000 / 1.862 - 3e5) / 2.7e6).epsilon(1e-6));
  CHECK(decoded_rate(encoded_rate(1.7)) == Approx(1.7));
  CHECK(at(3, 4, 1, 5) == Approx((80.0 - 30) / 150));
  CHECK(at(3, 4, 1, 6) == Approx((200.0 - 100) / 200));
  CHECK(at(3, 4, 1, 7) == Approx((0.2 - 0.1) / 0.2));
  CHECK(at(3, 4, 1, 8) == Approx((0.5 - 0.3) / 0.4));
  // Radial coordinate from the cumulative DR, min-max normalised; vertical linspace(0, 1, X).
  CHECK(at(0, 0, 0, 9) == 0.f);
  CHECK(at(0, 4, 0, 9) == 1.f);
  const double r1 = 3.5938 * 1.035012,
               r_all = 3.5938 * (1.035012 + std::pow(1.035012, 2) + std::pow(1.035012, 3) +
                                 std::pow(1.035012, 4));
  CHECK(at(0, 1, 0, 9) == Approx(r1 / r_all).epsilon(1e-6));
  CHECK(at(3, 1, 0, 10) == Approx(0.6));
  // Time: t_k = sum_{i<=k} 1.421245^i days over the last time.
  const auto t = paper_times_days(24);
  CHECK(t[0] == Approx(1.0));
  CHECK(t[23] == Approx(10950).epsilon(2e-3));  // 30 years
  const double t3 = 1 + 1.421245 + std::pow(1.421245, 2) + std::pow(1.421245, 3);
  CHECK(at(0, 0, 1, 11) == Approx((1 + 1.421245) / t3));
  CHECK(at(0, 0, 3, 11) == 1.f);
}

TEST_CASE("bad case files get one-line errors naming file and field", "[case][errors]") {
  auto good = test::valid_case(6, 5);
  SECTION("missing dataset") {
    auto c = good;
    c.erase("PORO");
    expect_error(c, "PORO", "dataset is missing");
  }
  SECTION("wrong shape") {
    auto c = good;
    c["PERMZ"].shape = {5, 6};
    expect_error(c, "PERMZ", "shape (5,6) but expected (6,5)");
  }
  SECTION("wrong dtype") {
    auto c = good;
    c["PERMX"].type = test::CaseField::Int32;
    expect_error(c, "PERMX", "floating-point");
    c = good;
    c["PORO"].type = test::CaseField::String;
    expect_error(c, "PORO", "non-numeric");
  }
  SECTION("NaN and Inf") {
    auto c = good;
    c["PORO"].values[7] = std::nan("");
    expect_error(c, "PORO", "NaN or Inf");
    c = good;
    c["TEMP"].values[0] = INFINITY;
    expect_error(c, "TEMP", "NaN or Inf");
  }
  SECTION("negative permeability") {
    auto c = good;
    c["PERMX"].values[3] = -1;
    expect_error(c, "PERMX", "negative permeability");
    c = good;
    c["PERMZ"].values[3] = -0.5;
    expect_error(c, "PERMZ", "negative permeability");
  }
  SECTION("porosity outside (0, 1]") {
    auto c = good;
    c["PORO"].values[0] = 0.0;
    expect_error(c, "PORO", "outside (0, 1]");
    c = good;
    c["PORO"].values[0] = 1.2;
    expect_error(c, "PORO", "outside (0, 1]");
  }
  SECTION("units") {
    auto c = good;
    c["PRESSURE"].units = "psi";
    expect_error(c, "PRESSURE", "units \"psi\" are not supported");
    c = good;
    c["PERMX"].units = "";
    expect_error(c, "PERMX", "no units attribute");
  }
  SECTION("perforation") {
    auto c = good;
    c["PERF"].values.assign(6, 0.0);
    expect_error(c, "PERF", "no layer is perforated");
    c = good;
    c["PERF"].values[5] = 1.0;  // the bottom layer is inactive
    expect_error(c, "PERF", "inactive");
  }
  SECTION("grid differs from the model") {
    auto c = test::valid_case(7, 5);
    expect_error(c, "PERMX", "differs from the model grid");
  }
  SECTION("scalar parameters") {
    auto c = good;
    c["SWI"].values[0] = 1.0;
    expect_error(c, "SWI", "[0, 1)");
    c = good;
    c["INJ_RATE"].shape = {2};
    c["INJ_RATE"].values = {1, 2};
    expect_error(c, "INJ_RATE", "must be a scalar");
  }
}

TEST_CASE("missing, truncated and non-HDF5 case files", "[case][errors]") {
  CHECK_THROWS_WITH(read_case("no_such_case.h5"),
                    Catch::StartsWith("no_such_case.h5: ") && Catch::Contains("cannot be opened"));
  auto fields = test::valid_case(6, 5);
  const std::string p = tmp_case(fields);
  {  // keep only the first 2 kB
    FILE* f = std::fopen(p.c_str(), "rb");
    std::vector<char> buf(2048);
    const std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
    std::fclose(f);
    f = std::fopen(p.c_str(), "wb");
    std::fwrite(buf.data(), 1, n, f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH(read_case(p), Catch::StartsWith(p + ": "));
  std::remove(p.c_str());
  {
    FILE* f = std::fopen("not_hdf5.h5", "w");
    std::fputs("PERMX 1 2 3\n", f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH(read_case("not_hdf5.h5"), Catch::Contains("not a readable HDF5 file"));
  std::remove("not_hdf5.h5");
}

TEST_CASE("values far outside the training ranges are warned about", "[case]") {
  ReservoirCase c;
  c.nx = c.lx = 1;
  c.ny = c.ly = 4;
  c.permx = {0, 1.5, 100, 5e4};  // inactive, below, inside, above [2, 10000] mD
  c.permz = {0, 1.0, 1e-4, 10};  // the inside cell's kz is below 0.002 mD
  c.rate_mt_per_year = 1;
  c.temperature_c = 250;  // above 180 degC
  c.pressure_bar = 200;
  c.swi = 0.2;
  c.vg_lambda = 0.5;
  const auto w = out_of_training_range(c);
  auto has = [&](const std::string& s) {
    for (const auto& m : w)
      if (m.find(s) != std::string::npos) return true;
    return false;
  };
  CHECK(w.size() == 3);
  CHECK(has("TEMP = 250 degC is outside the training range [30, 180]"));
  CHECK(has("PERMX outside the training range [2, 10000] mD in 2 active cell(s)"));
  CHECK(has("PERMZ outside the training range [0.002, 10000] mD in 1 active cell(s)"));
}
