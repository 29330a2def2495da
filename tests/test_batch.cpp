// Batch prediction (ufno_predict --cases): a directory with one broken case (reported, skipped,
// the others done, exit 3), a list file, kill-and-resume giving the same outputs as an
// uninterrupted run, and case-parallel groups of ranks under mpiexec.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/ExecutionPlan.hpp"
#include "io/Hdf5File.hpp"
#include "runtime/BatchRun.hpp"
#include "support/CaseWriter.hpp"
#include "support/RunCommand.hpp"
#include "support/TestUtil.hpp"

using namespace ufno;
using test::Run;
namespace fs = std::filesystem;

namespace {

const std::string kModels =
    "--model " + test::data_path("ufno_small.h5") + " --model " + test::data_path("fno_small.h5");

Run predict(const std::string& args, const std::string& launcher = "") {
  return test::run_command(launcher + std::string(UFNO_PREDICT_EXE) + " --threads 1 " + args);
}

// n varied valid cases in dir.
void make_cases(const std::string& dir, int n) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int i = 0; i < n; ++i) {
    auto c = test::valid_case(16, 24);
    c["INJ_RATE"].values[0] = 0.3 + 0.1 * i;
    c["PERMX"].values[i] *= 3;
    test::write_case(dir + "/case_" + std::to_string(10 + i) + ".h5", c);
  }
}

std::vector<float> field(const std::string& path, const char* name) {
  auto f = h5::File::open_read(path);
  return f.read_floats(name, nullptr);
}

void expect_same_outputs(const std::string& a, const std::string& b) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(a)) {
    const std::string other = b + "/" + e.path().filename().string();
    REQUIRE(fs::exists(other));
    if (e.path().extension() == ".xmf") {  // the viewer description beside each output
      std::ifstream x(e.path()), y(other);
      CHECK(std::string(std::istreambuf_iterator<char>(x), {}) ==
            std::string(std::istreambuf_iterator<char>(y), {}));
      ++n;
      continue;
    }
    for (const char* v : {"SG", "dP"}) CHECK(field(e.path().string(), v) == field(other, v));
    ++n;
  }
  CHECK(n == std::size_t(std::distance(fs::directory_iterator(b), fs::directory_iterator())));
}

}  // namespace

TEST_CASE("a batch skips a broken case and does the others", "[batch]") {
  make_cases("batch_in", 4);
  { std::ofstream("batch_in/case_99_broken.h5") << "not hdf5"; }
  fs::remove_all("batch_out");
  Run r = predict(kModels + " --cases batch_in --out batch_out");
  INFO(r.err);
  CHECK(r.code == 3);
  CHECK(r.out.find("batch of 5 case(s): 4 done, 0 skipped (already done), 1 failed") !=
        std::string::npos);
  CHECK(r.err.find(
            "case_99_broken.h5: FAILED: batch_in/case_99_broken.h5: is not a readable HDF5 file") !=
        std::string::npos);
  for (int i = 0; i < 4; ++i) CHECK(fs::exists("batch_out/case_" + std::to_string(10 + i) + ".h5"));
  CHECK(!fs::exists("batch_out/case_99_broken.h5"));
  // The same outputs as single runs.
  Run one = predict(kModels + " --case batch_in/case_12.h5 --out single_12.h5");
  REQUIRE(one.code == 0);
  CHECK(field("single_12.h5", "dP") == field("batch_out/case_12.h5", "dP"));
  // A list file works the same, and a rerun skips what is done.
  { std::ofstream("batch_list.txt") << "# two cases\nbatch_in/case_10.h5\nbatch_in/case_11.h5\n"; }
  r = predict(kModels + " --cases batch_list.txt --out batch_out");
  CHECK(r.code == 0);
  CHECK(r.out.find("batch of 2 case(s): 0 done, 2 skipped") != std::string::npos);
  fs::remove("single_12.h5");
}

// Relative L2 of b against a: stacked cases may sum in another order than single ones (the
// products see other shapes), within float32 rounding of the network (tests/support/
// Float32Bound.hpp gives about 1e-4 for these models).
static double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  const auto e = test::compare(b, a);
  return e.rel_l2;
}

