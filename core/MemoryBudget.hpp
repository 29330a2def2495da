#pragma once
// How much host memory this process can still take: the smaller of the kernel's estimate of
// memory available without swapping (/proc/meminfo's MemAvailable) and the headroom of every
// memory cgroup it belongs to, up to the root (cgroup v2 memory.max - memory.current, or v1
// memory.limit_in_bytes - memory.usage_in_bytes: how Slurm and containers bound a job).
//
// Why: Linux overcommits, so a run that needs more memory than the node has is not refused at
// allocation; the kernel's OOM killer ends it when the pages are touched, with no message. A
// program that knows its need beforehand compares it with this budget and refuses in one line.
#include <optional>
#include <string>

namespace ufno {

// Where the files are read from (tests point these at a made-up tree).
struct MemorySources {
  std::string proc = "/proc";                // meminfo, self/cgroup
  std::string cgroup_fs = "/sys/fs/cgroup";  // v2 unified tree, or v1's per-controller trees
  // A device reading that replaces the GPU runtime's (tests): which device, its free bytes.
  std::optional<int> device;
  std::optional<double> device_free;
};

// Bytes; nullopt when nothing could be read (no check is then possible).
std::optional<double> available_host_memory(const MemorySources& where = {});

// The GPU this process runs on and its free memory (cudaMemGetInfo), where the tensors live on a
// GPU or `where` gives a reading; nullopt otherwise (host tensors: the host budget applies).
struct DeviceMemoryReading {
  int device = 0;
  double free_bytes = 0;
};
std::optional<DeviceMemoryReading> available_device_memory(const MemorySources& where = {});

}  // namespace ufno
