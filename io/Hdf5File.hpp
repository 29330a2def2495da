#pragma once
// A thin RAII layer over the HDF5 C API for the project's files: typed reads with the checks every
// reader needs (exists, numeric type, shape) and InputErrors that name the file and the field.
#include <hdf5.h>
#include <mpi.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/InputError.hpp"

namespace ufno::h5 {

// Owns one HDF5 identifier and closes it with the right function.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  ~Handle();
  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
};

enum class Kind { Float, Integer, String, Other };

struct Numeric {
  std::vector<std::size_t> shape;
  std::vector<double> values;
};

class File {
 public:
  // With a communicator of several ranks the file is opened through MPI-IO by every rank of it
  // (collective), and block reads and writes are collective; a communicator of one rank opens
  // it directly, as without one.
  static File open_read(const std::string& path, MPI_Comm comm = MPI_COMM_NULL);
  // Creates (truncates) `path`; the caller renames a temporary into place when complete.
  // `shown_as`: the name errors give (the output a temporary file becomes; by default `path`).
  static File create(const std::string& path, MPI_Comm comm = MPI_COMM_NULL,
                     const std::string& shown_as = "");

  const std::string& path() const { return path_; }
  hid_t id() const { return file_.id(); }

  bool has_dataset(const std::string& name) const;
  bool has_attribute(const std::string& name, const std::string& object = "/") const;
  std::vector<std::size_t> shape(const std::string& name) const;
  Kind kind(const std::string& name) const;
  std::vector<std::string> dataset_names() const;  // at the root

  // Reads a numeric dataset, converted by HDF5 to float/double; rejects non-numeric types.
  // Whole datasets; one that declares more than max_values values is refused before anything
  // is allocated (the defaults are far above any model, case or tensor of this program).
  std::vector<float> read_floats(const std::string& name, std::vector<std::size_t>* shape,
                                 std::size_t max_values = kMaxFloatValues) const;
  Numeric read_numeric(const std::string& name, std::size_t max_values = kMaxNumericValues) const;
  static constexpr std::size_t kMaxFloatValues = std::size_t(1) << 28;  // 1 GiB of float32
  static constexpr std::size_t kMaxNumericValues = std::size_t(1) << 20;
  // A dataset's string attribute, if present.
  std::optional<std::string> string_attribute(const std::string& object,
                                              const std::string& attr) const;
  // Numeric attribute of the root (or of `object`) as doubles.
  std::vector<double> numeric_attribute(const std::string& attr,
                                        const std::string& object = "/") const;
  std::string string_attribute_required(const std::string& attr,
                                        const std::string& object = "/") const;

  // Writers create the groups of a path ("GLOBAL/input") as needed.
  void write_floats(const std::string& name, const std::vector<std::size_t>& shape,
                    const float* data);
  // float64 dataset; an empty shape writes a scalar.
  void write_doubles(const std::string& name, const std::vector<std::size_t>& shape,
                     const double* data);

  // The hyperslab [start, start + count) of a numeric dataset as floats (collective in a
  // parallel file: every rank calls it, possibly with an empty count).
  std::vector<float> read_block(const std::string& name, const std::vector<std::size_t>& start,
                                const std::vector<std::size_t>& count) const;
  // The same into `out`, resized to the block (no reallocation or zero-fill when it already
  // has that size: a stream of equal blocks reuses one buffer).
  void read_block_into(const std::string& name, const std::vector<std::size_t>& start,
                       const std::vector<std::size_t>& count, std::vector<float>& out) const;
  // The same, converted to double (for physical properties that float32 could underflow).
  std::vector<double> read_block_double(const std::string& name,
                                        const std::vector<std::size_t>& start,
                                        const std::vector<std::size_t>& count) const;
  // Creates dataset `name` of shape `global` (collective) and writes this rank's hyperslab.
  void write_block(const std::string& name, const std::vector<std::size_t>& global,
                   const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
                   const float* data);
  void write_block(const std::string& name, const std::vector<std::size_t>& global,
                   const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
                   const double* data);  // float64
  void write_string_attribute(const std::string& object, const std::string& attr,
                              const std::string& value);
  void write_double_attribute(const std::string& object, const std::string& attr, double value);
  void write_int_attribute(const std::string& object, const std::string& attr,
                           const std::vector<int>& values);  // int32[n]
  void close();

 private:
  template <class T>
  void read_block_as(const std::string& name, hid_t memtype, const std::vector<std::size_t>& start,
                     const std::vector<std::size_t>& count, std::vector<T>& out) const;
  template <class T>
  void write_block_as(const std::string& name, hid_t filetype, hid_t memtype,
                      const std::vector<std::size_t>& global, const std::vector<std::size_t>& start,
                      const std::vector<std::size_t>& count, const T* data);
  File(std::string path, hid_t id, bool parallel)
      : path_(std::move(path)), file_(id), parallel_(parallel) {}
  Handle open_dataset(const std::string& name) const;
  std::string path_;
  Handle file_;
  bool parallel_ = false;
};

// Turns off HDF5's own error stack printing: errors are reported once, as InputErrors.
void silence_errors();

}  // namespace ufno::h5
