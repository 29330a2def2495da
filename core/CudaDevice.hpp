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

// This process's current device and its free memory in bytes (cudaMemGetInfo); throws when the
// runtime cannot tell.
struct DeviceMemory {
  int device = 0;
  double free_bytes = 0;
};
DeviceMemory current_device_memory();

// Waits for all work queued on the current device; errors of asynchronous kernels surface here.
void synchronize();

// The stream of the default Kokkos execution space, as a cudaStream_t (void* here so that no CUDA
// type appears in this header). Every library call of the backend (cuBLAS, cuFFT, cuDNN) and its
// own kernels run on it, so they are ordered with the Kokkos kernels that write their inputs and
// read their outputs, with no fence before and no device synchronisation after. In a build whose
// Kokkos has no CUDA (the backend is then only compiled and tested directly) it is the default
// stream.
void* kokkos_stream();

// Waits for the work queued on kokkos_stream() (before results are read on the host).
void synchronize_stream();

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

  // Copies of the first `bytes` bytes, on kokkos_stream(), returning when they are done (after
  // the work queued before them on that stream).
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace ufno::backend::cuda
