#pragma once
// CUDA runtime services that callers of the CUDA backend need without including CUDA headers:
// whether a device is usable (and, if not, why), device buffers and host <-> device copies.
#include <cstddef>
#include <string>

namespace ufno::backend::cuda {

struct DeviceQuery {
  int count = 0;       // devices the CUDA runtime can use; 0 when there are none
  std::string reason;  // the runtime's explanation when count == 0
};

// Never throws: on a machine without a GPU or driver it reports count 0 and the runtime's error.
DeviceQuery query_devices();

// Waits for all work queued on the current device; errors of asynchronous kernels surface here.
void synchronize();

// An owning, move-only allocation of device memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return p_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const { return bytes_; }

  // Blocking copies of the first `bytes` bytes.
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace ufno::backend::cuda
