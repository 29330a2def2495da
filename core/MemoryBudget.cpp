#include "core/MemoryBudget.hpp"

#include "core/CudaDevice.hpp"
#include "core/Tensor.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace ufno {

namespace {

// The first number in a file ("max" and unreadable files give nothing).
std::optional<double> number_in(const std::string& path) {
  std::ifstream f(path);
  std::string word;
  if (!(f >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  try {
    return std::stod(word);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> mem_available(const std::string& meminfo) {
  std::ifstream f(meminfo);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream s(line);
    std::string key, unit;
    double kib = -1;
    if (s >> key >> kib >> unit && key == "MemAvailable:" && kib >= 0 && unit == "kB")
      return kib * 1024.0;
  }
  return std::nullopt;
}

// "/a/b" -> "/a/b", "/a", "/" (a limit may sit on any ancestor: Slurm puts it on the job, the
// process lives in a step below it).
std::vector<std::string> self_and_ancestors(std::string path) {
  std::vector<std::string> r;
  while (!path.empty() && path.back() == '/' && path.size() > 1) path.pop_back();
  while (true) {
    r.push_back(path);
    const auto cut = path.find_last_of('/');
    if (path == "/" || cut == std::string::npos) break;
    path = cut == 0 ? "/" : path.substr(0, cut);
  }
  return r;
}

// Values this large mean "no limit" in cgroup v1 (PAGE_COUNTER_MAX rounded to pages).
constexpr double kUnlimited = double(1ull << 60);

// A key's value in memory.stat ("inactive_file 123" lines).
double stat_value(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string k;
  double v = 0;
  while (f >> k >> v)
    if (k == key) return v;
  return 0.0;
}

// Limit minus usage, where usage leaves out the inactive page cache, which the kernel reclaims
// before it counts as a shortage (reading the input files fills it).
std::optional<double> headroom(const std::string& dir, const char* limit_file,
                               const char* usage_file, const char* inactive_key) {
  const auto limit = number_in(dir + "/" + limit_file);
  if (!limit || *limit >= kUnlimited) return std::nullopt;
  const double usage = number_in(dir + "/" + usage_file).value_or(0.0);
  const double cache = stat_value(dir + "/memory.stat", inactive_key);
  return std::max(0.0, *limit - std::max(0.0, usage - cache));
}

std::optional<double> cgroup_headroom(const MemorySources& where) {
  std::ifstream f(where.proc + "/self/cgroup");
  std::string line;
  std::optional<double> best;
  auto take = [&best](std::optional<double> h) {
    if (h) best = best ? std::min(*best, *h) : *h;
  };
  while (std::getline(f, line)) {
    // hierarchy-id:controllers:path; v2 is "0::path", v1 names "memory" among its controllers.
    const auto a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (path.empty() || path[0] != '/' || path.find("..") != std::string::npos) continue;
    const bool v2 = line.compare(0, a, "0") == 0 && controllers.empty();
    bool v1 = false;
    std::istringstream c(controllers);
    for (std::string name; std::getline(c, name, ',');) v1 = v1 || name == "memory";
    for (const auto& p : self_and_ancestors(path)) {
      const std::string rel = p == "/" ? "" : p;
      if (v2)
        take(headroom(where.cgroup_fs + rel, "memory.max", "memory.current", "inactive_file"));
      if (v1)
        take(headroom(where.cgroup_fs + "/memory" + rel, "memory.limit_in_bytes",
                      "memory.usage_in_bytes", "total_inactive_file"));
    }
  }
  return best;
}

}  // namespace

std::optional<double> available_host_memory(const MemorySources& where) {
  const auto mem = mem_available(where.proc + "/meminfo");
  const auto cg = cgroup_headroom(where);
  if (mem && cg) return std::min(*mem, *cg);
  return mem ? mem : cg;
}

std::optional<DeviceMemoryReading> available_device_memory(const MemorySources& where) {
  if (where.device_free) return DeviceMemoryReading{where.device.value_or(0), *where.device_free};
  if constexpr (kHostTensors) {
    return std::nullopt;
  } else {
    try {
      const backend::cuda::DeviceMemory m = backend::cuda::current_device_memory();
      return DeviceMemoryReading{m.device, m.free_bytes};
    } catch (const std::exception&) {
      return std::nullopt;  // no reading: no check, as on a host without /proc
    }
  }
}

}  // namespace ufno
