// The nested chain (runtime/NestedChain) against the PyTorch chain's fixture (tests/data/nested,
// python/ufno/conversion/nested_fixtures.py: a two-well site, nine converted models with and
// without normalisers, the float64 prediction): every level and variable within relative L2
// 1e-5, on the automatic process grid and, on 4 ranks, one that splits A1 as well; the same for
// the published-order set (nested/published: time-first models with per-time normalisers used as
// the reference's predict_full_sg.py uses them, against models/nested_reference.py's chains); and
// the model set's refusals, each before any output exists.
#include <mpi.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "decomposition/CollectiveErrors.hpp"
#include "io/Hdf5File.hpp"
#include "runtime/NestedChain.hpp"
#include "support/FileTamper.hpp"

using namespace ufno;
namespace fs = std::filesystem;

namespace {

const std::string kFixture = std::string(UFNO_TEST_DATA_DIR) + "/nested";

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// The name of one directory for all ranks (rank 0's pid); collective.
std::string shared_directory_name(const std::string& stem) {
  long pid = ::getpid();
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return (fs::temp_directory_path() / (stem + "." + std::to_string(pid))).string();
}

// One directory for all ranks (rank 0's pid), made empty by rank 0.
std::string shared_directory(const std::string& stem) {
  const fs::path d = shared_directory_name(stem);
  if (world_rank() == 0) {
    fs::remove_all(d);
    fs::create_directories(d);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return d.string();
}

double relative_l2(const std::vector<float>& got, const std::vector<float>& want) {
  double e = 0, n = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    e += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    n += double(want[i]) * want[i];
  }
  return std::sqrt(e / n);
}

// Every prediction of `expected` read back from `out` and compared; the largest relative L2.
double worst_error(const std::string& out,
                   const std::string& expected = kFixture + "/expected.h5") {
  const h5::File want = h5::File::open_read(expected);
  const h5::File got = h5::File::open_read(out);
  double worst = 0;
  std::vector<std::string> names{"GLOBAL/dP"};
  for (const char* w : {"INJ1", "INJ2"})
    for (int k = 1; k <= 4; ++k)
      for (const char* v : {"dP", "SG"})
        names.push_back(std::string(w) + "/LGR" + std::to_string(k) + "/" + v);
  for (const auto& n : names) {
    std::vector<std::size_t> sw, sg;
    const auto a = got.read_floats(n, &sg), b = want.read_floats(n, &sw);
    CHECK(sg == sw);
    if (sg == sw) worst = std::max(worst, relative_l2(a, b));
  }
  return worst;
}

// A copy of the fixture's models without `drop`, then `edit` applied by rank 0.
template <class Edit>
std::string model_directory(const std::string& stem, const std::string& drop, Edit edit) {
  const std::string d = shared_directory(stem);
  if (world_rank() == 0) {
    for (const auto& e : fs::directory_iterator(kFixture + "/models"))
      if (e.path().filename() != drop) fs::copy_file(e.path(), fs::path(d) / e.path().filename());
    edit(d);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return d;
}

std::string refusal(const std::string& models, const std::string& out) {
  try {
    run_nested_chain(kFixture + "/site.h5", models, out, "auto", dist::ExchangeAlgorithm::Alltoallv,
                     MPI_COMM_WORLD);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the nested chain reproduces the PyTorch chain on every rank count and grid") {
  const std::string dir = shared_directory("ufno_nested_chain");
  // The automatic grid leaves A1 whole; on 4 ranks the chain runs once more on a grid that
  // splits A1 as well.
  std::vector<std::string> grids{"auto"};
  if (world_size() == 4) grids.push_back("2x2x1");
  for (const std::string& grid : grids) {
    const std::string out = dir + "/pred_" + grid + ".h5";
    const NestedChainSummary s =
        run_nested_chain(kFixture + "/site.h5", kFixture + "/models", out, grid,
                         dist::ExchangeAlgorithm::Alltoallv, MPI_COMM_WORLD);
    CHECK(s.levels == 17);
    CHECK(s.wells == 2);
    const double e = worst_error(out);
    INFO("grid " << grid << ": worst relative L2 " << e);
    CHECK(e <= 1e-5);
    const h5::File f = h5::File::open_read(out);
    CHECK(f.string_attribute_required("format") == "ufno-nested-prediction");
    CHECK(f.string_attribute("GLOBAL/dP", "units").value_or("") == "bar");
    CHECK(f.string_attribute("INJ2/LGR4/SG", "units").value_or("") == "1");
    const h5::File site = h5::File::open_read(kFixture + "/site.h5");
    std::vector<std::size_t> s1, s2;
    CHECK(f.read_floats("INJ1/LGR3/cell_depth", &s1) ==
          site.read_floats("INJ1/LGR3/cell_depth", &s2));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove_all(dir);
}

TEST_CASE("the nested chain runs the published-order models as the reference's chains do") {
  // Time-first networks (T, X, Y, Z), per-time normalisers; LGR1 SG encodes its coarse channel
  // with LGR1 dP's input normaliser and no SG level decodes (predict_full_sg.py).
  const std::string dir = shared_directory("ufno_nested_published");
  std::vector<std::string> grids{"auto"};
  if (world_size() == 4) grids.push_back("2x2x1");
  if (world_size() == 2) grids.push_back("1x1x2");
  for (const std::string& grid : grids) {
    const std::string out = dir + "/pred_" + grid + ".h5";
    const NestedChainSummary s =
        run_nested_chain(kFixture + "/site.h5", kFixture + "/published/models", out, grid,
                         dist::ExchangeAlgorithm::Alltoallv, MPI_COMM_WORLD);
    CHECK(s.levels == 17);
    const double e = worst_error(out, kFixture + "/published/expected.h5");
    if (world_rank() == 0)
      std::printf("published set on %d rank(s), grid %s: worst relative L2 %.3g\n", world_size(),
                  grid.c_str(), e);
    INFO("grid " << grid << ": worst relative L2 " << e);
    CHECK(e <= 1e-5);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove_all(dir);
}

TEST_CASE("the nested chain refuses a model set that does not fit the site, writing nothing") {
  const std::string out = shared_directory("ufno_nested_refusal") + "/pred.h5";
  auto none = [](const std::string&) {};
  CHECK_THAT(refusal(model_directory("ufno_nested_missing", "LGR3_SG.h5", none), out),
             Catch::Contains("no LGR3 SG model"));
  CHECK_THAT(refusal(model_directory("ufno_nested_twice", "",
                                     [](const std::string& d) {
                                       fs::copy_file(kFixture + "/models/LGR2_dP.h5",
                                                     d + "/another.h5");
                                     }),
                     out),
             Catch::Contains("a second LGR2 dP model"));
  CHECK_THAT(refusal(model_directory("ufno_nested_grid", "LGR1_dP.h5",
                                     [](const std::string& d) {
                                       test::set_string_attribute(d + "/LGR2_dP.h5", "level",
                                                                  "LGR1");
                                     }),
                     out),
             Catch::Contains("is not the grid of INJ1/LGR1"));
  CHECK_THAT(refusal(model_directory("ufno_nested_global_sg", "",
                                     [](const std::string& d) {
                                       test::set_string_attribute(d + "/GLOBAL_dP.h5", "variable",
                                                                  "SG");
                                     }),
                     out),
             Catch::Contains("a GLOBAL model predicts dP only"));
  CHECK_THAT(refusal(model_directory("ufno_nested_channels", "LGR1_SG.h5",
                                     [](const std::string& d) {
                                       fs::copy_file(d + "/GLOBAL_dP.h5", d + "/g.h5");
                                       test::set_string_attribute(d + "/g.h5", "level", "LGR1");
                                       test::set_string_attribute(d + "/g.h5", "variable", "SG");
                                     }),
                     out),
             Catch::Contains("in_channels"));
  // A model cut short is named, not skipped (skipping it reported its level as missing).
  const std::string cut = model_directory("ufno_nested_cut", "", [](const std::string& d) {
    fs::resize_file(d + "/LGR2_SG.h5", fs::file_size(d + "/LGR2_SG.h5") / 2);
  });
  const std::string cut_error = refusal(cut, out);
  CHECK_THAT(cut_error,
             Catch::Contains(cut + "/LGR2_SG.h5") && Catch::Contains("not a readable HDF5 file"));
  CHECK_THAT(refusal(kFixture + "/site.h5", out), Catch::Contains("is not a directory"));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_FALSE(fs::exists(out));
  // Nothing of this test is left in the temporary directory.
  for (const char* stem :
       {"ufno_nested_refusal", "ufno_nested_missing", "ufno_nested_twice", "ufno_nested_grid",
        "ufno_nested_global_sg", "ufno_nested_channels", "ufno_nested_cut"}) {
    const std::string d = shared_directory_name(stem);  // collective
    if (world_rank() == 0) fs::remove_all(d);
  }
}
