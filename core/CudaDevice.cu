// CUDA runtime services of CudaDevice.hpp.
#include <utility>

#include "core/CudaCheck.cuh"
#include "core/CudaDevice.hpp"

#include <Kokkos_Core.hpp>

namespace ufno::backend::cuda {

DeviceQuery query_devices() {
  DeviceQuery q;
  const cudaError_t e = cudaGetDeviceCount(&q.count);
  if (e != cudaSuccess) {
    q.count = 0;
    q.reason =
        std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + ", " + cudaGetErrorString(e);
    cudaGetLastError();  // clear it, so that it is not reported by an unrelated later call
  } else if (q.count == 0) {
    q.reason = "cudaGetDeviceCount reported 0 devices";
  }
  return q;
}

DeviceMemory current_device_memory() {
  DeviceMemory m;
  check_cuda(cudaGetDevice(&m.device), "cudaGetDevice");
  std::size_t free = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  m.free_bytes = double(free);
  return m;
}

void synchronize() { check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

void* kokkos_stream() {
#if defined(KOKKOS_ENABLE_CUDA)
  return Kokkos::DefaultExecutionSpace().cuda_stream();
#else
  return nullptr;  // the default stream
#endif
}

void synchronize_stream() {
  check_cuda(cudaStreamSynchronize(static_cast<cudaStream_t>(kokkos_stream())),
             "cudaStreamSynchronize");
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) check_cuda(cudaMalloc(&p_, bytes), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);  // no throw from a destructor; a failing free has nothing to undo
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = std::exchange(o.p_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  if (bytes > bytes_) throw std::invalid_argument("DeviceBuffer: upload larger than the buffer");
  if (bytes == 0) return;
  const auto stream = static_cast<cudaStream_t>(kokkos_stream());
  check_cuda(cudaMemcpyAsync(p_, host, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpy H2D");
  synchronize_stream();
}

void DeviceBuffer::download(void* host, std::size_t bytes) const {
  if (bytes > bytes_) throw std::invalid_argument("DeviceBuffer: download larger than the buffer");
  if (bytes == 0) return;
  const auto stream = static_cast<cudaStream_t>(kokkos_stream());
  check_cuda(cudaMemcpyAsync(host, p_, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpy D2H");
  synchronize_stream();
}

}  // namespace ufno::backend::cuda
