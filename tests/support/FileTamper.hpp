#pragma once
// Makes broken copies of good fixture files for the error tests.
#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace ufno::test {

inline std::string copy_fixture(const std::string& src, const std::string& dst) {
  std::filesystem::copy_file(src, dst, std::filesystem::copy_options::overwrite_existing);
  return dst;
}

// Attribute `name` of `object` (the root group by default) replaced by `values` (a scalar for
// one value), stored as `file_type` from memory of `mem_type`.
template <class T>
void set_numeric_attribute(const std::string& path, const std::string& name,
                           const std::vector<T>& values, const std::string& object, hid_t file_type,
                           hid_t mem_type) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (H5Aexists_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT) > 0)
    H5Adelete_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT);
  hsize_t n = values.size();
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
  hid_t a = H5Acreate_by_name(f, object.c_str(), name.c_str(), file_type, sp, H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, mem_type, values.data());
  H5Aclose(a);
  H5Sclose(sp);
  H5Fclose(f);
}

inline void set_int_attribute(const std::string& path, const std::string& name,
                              const std::vector<int>& values, const std::string& object = "/") {
  set_numeric_attribute(path, name, values, object, H5T_STD_I32LE, H5T_NATIVE_INT);
}

inline void set_double_attribute(const std::string& path, const std::string& name,
                                 const std::vector<double>& values,
                                 const std::string& object = "/") {
  set_numeric_attribute(path, name, values, object, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
}

inline void set_string_attribute(const std::string& path, const std::string& name,
                                 const std::string& value, const std::string& object = "/") {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (H5Aexists_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT) > 0)
    H5Adelete_by_name(f, object.c_str(), name.c_str(), H5P_DEFAULT);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, value.size() + 1);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate_by_name(f, object.c_str(), name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT);
  H5Awrite(a, t, value.c_str());
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  H5Fclose(f);
}

inline void delete_attribute(const std::string& path, const std::string& name) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Adelete(f, name.c_str());
  H5Fclose(f);
}

inline void delete_dataset(const std::string& path, const std::string& name) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, name.c_str(), H5P_DEFAULT);
  H5Fclose(f);
}

// Overwrites the first element of a float dataset.
inline void poison_first_value(const std::string& path, const std::string& name, float v) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  hid_t fs = H5Dget_space(d);
  const int rank = H5Sget_simple_extent_ndims(fs);
  std::vector<hsize_t> start(rank, 0), count(rank, 1);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  hsize_t one = 1;
  hid_t ms = H5Screate_simple(1, &one, nullptr);
  H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, &v);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(d);
  H5Fclose(f);
}

// Keeps only the first `bytes` bytes of a file.
inline void truncate_file(const std::string& path, std::uintmax_t bytes) {
  std::filesystem::resize_file(path, bytes);
}

}  // namespace ufno::test
