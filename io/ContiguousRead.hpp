#pragma once
// A dataset's block read straight from the file with pread, on the host threads, where HDF5 would
// copy it on one thread: a float32 little-endian dataset stored contiguously and unfiltered, whose
// block is one run of the file (every axis after the first whole). The 4-D FNO streams 1.2 GB of
// spectral weights a pass this way, the other thread no longer waiting on the read.
#include <hdf5.h>

#include <cstddef>
#include <string>
#include <vector>

namespace ufno::h5 {

// The block's byte range in the file, when it can be read directly: {descriptor, offset, bytes};
// bytes 0 when it cannot (a file open to write or through another driver than sec2's, a chunked
// or compressed dataset, another datatype, a block of several runs). The descriptor is the one
// HDF5 holds: a file renamed over the path since it was opened is never read in its place.
struct FileRun {
  int fd = -1;
  unsigned long long offset = 0;
  std::size_t bytes = 0;
};
FileRun contiguous_float_run(hid_t file, hid_t dataset, const std::vector<std::size_t>& full,
                             const std::vector<std::size_t>& start,
                             const std::vector<std::size_t>& count);

// Reads run.bytes bytes at run.offset of run.fd into dst on the host threads; throws InputError
// naming the file and dataset when the file ends before the run does.
void read_run(const std::string& path, const std::string& name, const FileRun& run, void* dst);

}  // namespace ufno::h5
