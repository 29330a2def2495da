// core/Progress: the one-line-a-step form scripts and logs read, the bar's estimate of the time
// left, and the bar's failure lines.
#include "core/Progress.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace {

// What a Progress wrote to a temporary stream.
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
  return s;
}

}  // namespace

TEST_CASE("progress off a terminal is one line per step, in the order reported") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  {
    ufno::Progress p("ufno_sweep", 3, false, f);
    p.step(0, "scenario_0000.h5", "done in 0.10 s");
    p.step(2, "scenario_0002.h5", "FAILED: bad case");
    p.step(1, "scenario_0001.h5", "skipped (output exists)");
  }
  CHECK(contents(f) ==
        "ufno_sweep: [1/3] scenario_0000.h5: done in 0.10 s\n"
        "ufno_sweep: [3/3] scenario_0002.h5: FAILED: bad case\n"
        "ufno_sweep: [2/3] scenario_0001.h5: skipped (output exists)\n");
  std::fclose(f);
}

TEST_CASE("the bar redraws in place, names a failure on its own line and ends its line") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  {
    ufno::Progress p("ufno_predict", 2, true, f);
    p.step(0, "a.h5", "FAILED: no such file");
    p.step(1, "b.h5", "done in 1 s");
  }
  const std::string s = contents(f);
  CHECK(s.rfind("\r[###############               ] 1/2 ", 0) == 0);
  CHECK(s.find("\nufno_predict: a.h5: FAILED: no such file\n") != std::string::npos);
  CHECK(s.find("\r[##############################] 2/2 ") != std::string::npos);
  CHECK(s.back() == '\n');
  CHECK(s.find("b.h5") == std::string::npos);  // a step that went well is only counted
  std::fclose(f);
}

TEST_CASE("the time left is the mean time a step so far times the steps left") {
  CHECK(ufno::Progress::time_left(10, 1, 4) == "30 s left");
  CHECK(ufno::Progress::time_left(125, 5, 10) == "2 min 05 s left");
  CHECK(ufno::Progress::time_left(3600, 1, 3) == "2 h 00 min left");
  CHECK(ufno::Progress::time_left(10, 0, 4).empty());  // nothing measured yet
  CHECK(ufno::Progress::time_left(10, 4, 4).empty());  // done
}