TEST_CASE("the default cases a pass follow the plan, the heads and the threads", "[batch]") {
  ScopedExecutionPlan streaming(PlanKind::Streaming);
  CHECK(default_cases_per_pass() == 1);
  CHECK(default_cases_per_pass(false, 4) == 1);  // no per-case physics: one case a pass
  CHECK(default_cases_per_pass(true, 1) == 2);
  CHECK(default_cases_per_pass(true, 2) == 4);
  CHECK(default_cases_per_pass(true, 16) == 8);
  ScopedExecutionPlan whole(PlanKind::WholeTensor);
  CHECK(default_cases_per_pass() == 8);
  CHECK(default_cases_per_pass(true, 2) == 8);
}

TEST_CASE("cases stacked into one pass give each case's own output", "[batch]") {
  make_cases("pass_in", 5);
  { std::ofstream("pass_in/case_12_broken.h5") << "not hdf5"; }  // mid-pass, sorted after 12
  fs::remove_all("pass_one");
  fs::remove_all("pass_three");
  fs::remove_all("pass_gpu_plan");
  Run one = predict(kModels + " --cases pass_in --out pass_one --cases-per-pass 1");
  Run three = predict(kModels + " --cases pass_in --out pass_three --cases-per-pass 3");
  // The GPU's plan on this CPU: 8 cases a pass by default.
  Run gpu = predict(kModels + " --cases pass_in --out pass_gpu_plan --plan whole-tensor");
  INFO(three.err << gpu.err);
  for (const Run* r : {&one, &three, &gpu}) {
    CHECK(r->code == 3);
    CHECK(r->out.find("batch of 6 case(s): 5 done, 0 skipped (already done), 1 failed") !=
          std::string::npos);
  }
  CHECK(three.err.find("(one pass of 3 cases)") != std::string::npos);
  CHECK(gpu.err.find("(one pass of 5 cases)") != std::string::npos);
  CHECK(three.err.find("case_12_broken.h5: FAILED") != std::string::npos);
  for (int i = 0; i < 5; ++i) {
    const std::string name = "/case_" + std::to_string(10 + i) + ".h5";
    for (const char* v : {"SG", "dP"}) {
      const auto ref = field("pass_one" + name, v);
      CHECK(rel_l2(ref, field("pass_three" + name, v)) <= 1e-5);
      CHECK(rel_l2(ref, field("pass_gpu_plan" + name, v)) <= 1e-5);
    }
  }
  // A rerun skips every case done, whatever the passes were.
  Run again = predict(kModels + " --cases pass_in --out pass_three --cases-per-pass 3");
  CHECK(again.out.find("batch of 6 case(s): 0 done, 5 skipped") != std::string::npos);
}

TEST_CASE(
    "the shipped dP model's peak, estimated for a pass's cases on two threads, is each "
    "case's own",
    "[batch][heads]") {
  // The maximum-dP head's physics runs for every case of a pass on the run's threads
  // (runtime/DpPeakMatch.cpp): the fields equal those of one case a pass on one thread.
  const std::string root = test::data_path("../..");
  const std::string models =
      " --model " + root + "/models/sg_ufno.h5 --model " + root + "/models/dp_ufno.h5";
  fs::remove_all("peak_in");
  fs::create_directories("peak_in");
  const char* examples[] = {"s1_i000026", "s1_i000031", "s1_i000087"};
  for (const char* e : examples)
    fs::copy_file(root + "/examples/opm/" + e + "/case.h5", std::string("peak_in/") + e + ".h5");
  fs::remove_all("peak_one");
  fs::remove_all("peak_pass");
  const auto one = test::run_command(std::string(UFNO_PREDICT_EXE) + " --threads 1" + models +
                                     " --cases peak_in --out peak_one --cases-per-pass 1");
  const auto pass = test::run_command(std::string(UFNO_PREDICT_EXE) + " --threads 2" + models +
                                      " --cases peak_in --out peak_pass --cases-per-pass 3");
  // Without --cases-per-pass the CPU's default with such a head is twice the threads a pass
  // (runtime/BatchRun.hpp): the three cases in one pass.
  fs::remove_all("peak_default");
  const auto dflt = test::run_command(std::string(UFNO_PREDICT_EXE) + " --threads 2" + models +
                                      " --cases peak_in --out peak_default");
  INFO(one.err << pass.err << dflt.err);
  REQUIRE(one.code == 0);
  REQUIRE(pass.code == 0);
  REQUIRE(dflt.code == 0);
  CHECK(pass.err.find("(one pass of 3 cases)") != std::string::npos);
  CHECK(dflt.err.find("(one pass of 3 cases)") != std::string::npos);
  for (const char* e : examples) {
    const std::string name = std::string("/") + e + ".h5";
    const auto a = field("peak_one" + name, "dP");
    for (const char* dir : {"peak_pass", "peak_default"}) {
      const auto b = field(dir + name, "dP");
      CHECK(rel_l2(a, b) <= 1e-5);
      CHECK(*std::max_element(a.begin(), a.end()) ==
            Approx(*std::max_element(b.begin(), b.end())).epsilon(1e-5));
    }
  }
}

