// io/ContiguousRead: which dataset blocks are read straight from the file with pread (a plain
// float32 dataset, a block of whole trailing axes, a file open to read), that those reads give
// HDF5's values, and that a run past the file's end is refused naming the file.
#include "io/ContiguousRead.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <numeric>
#include <vector>

#include "core/InputError.hpp"
#include "io/Hdf5File.hpp"

namespace fs = std::filesystem;
using ufno::h5::File;

namespace {

// A 5 x 3 x 4 float32 dataset "plain" (contiguous), the same values chunked and compressed as
// "packed", and as float64 "double".
// Each test case its own file (`tag`): CTest runs the cases as separate tests, side by side.
std::string make_file(std::vector<float>& values, const std::string& tag) {
  const std::string path =
      (fs::temp_directory_path() / ("ufno_contiguous_" + tag + ".h5")).string();
  values.resize(60);
  std::iota(values.begin(), values.end(), 0.5f);
  auto f = File::create(path);
  f.write_floats("plain", {5, 3, 4}, values.data());
  const std::vector<double> d(values.begin(), values.end());
  f.write_doubles("double", {5, 3, 4}, d.data());
  const hsize_t dims[3] = {5, 3, 4}, chunk[3] = {1, 3, 4};
  const hid_t space = H5Screate_simple(3, dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_deflate(dcpl, 4);
  const hid_t ds =
      H5Dcreate2(f.id(), "packed", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
  return path;
}

ufno::h5::FileRun run_of(const File& f, const std::string& name,
                         const std::vector<std::size_t>& start,
                         const std::vector<std::size_t>& count) {
  const hid_t d = H5Dopen2(f.id(), name.c_str(), H5P_DEFAULT);
  const auto run = ufno::h5::contiguous_float_run(f.id(), d, {5, 3, 4}, start, count);
  H5Dclose(d);
  return run;
}

}  // namespace

TEST_CASE("only a plain float32 block of whole trailing axes, open to read, is one run") {
  std::vector<float> values;
  const std::string path = make_file(values, "runs");
  const File f = File::open_read(path);
  const auto whole = run_of(f, "plain", {0, 0, 0}, {5, 3, 4});
  CHECK(whole.bytes == 60 * sizeof(float));
  const auto rows = run_of(f, "plain", {2, 0, 0}, {2, 3, 4});
  CHECK(rows.bytes == 24 * sizeof(float));
  CHECK(rows.offset == whole.offset + 24 * sizeof(float));
  CHECK(run_of(f, "plain", {0, 1, 0}, {5, 2, 4}).bytes == 0);  // several runs
  CHECK(run_of(f, "packed", {0, 0, 0}, {5, 3, 4}).bytes == 0);
  CHECK(run_of(f, "double", {0, 0, 0}, {5, 3, 4}).bytes == 0);
  // A file open to write may hold data HDF5 has not flushed.
  auto w = File::create((fs::temp_directory_path() / "ufno_contiguous_write.h5").string());
  w.write_floats("plain", {5, 3, 4}, values.data());
  CHECK(run_of(w, "plain", {0, 0, 0}, {5, 3, 4}).bytes == 0);
}

TEST_CASE("direct reads give HDF5's values, whole and by block, and fallbacks agree") {
  std::vector<float> values;
  const std::string path = make_file(values, "values");
  const File f = File::open_read(path);
  CHECK(f.read_floats("plain", nullptr) == values);
  CHECK(f.read_floats("packed", nullptr) == values);
  const std::vector<float> middle(values.begin() + 12, values.begin() + 36);
  CHECK(f.read_block("plain", {1, 0, 0}, {2, 3, 4}) == middle);
  CHECK(f.read_block("packed", {1, 0, 0}, {2, 3, 4}) == middle);
  // A block of several runs goes through HDF5: (0..4, 1, 0..3).
  std::vector<float> column;
  for (int x = 0; x < 5; ++x)
    for (int t = 0; t < 4; ++t) column.push_back(values[x * 12 + 4 + t]);
  CHECK(f.read_block("plain", {0, 1, 0}, {5, 1, 4}) == column);
}

TEST_CASE("a file with a user block is read at the dataset's true offset") {
  // HDF5 addresses start after a user block; a direct read must land on the data all the same.
  const std::string path = (fs::temp_directory_path() / "ufno_contiguous_userblock.h5").string();
  std::vector<float> values(300);
  std::iota(values.begin(), values.end(), -7.25f);
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_userblock(fcpl, 1024);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  const hsize_t dims[2] = {30, 10};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t ds =
      H5Dcreate2(file, "w", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Dclose(ds);
  H5Sclose(space);
  H5Fclose(file);
  H5Pclose(fcpl);
  const File f = File::open_read(path);
  const hid_t d = H5Dopen2(f.id(), "w", H5P_DEFAULT);
  CHECK(ufno::h5::contiguous_float_run(f.id(), d, {30, 10}, {0, 0}, {30, 10}).offset >= 1024);
  H5Dclose(d);
  CHECK(f.read_floats("w", nullptr) == values);
  const std::vector<float> rows(values.begin() + 50, values.begin() + 120);
  CHECK(f.read_block("w", {5, 0}, {7, 10}) == rows);
}

TEST_CASE("a run past the file's end is refused in one line naming the file and dataset") {
  std::vector<float> values;
  const std::string path = make_file(values, "beyond");
  const File f = File::open_read(path);
  std::vector<float> dst(1 << 20);
  ufno::h5::FileRun beyond = run_of(f, "plain", {0, 0, 0}, {5, 3, 4});
  REQUIRE(beyond.fd >= 0);
  beyond.offset = fs::file_size(path) - 8;
  beyond.bytes = dst.size() * sizeof(float);
  CHECK_THROWS_WITH(
      ufno::h5::read_run(path, "conv.weights1", beyond, dst.data()),
      Catch::Contains(path) && Catch::Contains("conv.weights1") && Catch::Contains("truncated"));
  CHECK_THROWS_AS(ufno::h5::read_run("m.h5", "w", {-1, 0, 4}, dst.data()), ufno::InputError);
}

TEST_CASE("a file renamed over the path after it was opened is not read in its place") {
  // The direct read uses HDF5's own descriptor: the data are the opened file's.
  std::vector<float> values;
  const std::string path = make_file(values, "renamed");
  const File f = File::open_read(path);
  const std::vector<float> other(values.size(), 99.f);
  const std::string next = (fs::temp_directory_path() / "ufno_contiguous_next.h5").string();
  {
    auto w = File::create(next);
    w.write_floats("plain", {5, 3, 4}, other.data());
  }
  fs::rename(next, path);
  CHECK(f.read_floats("plain", nullptr) == values);
  CHECK(f.read_block("plain", {1, 0, 0}, {2, 3, 4}) ==
        std::vector<float>(values.begin() + 12, values.begin() + 36));
}
