#include "io/Temporaries.hpp"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace ufno {

std::string temporary_name(const std::string& path, long pid) {
  return path + ".tmp." + std::to_string(pid);
}

void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = p.filename().string() + ".tmp.";
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '\0') continue;  // not one of ours
    const bool alive = ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
    std::error_code ec2;
    const auto age = fs::file_time_type::clock::now() - fs::last_write_time(e.path(), ec2);
    if (!alive && !ec2 && age > std::chrono::minutes(10)) fs::remove_all(e.path(), ec2);
  }
}

}  // namespace ufno
