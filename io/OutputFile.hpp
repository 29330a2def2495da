#pragma once
// The prediction output file: /SG and/or /dP as (B, T, X, Y) float32 (time-major, the cropped
// grid) with units, and /TIMES in days. Written under a temporary name in the same directory and
// renamed into place by commit(), so a failed run never leaves a partial file behind.
#include <string>
#include <vector>

#include "io/Hdf5File.hpp"

namespace ufno {

class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // values: (B, T, X, Y) row-major.
  void write_field(const std::string& name, const std::vector<std::size_t>& shape,
                   const std::vector<float>& values, const std::string& units,
                   const std::string& description);
  void write_times(const std::vector<double>& days);
  void set_attribute(const std::string& name, const std::string& value);
  void commit();
  const std::string& temporary_path() const { return tmp_; }

 private:
  std::string path_, tmp_;
  h5::File file_;
  bool committed_ = false;
};

}  // namespace ufno
