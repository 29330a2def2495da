#pragma once
// Runs a command line for the end-to-end tests and captures its exit code, stdout and stderr.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ufno::test {

struct Run {
  int code;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline Run run_command(const std::string& cmd) {
  // CI runs as root; Open MPI refuses that unless told.
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  const int status = std::system((cmd + " > cmd_stdout.txt 2> cmd_stderr.txt").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp("cmd_stdout.txt"),
          slurp("cmd_stderr.txt")};
}

inline std::size_t count_of(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace ufno::test
