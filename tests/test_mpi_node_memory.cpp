// runtime/NodeMemoryCheck.hpp: the ranks sharing a node add up their needs and compare the sum with
// the node's budget, read once per node (here a made-up /proc with a chosen MemAvailable; all
// ranks of the test share one node). Every rank must reach the same verdict.
#include <mpi.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/Tensor.hpp"
#include "decomposition/CollectiveErrors.hpp"
#include "operators/Fno4dMemoryEstimate.hpp"
#include "operators/Net3dMemoryEstimate.hpp"
#include "operators/WeightResidency.hpp"
#include "runtime/Fno4dRun.hpp"
#include "runtime/NodeMemoryCheck.hpp"
#include "runtime/Predictor.hpp"

namespace fs = std::filesystem;

namespace {

// A /proc with MemAvailable = kib kB, written by rank 0 for all; returns its sources.
ufno::MemorySources fake_proc(const fs::path& dir, long kib) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    fs::create_directories(dir / "proc" / "self");
    std::ofstream(dir / "proc" / "meminfo") << "MemAvailable: " << kib << " kB\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return {(dir / "proc").string(), (dir / "cg").string(), {}, {}};
}

fs::path shared_dir() {
  int pid = ::getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);  // one directory name for every rank
  return fs::temp_directory_path() / ("ufno_node_memory_" + std::to_string(pid));
}

bool everyone(bool mine) {
  int m = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&m, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace

TEST_CASE("the node's ranks together against the node's budget", "[memory]") {
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const fs::path dir = shared_dir();
  // 1 MB available (1000 kB = 1.024e6 bytes); every rank asks for 0.6 MB.
  const auto where = fake_proc(dir, 1000);
  const auto lack = ufno::node_memory_shortfall(0.6e6, MPI_COMM_WORLD, where);
  if (size == 1) {
    CHECK(everyone(!lack));  // 0.6 MB fits in 1.024 MB
  } else {
    CHECK(everyone(bool(lack)));  // two or more ranks of 0.6 MB do not
    if (lack) {
      CHECK(lack->ranks_on_node == size);
      CHECK(lack->bytes == Approx(0.6e6 * size));
      CHECK(lack->available == Approx(1.024e6));
    }
  }
  // A rank that needs nothing does not change the verdict of the others.
  const auto lack2 = ufno::node_memory_shortfall(rank == 0 ? 2e6 : 0.0, MPI_COMM_WORLD, where);
  CHECK(everyone(bool(lack2)));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) fs::remove_all(dir);
}

TEST_CASE("no verdict when the node's budget cannot be read", "[memory]") {
  const fs::path dir = shared_dir() += "_empty";  // nothing written there
  const ufno::MemorySources where{(dir / "proc").string(), (dir / "cg").string(), {}, {}};
  CHECK(everyone(!ufno::node_memory_shortfall(1e18, MPI_COMM_WORLD, where)));
}

TEST_CASE("the ranks sharing a GPU together against its free memory", "[memory][gpu]") {
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // One device with 1 MB free, every rank on it asking 0.6 MB: one rank fits, two do not.
  ufno::MemorySources one_device;
  one_device.device = 0;
  one_device.device_free = 1e6;
  const auto lack = ufno::device_memory_shortfall(0.6e6, MPI_COMM_WORLD, one_device);
  if (size == 1) {
    CHECK(everyone(!lack));
  } else {
    CHECK(everyone(bool(lack)));
    if (lack) {
      CHECK(lack->device == 0);
      CHECK(lack->ranks_on_node == size);
      CHECK(lack->bytes == Approx(0.6e6 * size));
      CHECK(lack->available == Approx(1e6));
    }
  }
  // A device per rank: each rank's 0.6 MB fits its own device, however many ranks there are.
  ufno::MemorySources own_device = one_device;
  own_device.device = rank;
  CHECK(everyone(!ufno::device_memory_shortfall(0.6e6, MPI_COMM_WORLD, own_device)));
  // One rank short on its own device: every rank hears that device's figures.
  own_device.device_free = rank == size - 1 ? 0.5e6 : 1e6;
  const auto one_short = ufno::device_memory_shortfall(0.6e6, MPI_COMM_WORLD, own_device);
  CHECK(everyone(bool(one_short)));
  if (one_short) {
    CHECK(one_short->device == size - 1);
    CHECK(one_short->available == Approx(0.5e6));
  }
}

TEST_CASE("a GPU build reads its device; a host build has no device verdict", "[memory][gpu]") {
  if (ufno::kHostTensors) {
    CHECK(!ufno::available_device_memory());
    CHECK(everyone(!ufno::device_memory_shortfall(1e18, MPI_COMM_WORLD)));
  } else {
    const auto reading = ufno::available_device_memory();
    REQUIRE(reading);
    CHECK(reading->free_bytes > 0);
    CHECK(everyone(bool(ufno::device_memory_shortfall(1e18, MPI_COMM_WORLD))));
  }
}

