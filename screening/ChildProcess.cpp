#include "screening/ChildProcess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace ufno {

ProcessResult run_process(const std::vector<std::string>& args, const std::string& log_path,
                          double timeout_s, const std::vector<std::string>& environment) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  ProcessResult r;
  // The environment: this process's, each NAME=value of `environment` replacing NAME's.
  std::vector<std::string> env(environment);
  for (char** e = environ; *e; ++e) {
    const std::string var(*e);
    const std::string name = var.substr(0, var.find('=') + 1);
    bool replaced = false;
    for (const auto& o : environment) replaced = replaced || o.rfind(name, 0) == 0;
    if (!replaced) env.push_back(var);
  }
  std::vector<char*> envp;
  for (auto& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  const int e = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (e != 0) {
    r.error = "cannot start " + args[0] + " (" + std::strerror(e) + ")";
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      r.error = "timed out after " + std::to_string(int(timeout_s)) + " s";
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  if (r.status != 0)
    r.error = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                  : "exit status " + std::to_string(r.status);
  return r;
}

}  // namespace ufno
