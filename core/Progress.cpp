#include "core/Progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace ufno {

Progress::Progress(std::string tool, int total, bool bar, std::FILE* out)
    : tool_(std::move(tool)), total_(std::max(total, 1)), bar_(bar), out_(out) {}

Progress::~Progress() { finish(); }

bool Progress::on_terminal(std::FILE* out) { return isatty(fileno(out)) == 1; }

std::string Progress::time_left(double elapsed_s, int done, int total) {
  if (done <= 0 || done >= total) return "";
  const long s = std::lround(elapsed_s / done * (total - done));
  char buf[48];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld h %02ld min left", s / 3600, s % 3600 / 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%ld min %02ld s left", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld s left", s);
  return buf;
}

void Progress::step(int index, const std::string& what, const std::string& status) {
  ++done_;
  const bool failed = status.rfind("FAILED", 0) == 0;
  if (!bar_) {
    std::fprintf(out_, "%s: [%d/%d] %s: %s\n", tool_.c_str(), index + 1, total_, what.c_str(),
                 status.c_str());
    std::fflush(out_);
    return;
  }
  const int w = 30, filled = std::min(done_, total_) * w / total_;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  // Padded so that a shorter estimate overwrites a longer one.
  std::fprintf(out_, "\r[%s%s] %d/%d %-24s", std::string(filled, '#').c_str(),
               std::string(w - filled, ' ').c_str(), done_, total_,
               time_left(elapsed, done_, total_).c_str());
  open_line_ = true;
  if (failed) {
    std::fprintf(out_, "\n%s: %s: %s\n", tool_.c_str(), what.c_str(), status.c_str());
    open_line_ = false;
  }
  std::fflush(out_);
}

void Progress::finish() {
  if (open_line_) std::fprintf(out_, "\n");
  open_line_ = false;
}

}  // namespace ufno