TEST_CASE("a pass of cases is cut to what the GPU's free memory holds", "[memory][gpu]") {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string model = std::string(UFNO_TEST_DATA_DIR) + "/ufno_small.h5";
  ufno::Predictor predictor({model}, MPI_COMM_WORLD);
  const ufno::ModelSpec& s = predictor.spec();
  // Every rank on one device: the ranks' needs add up.
  auto need = [&](std::size_t cases) {
    return size * ufno::Net3dMemoryEstimate::per_rank(s, cases, predictor.grid().size());
  };
  ufno::MemorySources device;
  device.device = 0;
  device.device_free = 1e15;
  CHECK(predictor.cases_that_fit(8, device) == 8);
  device.device_free = need(2) + 1;  // 8 do not fit, nor 4; 2 do
  CHECK(predictor.cases_that_fit(8, device) == 2);
  CHECK(predictor.cases_that_fit(1, device) == 1);
  device.device_free = need(1) / 2;
  try {
    predictor.cases_that_fit(8, device);
    FAIL("no refusal");
  } catch (const ufno::dist::AgreedInputError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("ufno_small.h5: grid: one case on the padded grid") != std::string::npos);
    CHECK(what.find("MB of memory on GPU 0") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("the 4-D FNO's weights stay on the GPU when they fit beside the pass", "[memory][gpu]") {
  using ufno::choose_weight_residency;
  using ufno::WeightResidency;
  // On a device: resident when the rank's share fits in what its pass leaves free, else read per
  // layer; per layer too when the free memory is unknown.
  CHECK(choose_weight_residency(1e9, 2e9, 1, false) == WeightResidency::All);
  CHECK(choose_weight_residency(1e9, 2e9, 6, false) == WeightResidency::All);
  CHECK(choose_weight_residency(1e9, 1e9, 6, false) == WeightResidency::All);
  CHECK(choose_weight_residency(3e9, 2e9, 6, false) == WeightResidency::PerLayer);
  CHECK(choose_weight_residency(1e9, -1e9, 6, false) == WeightResidency::PerLayer);
  CHECK(choose_weight_residency(1e9, std::nullopt, 6, false) == WeightResidency::PerLayer);
  // On the host: one pass reads per layer, several hold the weights, whatever the device says.
  CHECK(choose_weight_residency(1e9, 2e9, 1, true) == WeightResidency::PerLayer);
  CHECK(choose_weight_residency(1e9, std::nullopt, 1, true) == WeightResidency::PerLayer);
  CHECK(choose_weight_residency(3e9, std::nullopt, 2, true) == WeightResidency::All);

  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const ufno::Fno4dSpec lgr1;  // 4 layers, width 28, modes (6, 10, 10, 10): 300 MB a layer
  const double weights = ufno::Fno4dMemoryEstimate::spectral_weight_bytes(lgr1, size);
  CHECK(weights * size == Approx(4 * 28 * 28 * (12 * 20 * 20 * 10) * 8.0));
  const double pass =
      ufno::Fno4dMemoryEstimate::per_rank(lgr1, 1, size, ufno::execution_plan().kind);
  // Every rank on one device: their passes and weights add up.
  ufno::MemorySources one_device;
  one_device.device = 0;
  one_device.device_free = size * (pass + weights) + 1;
  const auto spare = ufno::device_memory_spare(pass, MPI_COMM_WORLD, one_device);
  REQUIRE(spare);
  CHECK(*spare == Approx(weights + 1.0 / size));
  const WeightResidency fits =
      ufno::kHostTensors ? WeightResidency::PerLayer : WeightResidency::All;
  CHECK(ufno::fno4d_weight_residency(lgr1, 1, size, 1, MPI_COMM_WORLD, one_device) == fits);
  one_device.device_free = size * (pass + weights / 2);
  CHECK(ufno::fno4d_weight_residency(lgr1, 1, size, 1, MPI_COMM_WORLD, one_device) ==
        WeightResidency::PerLayer);
  // A device per rank, the last one fuller: every rank gets the least spare memory.
  ufno::MemorySources own_device;
  own_device.device = rank;
  own_device.device_free = rank == size - 1 ? 0.5e6 : 1e6;
  const auto least = ufno::device_memory_spare(0.2e6, MPI_COMM_WORLD, own_device);
  REQUIRE(least);
  CHECK(*least == Approx(0.3e6));
  CHECK(everyone(*least == Approx(0.3e6)));
  // No device reading (a host build): nothing, on every rank.
  if (ufno::kHostTensors) CHECK(everyone(!ufno::device_memory_spare(1.0, MPI_COMM_WORLD)));
}