TEST_CASE("a batch of case.h5 files in one directory per case writes one output each", "[batch]") {
  // The OPM data-set layout: DIR/case_000001/case.h5, DIR/case_000002/case.h5, ...
  make_cases("stem_flat", 3);
  fs::remove_all("stem_in");
  std::ofstream list("stem_list.txt");
  for (int i = 0; i < 3; ++i) {
    const std::string d = "stem_in/run_" + std::to_string(i);
    fs::create_directories(d);
    fs::copy_file("stem_flat/case_" + std::to_string(10 + i) + ".h5", d + "/case.h5");
    list << d << "/case.h5\n";
  }
  list.close();
  fs::remove_all("stem_out");
  Run r = predict(kModels + " --cases stem_list.txt --out stem_out");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("batch of 3 case(s): 3 done") != std::string::npos);
  for (int i = 0; i < 3; ++i) {
    const std::string out = "stem_out/run_" + std::to_string(i) + "_case.h5";
    REQUIRE(fs::exists(out));
    // Each output belongs to its own case (the cases differ in rate and permeability).
    Run one = predict(kModels + " --case stem_in/run_" + std::to_string(i) +
                      "/case.h5 --out stem_single.h5");
    REQUIRE(one.code == 0);
    CHECK(field("stem_single.h5", "SG") == field(out, "SG"));
    fs::remove("stem_single.h5");
  }
  SECTION("names that still collide are refused before anything runs") {
    { std::ofstream("stem_dup.txt") << "stem_in/run_0/case.h5\nstem_in/run_0/./case.h5\n"; }
    fs::remove_all("stem_dup_out");
    Run d = predict(kModels + " --cases stem_dup.txt --out stem_dup_out");
    CHECK(d.code == 2);
    CHECK(d.err.find("run_0_case.h5") != std::string::npos);
    CHECK(!fs::exists("stem_dup_out/run_0_case.h5"));
  }
}

TEST_CASE("a batch never overwrites its cases and trusts only its own outputs", "[batch][errors]") {
  make_cases("b_same", 2);
  // --out equal to the --cases directory: the outputs would be the case files themselves.
  Run r = predict(kModels + " --cases b_same --out b_same");
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("is the input file") != std::string::npos);
  CHECK(test::read_all("b_same/case_10.h5").arrays.count("PERMX") == 1);  // untouched
  // An existing file as --out.
  std::ofstream("b_file") << "x";
  r = predict(kModels + " --cases b_same --out b_file");
  CHECK(r.code == 2);
  CHECK(r.err.find("b_file: --out: exists and is not a directory") != std::string::npos);
  // A foreign HDF5 file under an output's name is not a finished result: it is predicted.
  fs::remove_all("b_out");
  fs::create_directories("b_out");
  fs::copy_file("b_same/case_10.h5", "b_out/case_10.h5");
  // A temporary of a long-dead run is removed; one of a live process is left alone.
  const std::string stale = "b_out/case_11.h5.tmp.999999999",
                    live = "b_out/case_11.h5.tmp." + std::to_string(getpid());
  std::ofstream(stale) << "partial";
  std::ofstream(live) << "partial";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(1));
  fs::last_write_time(live, fs::file_time_type::clock::now() - std::chrono::hours(1));
  r = predict(kModels + " --cases b_same --out b_out");
  CHECK(r.code == 0);
  CHECK(r.out.find("2 done, 0 skipped") != std::string::npos);
  CHECK(h5::File::open_read("b_out/case_10.h5").has_dataset("SG"));
  CHECK(!fs::exists(stale));
  CHECK(fs::exists(live));
  fs::remove(live);
  fs::remove("b_file");
}

