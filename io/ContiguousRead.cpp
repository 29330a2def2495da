#include "io/ContiguousRead.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

#include "core/InputError.hpp"
#include "core/Parallel.hpp"

namespace ufno::h5 {

namespace {

// Pieces of a few MB: enough for every thread, each one pread.
constexpr std::size_t kPiece = std::size_t(4) << 20;

bool stored_as_plain_float(hid_t dataset) {
  const hid_t type = H5Dget_type(dataset);
  const bool f32le = type >= 0 && H5Tequal(type, H5T_IEEE_F32LE) > 0;
  if (type >= 0) H5Tclose(type);
  const hid_t dcpl = H5Dget_create_plist(dataset);
  if (dcpl < 0) return false;
  const bool plain = H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_nfilters(dcpl) == 0;
  H5Pclose(dcpl);
  return f32le && plain && H5Tequal(H5T_NATIVE_FLOAT, H5T_IEEE_F32LE) > 0;
}

// The descriptor of a file HDF5 reads through its default (sec2) driver; -1 otherwise.
int sec2_descriptor(hid_t file) {
  const hid_t fapl = H5Fget_access_plist(file);
  if (fapl < 0) return -1;
  int fd = -1;
  void* handle = nullptr;
  if (H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(file, fapl, &handle) >= 0 && handle)
    fd = *static_cast<int*>(handle);
  H5Pclose(fapl);
  return fd;
}

}  // namespace

FileRun contiguous_float_run(hid_t file, hid_t dataset, const std::vector<std::size_t>& full,
                             const std::vector<std::size_t>& start,
                             const std::vector<std::size_t>& count) {
  if (full.empty() || full.size() != start.size() || full.size() != count.size()) return {};
  // Only a file opened to read: a file being written may hold data HDF5 has not yet flushed.
  unsigned intent = 0;
  if (H5Fget_intent(file, &intent) < 0 || intent != H5F_ACC_RDONLY) return {};
  std::size_t inner = 1;  // values of one step of the first axis
  for (std::size_t a = 1; a < full.size(); ++a) {
    if (start[a] != 0 || count[a] != full[a]) return {};
    inner *= full[a];
  }
  if (count[0] == 0 || inner == 0 || !stored_as_plain_float(dataset)) return {};
  const haddr_t base = H5Dget_offset(dataset);
  if (base == HADDR_UNDEF) return {};  // never written: HDF5 gives its fill value
  const int fd = sec2_descriptor(file);
  if (fd < 0) return {};
  return {fd, base + start[0] * inner * sizeof(float), count[0] * inner * sizeof(float)};
}

void read_run(const std::string& path, const std::string& name, const FileRun& run, void* dst) {
  const int fd = run.fd;
  if (fd < 0) throw InputError(path, name, "has no open file to read its data from");
  std::atomic<bool> short_read{false};
  const long pieces = long((run.bytes + kPiece - 1) / kPiece);
  ufno::host_parallel_for("ufno::h5_read_run", pieces, [&](const int64_t p) {
    std::size_t done = std::size_t(p) * kPiece;
    const std::size_t end = std::min(run.bytes, done + kPiece);
    char* out = static_cast<char*>(dst);
    while (done < end) {
      const ssize_t n = ::pread(fd, out + done, end - done, off_t(run.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        short_read = true;
        return;
      }
      done += std::size_t(n);
    }
  });
  if (short_read) throw InputError(path, name, "data cannot be read (corrupt or truncated file?)");
}

}  // namespace ufno::h5
