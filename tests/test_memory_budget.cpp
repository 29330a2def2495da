// core/MemoryBudget.hpp on made-up /proc and cgroup trees: MemAvailable alone, cgroup v2 and v1
// limits on an ancestor of the process's group, the inactive page cache left out of the usage,
// a container that sees only its own group as the root, and files made to mislead it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/MemoryBudget.hpp"
#include "support/Skip.hpp"

namespace fs = std::filesystem;

namespace {

struct FakeTree {
  fs::path root;
  FakeTree() {
    root = fs::temp_directory_path() /
           ("ufno_memory_budget_" + std::to_string(::getpid()) + "_" + std::to_string(count++));
    fs::remove_all(root);
    fs::create_directories(root / "proc" / "self");
    fs::create_directories(root / "cg");
  }
  ~FakeTree() { fs::remove_all(root); }
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = root / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  ufno::MemorySources sources() const {
    return {(root / "proc").string(), (root / "cg").string(), {}, {}};
  }
  static inline int count = 0;
};

const std::string kMeminfo =
    "MemTotal:       24684100 kB\nMemFree:          123456 kB\nMemAvailable:   16000000 kB\n";

}  // namespace

TEST_CASE("MemAvailable alone when the process is in no limited group", "[memory]") {
  FakeTree t;
  t.write("proc/meminfo", kMeminfo);
  const auto a = ufno::available_host_memory(t.sources());
  REQUIRE(a);
  CHECK(*a == Approx(16000000.0 * 1024));
}

TEST_CASE("cgroup v2: the tightest limit among the group and its ancestors", "[memory]") {
  FakeTree t;
  t.write("proc/meminfo", kMeminfo);
  t.write("proc/self/cgroup", "0::/job_7/step_0\n");
  t.write("cg/job_7/step_0/memory.max", "max\n");
  t.write("cg/job_7/memory.max", "8000000000\n");
  t.write("cg/job_7/memory.current", "3000000000\n");
  t.write("cg/job_7/memory.stat", "anon 2000000000\nfile 1000000000\ninactive_file 1000000000\n");
  const auto a = ufno::available_host_memory(t.sources());
  REQUIRE(a);
  CHECK(*a == Approx(8e9 - (3e9 - 1e9)));  // cached input pages do not count as used
}

TEST_CASE("cgroup v1: the memory controller's limit; 'unlimited' values are no limit", "[memory]") {
  FakeTree t;
  t.write("proc/meminfo", kMeminfo);
  t.write("proc/self/cgroup", "5:cpu,cpuacct:/slurm/uid_0/job_9\n4:memory:/slurm/uid_0/job_9\n");
  t.write("cg/memory/memory.limit_in_bytes", "9223372036854771712\n");
  t.write("cg/memory/slurm/uid_0/job_9/memory.limit_in_bytes", "4000000000\n");
  t.write("cg/memory/slurm/uid_0/job_9/memory.usage_in_bytes", "1500000000\n");
  t.write("cg/memory/slurm/uid_0/job_9/memory.stat",
          "cache 600000000\ninactive_file 100\ntotal_inactive_file 500000000\n");
  const auto a = ufno::available_host_memory(t.sources());
  REQUIRE(a);
  CHECK(*a == Approx(4e9 - 1e9));
}

TEST_CASE("a container whose cgroup tree is rooted at its own group", "[memory]") {
  FakeTree t;
  t.write("proc/meminfo", kMeminfo);
  t.write("proc/self/cgroup", "4:memory:/process_api/abc123\n");  // not under cg/memory
  t.write("cg/memory/memory.limit_in_bytes", "2000000000\n");
  t.write("cg/memory/memory.usage_in_bytes", "500000000\n");
  const auto a = ufno::available_host_memory(t.sources());
  REQUIRE(a);
  CHECK(*a == Approx(1.5e9));
}

TEST_CASE("usage above the limit leaves nothing, not a negative budget", "[memory]") {
  FakeTree t;
  t.write("proc/self/cgroup", "0::/\n");
  t.write("cg/memory.max", "1000\n");
  t.write("cg/memory.current", "5000\n");
  const auto a = ufno::available_host_memory(t.sources());
  REQUIRE(a);
  CHECK(*a == 0.0);
}

TEST_CASE("files made to mislead are ignored, and nothing readable means no budget", "[memory]") {
  FakeTree t;
  CHECK_FALSE(ufno::available_host_memory(t.sources()));  // nothing there at all
  t.write("proc/meminfo", "MemAvailable: lots kB\nMemAvailable: -5 kB\nMemAvailable: 7 MB\n");
  t.write("proc/self/cgroup", "garbage\n0::relative/path\n0::/../../etc\n4:memory:\n0::/g\n");
  t.write("cg/g/memory.max", "-12\n");
  t.write("cg/g/memory.current", "1e400\n");
  t.write("cg/memory.max", "12abc\n");
  t.write("cg/etc/memory.max", "1\n");  // reachable only through ".."
  CHECK_FALSE(ufno::available_host_memory(t.sources()));
  t.write("proc/meminfo", "MemAvailable:   1000 kB\n");
  const auto a = ufno::available_host_memory(t.sources());
  REQUIRE(a);
  CHECK(*a == Approx(1000.0 * 1024));
}

// CTest: memory_budget_this_machine (skipped where no memory figure can be read).
TEST_CASE("this machine's budget is positive and no more than its memory",
          "[memory][.memory_budget_this_machine]") {
  const auto a = ufno::available_host_memory();
  if (!a) ufno::test::skip("neither /proc/meminfo nor a memory cgroup could be read here");
  CHECK(*a >= 0.0);
  CHECK(*a < 1e15);
}