TEST_CASE("a killed batch resumes to the same outputs", "[batch]") {
  make_cases("resume_in", 12);
  fs::remove_all("resume_full");
  REQUIRE(predict(kModels + " --cases resume_in --out resume_full").code == 0);
  fs::remove_all("resume_part");
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = std::string(UFNO_PREDICT_EXE) + " --threads 1 " + kModels +
                            " --cases resume_in --out resume_part > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), (char*)nullptr);
    _exit(127);
  }
  // Kill it as soon as the first output is complete.
  const auto t0 = std::chrono::steady_clock::now();
  while (!fs::exists("resume_part/case_10.h5") &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto partial =
      std::distance(fs::directory_iterator("resume_part"), fs::directory_iterator());
  INFO("outputs before the kill: " << partial);
  CHECK(partial < 12);
  // Outputs the killed run completed: renamed into place, with their viewer description (an
  // output killed before its description is predicted again).
  std::size_t finished = 0;
  for (const auto& e : fs::directory_iterator("resume_part")) {
    const std::string name = e.path().filename().string();
    finished += name.find(".tmp.") == std::string::npos && e.path().extension() == ".h5" &&
                fs::exists(fs::path(e.path()).replace_extension(".xmf"));
  }
  Run r = predict(kModels + " --cases resume_in --out resume_part");
  CHECK(r.code == 0);
  // Exactly the finished ones are skipped (the summary always prints a skipped count).
  CHECK(r.out.find(", " + std::to_string(finished) + " skipped (already done)") !=
        std::string::npos);
  // Temporaries of the killed run may remain; every final output equals the uninterrupted one.
  for (const auto& e : fs::directory_iterator("resume_part"))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path());
  expect_same_outputs("resume_full", "resume_part");
}

TEST_CASE("case-parallel groups of ranks give the single-process outputs", "[batch][mpi]") {
  make_cases("group_in", 5);
  fs::remove_all("group_ref");
  REQUIRE(predict(kModels + " --cases group_in --out group_ref").code == 0);
  for (const char* rpc : {"1", "2"}) {
    fs::remove_all("group_out");
    Run r = predict(kModels + " --cases group_in --out group_out --ranks-per-case " + rpc,
                    std::string(UFNO_MPIEXEC) + " -n 2 ");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("5 done") != std::string::npos);
    for (const auto& e : fs::directory_iterator("group_ref")) {
      // Each output's viewer description, the same whoever wrote it.
      const std::string other = "group_out/" + e.path().filename().string();
      REQUIRE(fs::exists(other));
      if (e.path().extension() == ".xmf") {
        std::ifstream x(e.path()), y(other);
        CHECK(std::string(std::istreambuf_iterator<char>(x), {}) ==
              std::string(std::istreambuf_iterator<char>(y), {}));
        continue;
      }
      for (const char* v : {"SG", "dP"}) {
        auto a = field(e.path().string(), v),
             b = field("group_out/" + e.path().filename().string(), v);
        // Groups of ranks sum in another order than one process (tests/test_mpi_predict.cpp).
        CHECK(test::compare(b, a).rel_l2 <= 1e-5);
      }
    }
  }
  Run bad = predict(kModels + " --cases group_in --out group_out --ranks-per-case 3",
                    std::string(UFNO_MPIEXEC) + " -n 2 ");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--ranks-per-case: 3 does not divide the 2 ranks") != std::string::npos);
}
