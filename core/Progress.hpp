#pragma once
// Progress of a long run (a batch of cases, a sweep's scenarios, the nested chain's levels, an
// import, the Flow verification) on a stream, stderr by default. On a terminal: one bar redrawn
// in place with the steps done and an estimate of the time left, and a failed step's message on a
// line of its own. Otherwise (a log file, a batch job's output): one line per step,
// "tool: [i/n] what: status", which scripts and logs can read.
#include <chrono>
#include <cstdio>
#include <string>

namespace ufno {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  // `bar`: draw the bar (true only where the stream is a terminal: use on_terminal()).
  Progress(std::string tool, int total, bool bar, std::FILE* out = stderr);
  ~Progress();  // ends the bar's line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  static bool on_terminal(std::FILE* out = stderr);

  // Step `index` (0-based, of total) ended with `status`; a status starting "FAILED" is a failure
  // and is shown in full on a terminal too.
  void step(int index, const std::string& what, const std::string& status);
  void finish();  // ends the bar's line (idempotent)

  // The estimate the bar shows: elapsed / done x (total - done), e.g. "2 min 05 s left".
  static std::string time_left(double elapsed_s, int done, int total);

 private:
  std::string tool_;
  int total_;
  bool bar_;
  std::FILE* out_;
  int done_ = 0;
  bool open_line_ = false;
  Clock::time_point start_ = Clock::now();
};

}  // namespace ufno
