#pragma once
// The prediction output file: /SG and/or /dP as (B, T, X, Y) float32 (time-major, the case grid)
// with units, and /TIMES in days. Written under a temporary name in the same directory and renamed
// into place by commit(), so a failed run never leaves a partial file behind. With a communicator
// every rank writes its (X, Y) block into the one shared file (parallel HDF5).
#include <mpi.h>

#include <string>
#include <vector>

#include "io/Hdf5File.hpp"

namespace ufno {

class OutputFile {
 public:
  explicit OutputFile(const std::string& path, MPI_Comm comm = MPI_COMM_NULL);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // global: (B, T, X, Y); values: this rank's block (B, T, lx, ly) at (0, 0, x0, y0).
  void write_field(const std::string& name, const std::vector<std::size_t>& global, int x0, int y0,
                   const std::vector<std::size_t>& block_shape, const std::vector<float>& values,
                   const std::string& units, const std::string& description);
  // Any dataset: global shape, this rank's block [start, start + count) of it.
  void write_block(const std::string& name, const std::vector<std::size_t>& global,
                   const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
                   const std::vector<float>& values, const std::string& units,
                   const std::string& description);
  void write_times(const std::vector<double>& days);
  void set_attribute(const std::string& name, const std::string& value);
  void commit();                    // collective
  h5::File& h5() { return file_; }  // for groups' attributes and float64 datasets
  const std::string& temporary_path() const { return tmp_; }

 private:
  std::string path_, tmp_;
  MPI_Comm comm_;
  int rank_ = 0;
  h5::File file_;
  bool committed_ = false;
};

}  // namespace ufno
