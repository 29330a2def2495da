#pragma once
// Another program run to its end from this one (OPM Flow for the sweep's verification, the
// screening report's Python): stdin from /dev/null, stdout and stderr into a log file, killed
// when it runs past its time, the environment this process's with some variables replaced.
#include <string>
#include <vector>

namespace ufno {

struct ProcessResult {
  int status = -1;  // exit status; -1: killed, signalled or not started
  bool timed_out = false;
  std::string error;  // in words when status != 0: why
};

// Runs args (args[0] looked up on PATH) with stdout and stderr to log_path, killing it after
// timeout_s; each "NAME=value" of `environment` replaces NAME in the child's environment.
ProcessResult run_process(const std::vector<std::string>& args, const std::string& log_path,
                          double timeout_s, const std::vector<std::string>& environment = {});

}  // namespace ufno
