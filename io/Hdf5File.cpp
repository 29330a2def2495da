#include "io/Hdf5File.hpp"

#include <cmath>
#include <filesystem>
#include <type_traits>

#include "io/ContiguousRead.hpp"

namespace ufno::h5 {

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    this->~Handle();
    id_ = o.id_;
    o.id_ = -1;
  }
  return *this;
}

Handle::~Handle() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE:
      H5Fclose(id_);
      break;
    case H5I_DATASET:
      H5Dclose(id_);
      break;
    case H5I_DATASPACE:
      H5Sclose(id_);
      break;
    case H5I_DATATYPE:
      H5Tclose(id_);
      break;
    case H5I_ATTR:
      H5Aclose(id_);
      break;
    case H5I_GROUP:
      H5Gclose(id_);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id_);
      break;
    default:
      break;
  }
  id_ = -1;
}

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

namespace {

// Whether the file goes through MPI-IO: only when more than one rank shares it. A rank alone
// (a one-process run, a batch's rank with a case of its own) reads and writes it directly:
// MPI-IO's start (lock files, shared-memory segments) buys nothing there.
bool through_mpi_io(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return false;
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size > 1;
}

// File access through MPI-IO when `parallel`.
Handle access_list(MPI_Comm comm, bool parallel) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (parallel) H5Pset_fapl_mpio(fapl.id(), comm, MPI_INFO_NULL);
  return fapl;
}

// Dataset creation that makes the groups of a path such as "GLOBAL/input" on the way.
Handle link_list() {
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.id(), 1);
  return lcpl;
}

Handle transfer_list(bool parallel) {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER));
  if (parallel) H5Pset_dxpl_mpio(dxpl.id(), H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

}  // namespace

File File::open_read(const std::string& path, MPI_Comm comm) {
  silence_errors();
  // A FIFO or device would block or stream forever: only regular files are read.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InputError(path, "", "is not a regular file (a directory, device or FIFO)");
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw InputError(path, "", "cannot be opened (missing or unreadable)");
    std::fclose(f);
    throw InputError(path, "", "is not a readable HDF5 file (corrupt or truncated?)");
  }
  const bool parallel = through_mpi_io(comm);
  Handle fapl = access_list(comm, parallel);
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.id());
  if (id < 0) throw InputError(path, "", "is not a readable HDF5 file (corrupt or truncated?)");
  return File(path, id, parallel);
}

File File::create(const std::string& path, MPI_Comm comm, const std::string& shown_as) {
  silence_errors();
  const bool parallel = through_mpi_io(comm);
  Handle fapl = access_list(comm, parallel);
  const std::string& name = shown_as.empty() ? path : shown_as;
  hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id());
  if (id < 0) throw InputError(name, "", "cannot be created (directory missing or not writable?)");
  return File(name, id, parallel);
}

void File::close() {
  if (file_.valid() && H5Fflush(file_.id(), H5F_SCOPE_GLOBAL) < 0)
    throw InputError(path_, "", "could not be flushed to disk");
  file_ = Handle();
}

bool File::has_dataset(const std::string& name) const {
  if (H5Lexists(file_.id(), name.c_str(), H5P_DEFAULT) <= 0) return false;
  Handle d(H5Dopen2(file_.id(), name.c_str(), H5P_DEFAULT));
  return d.valid();
}

bool File::has_attribute(const std::string& name, const std::string& object) const {
  return H5Aexists_by_name(file_.id(), object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

Handle File::open_dataset(const std::string& name) const {
  if (!has_dataset(name)) throw InputError(path_, name, "dataset is missing");
  Handle d(H5Dopen2(file_.id(), name.c_str(), H5P_DEFAULT));
  if (!d.valid()) throw InputError(path_, name, "dataset cannot be opened (corrupt file?)");
  return d;
}

std::vector<std::size_t> File::shape(const std::string& name) const {
  Handle d = open_dataset(name);
  Handle sp(H5Dget_space(d.id()));
  const int rank = H5Sget_simple_extent_ndims(sp.id());
  if (rank < 0) throw InputError(path_, name, "dataspace cannot be read (corrupt file?)");
  std::vector<hsize_t> dims(rank);
  H5Sget_simple_extent_dims(sp.id(), dims.data(), nullptr);
  return std::vector<std::size_t>(dims.begin(), dims.end());
}

Kind File::kind(const std::string& name) const {
  Handle d = open_dataset(name);
  Handle t(H5Dget_type(d.id()));
  switch (H5Tget_class(t.id())) {
    case H5T_FLOAT:
      return Kind::Float;
    case H5T_INTEGER:
      return Kind::Integer;
    case H5T_STRING:
      return Kind::String;
    default:
      return Kind::Other;
  }
}

std::vector<std::string> File::dataset_names() const {
  std::vector<std::string> names;
  H5G_info_t info;
  if (H5Gget_info(file_.id(), &info) < 0)
    throw InputError(path_, "/", "cannot list the root group");
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char buf[1024];
    ssize_t n = H5Lget_name_by_idx(file_.id(), "/", H5_INDEX_NAME, H5_ITER_INC, i, buf, sizeof buf,
                                   H5P_DEFAULT);
    if (n > 0 && std::size_t(n) < sizeof buf && has_dataset(buf)) names.emplace_back(buf);
  }
  return names;
}

namespace {
// The number of values of a dataset of shape s, refused (before anything is allocated) beyond
// `max_values` or when the product overflows.
std::size_t checked_count(const std::string& path, const std::string& name,
                          const std::vector<std::size_t>& s, std::size_t max_values) {
  std::size_t n = 1;
  for (auto v : s) {
    if (v != 0 && n > max_values / v)
      throw InputError(path, name,
                       "declares more than " + std::to_string(max_values) +
                           " values, more than any input of this program holds");
    n *= v;
  }
  return n;
}
}  // namespace

std::vector<float> File::read_floats(const std::string& name, std::vector<std::size_t>* shape_out,
                                     std::size_t max_values) const {
  const Kind k = kind(name);
  if (k != Kind::Float && k != Kind::Integer)
    throw InputError(path_, name, "has a non-numeric datatype (expected float32 or float64)");
  auto s = shape(name);
  std::vector<float> v(checked_count(path_, name, s, max_values));
  Handle d = open_dataset(name);
  if (shape_out) *shape_out = s;
  // A rank reading alone a plain float32 dataset: pread on every host thread.
  const FileRun run =
      parallel_ || v.empty()
          ? FileRun{}
          : contiguous_float_run(file_.id(), d.id(), s, std::vector<std::size_t>(s.size()), s);
  if (run.bytes > 0 && run.bytes == v.size() * sizeof(float)) {
    read_run(path_, name, run, v.data());
    return v;
  }
  if (!v.empty() && H5Dread(d.id(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw InputError(path_, name, "data cannot be read (corrupt or truncated file?)");
  return v;
}

Numeric File::read_numeric(const std::string& name, std::size_t max_values) const {
  const Kind k = kind(name);
  if (k != Kind::Float && k != Kind::Integer)
    throw InputError(path_, name, "has a non-numeric datatype");
  Numeric n;
  n.shape = shape(name);
  n.values.resize(checked_count(path_, name, n.shape, max_values));
  Handle d = open_dataset(name);
  if (!n.values.empty() &&
      H5Dread(d.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, n.values.data()) < 0)
    throw InputError(path_, name, "data cannot be read (corrupt or truncated file?)");
  return n;
}

std::optional<std::string> File::string_attribute(const std::string& object,
                                                  const std::string& attr) const {
  if (!has_attribute(attr, object)) return std::nullopt;
  Handle a(H5Aopen_by_name(file_.id(), object.c_str(), attr.c_str(), H5P_DEFAULT, H5P_DEFAULT));
  Handle t(H5Aget_type(a.id()));
  if (H5Tget_class(t.id()) != H5T_STRING)
    throw InputError(path_, object == "/" ? attr : object + "@" + attr,
                     "attribute is not a string");
  if (H5Tis_variable_str(t.id()) > 0) {
    Handle mt(H5Tcopy(H5T_C_S1));
    H5Tset_size(mt.id(), H5T_VARIABLE);
    H5Tset_cset(mt.id(), H5Tget_cset(t.id()));
    char* s = nullptr;
    if (H5Aread(a.id(), mt.id(), &s) < 0 || !s)
      throw InputError(path_, attr, "attribute cannot be read");
    std::string r(s);
    H5free_memory(s);
    return r;
  }
  // One byte more than stored, so a NULLPAD string of full length keeps its last character.
  const std::size_t n = H5Tget_size(t.id()) + 1;
  std::string r(n, '\0');
  Handle mt(H5Tcopy(H5T_C_S1));
  H5Tset_size(mt.id(), n);
  H5Tset_strpad(mt.id(), H5T_STR_NULLTERM);
  H5Tset_cset(mt.id(), H5Tget_cset(t.id()));  // HDF5 does not convert between ASCII and UTF-8
  if (H5Aread(a.id(), mt.id(), r.data()) < 0)
    throw InputError(path_, attr, "attribute cannot be read");
  r.resize(r.find('\0') == std::string::npos ? n : r.find('\0'));
  return r;
}

std::string File::string_attribute_required(const std::string& attr,
                                            const std::string& object) const {
  auto s = string_attribute(object, attr);
  if (!s) throw InputError(path_, attr, "attribute is missing");
  return *s;
}

std::vector<double> File::numeric_attribute(const std::string& attr,
                                            const std::string& object) const {
  if (!has_attribute(attr, object)) throw InputError(path_, attr, "attribute is missing");
  Handle a(H5Aopen_by_name(file_.id(), object.c_str(), attr.c_str(), H5P_DEFAULT, H5P_DEFAULT));
  Handle t(H5Aget_type(a.id()));
  const auto cls = H5Tget_class(t.id());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw InputError(path_, attr, "attribute is not numeric");
  Handle sp(H5Aget_space(a.id()));
  const hssize_t n = H5Sget_simple_extent_npoints(sp.id());
  std::vector<double> v(n < 0 ? 0 : n);
  if (!v.empty() && H5Aread(a.id(), H5T_NATIVE_DOUBLE, v.data()) < 0)
    throw InputError(path_, attr, "attribute cannot be read");
  return v;
}

void File::write_floats(const std::string& name, const std::vector<std::size_t>& shape,
                        const float* data) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle sp(H5Screate_simple(int(dims.size()), dims.data(), nullptr));
  Handle d(H5Dcreate2(file_.id(), name.c_str(), H5T_IEEE_F32LE, sp.id(), link_list().id(),
                      H5P_DEFAULT, H5P_DEFAULT));
  if (!d.valid() || H5Dwrite(d.id(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw InputError(path_, name, "dataset could not be written (disk full?)");
}

namespace {

// Selects [start, start + count) in `space`, or nothing when the block is empty.
void select(hid_t space, const std::vector<std::size_t>& start,
            const std::vector<std::size_t>& count) {
  std::size_t n = 1;
  for (auto c : count) n *= c;
  if (n == 0) {
    H5Sselect_none(space);
    return;
  }
  std::vector<hsize_t> s(start.begin(), start.end()), c(count.begin(), count.end());
  H5Sselect_hyperslab(space, H5S_SELECT_SET, s.data(), nullptr, c.data(), nullptr);
}

}  // namespace

std::vector<float> File::read_block(const std::string& name, const std::vector<std::size_t>& start,
                                    const std::vector<std::size_t>& count) const {
  std::vector<float> v;
  read_block_as<float>(name, H5T_NATIVE_FLOAT, start, count, v);
  return v;
}

void File::read_block_into(const std::string& name, const std::vector<std::size_t>& start,
                           const std::vector<std::size_t>& count, std::vector<float>& out) const {
  read_block_as<float>(name, H5T_NATIVE_FLOAT, start, count, out);
}

std::vector<double> File::read_block_double(const std::string& name,
                                            const std::vector<std::size_t>& start,
                                            const std::vector<std::size_t>& count) const {
  std::vector<double> v;
  read_block_as<double>(name, H5T_NATIVE_DOUBLE, start, count, v);
  return v;
}

template <class T>
void File::read_block_as(const std::string& name, hid_t memtype,
                         const std::vector<std::size_t>& start,
                         const std::vector<std::size_t>& count, std::vector<T>& v) const {
  const Kind k = kind(name);
  if (k != Kind::Float && k != Kind::Integer)
    throw InputError(path_, name, "has a non-numeric datatype (expected float32 or float64)");
  const auto full = shape(name);
  if (full.size() != count.size())
    throw InputError(path_, name, "has rank " + std::to_string(full.size()));
  std::size_t n = 1;
  for (std::size_t a = 0; a < count.size(); ++a) {
    if (start[a] + count[a] > full[a]) throw InputError(path_, name, "block outside the dataset");
    n *= count[a];
  }
  Handle d = open_dataset(name);
  v.resize(n);
  if constexpr (std::is_same_v<T, float>) {
    // A rank reading alone a block that is one run of the file: pread on every host thread.
    const FileRun run =
        parallel_ ? FileRun{} : contiguous_float_run(file_.id(), d.id(), full, start, count);
    if (run.bytes == n * sizeof(float) && run.bytes > 0)
      return read_run(path_, name, run, v.data());
  }
  Handle fs(H5Dget_space(d.id()));
  select(fs.id(), start, count);
  const hsize_t m = n;
  Handle ms(H5Screate_simple(1, &m, nullptr));
  if (n == 0) H5Sselect_none(ms.id());
  Handle dxpl = transfer_list(parallel_);
  T dummy = 0;
  if (H5Dread(d.id(), memtype, ms.id(), fs.id(), dxpl.id(), n ? v.data() : &dummy) < 0)
    throw InputError(path_, name, "data cannot be read (corrupt or truncated file?)");
}

template <class T>
void File::write_block_as(const std::string& name, hid_t filetype, hid_t memtype,
                          const std::vector<std::size_t>& global,
                          const std::vector<std::size_t>& start,
                          const std::vector<std::size_t>& count, const T* data) {
  std::vector<hsize_t> dims(global.begin(), global.end());
  Handle fs(H5Screate_simple(int(dims.size()), dims.data(), nullptr));
  Handle d(H5Dcreate2(file_.id(), name.c_str(), filetype, fs.id(), link_list().id(), H5P_DEFAULT,
                      H5P_DEFAULT));
  if (!d.valid()) throw InputError(path_, name, "dataset could not be created");
  std::size_t n = 1;
  for (auto c : count) n *= c;
  select(fs.id(), start, count);
  const hsize_t m = n;
  Handle ms(H5Screate_simple(1, &m, nullptr));
  if (n == 0) H5Sselect_none(ms.id());
  Handle dxpl = transfer_list(parallel_);
  const T dummy = 0;
  if (H5Dwrite(d.id(), memtype, ms.id(), fs.id(), dxpl.id(), n ? data : &dummy) < 0)
    throw InputError(path_, name, "dataset could not be written (disk full?)");
}

void File::write_block(const std::string& name, const std::vector<std::size_t>& global,
                       const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
                       const float* data) {
  write_block_as(name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, global, start, count, data);
}

void File::write_block(const std::string& name, const std::vector<std::size_t>& global,
                       const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
                       const double* data) {
  write_block_as(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, global, start, count, data);
}

void File::write_doubles(const std::string& name, const std::vector<std::size_t>& shape,
                         const double* data) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle sp(dims.empty() ? H5Screate(H5S_SCALAR)
                         : H5Screate_simple(int(dims.size()), dims.data(), nullptr));
  Handle d(H5Dcreate2(file_.id(), name.c_str(), H5T_IEEE_F64LE, sp.id(), link_list().id(),
                      H5P_DEFAULT, H5P_DEFAULT));
  if (!d.valid() || H5Dwrite(d.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw InputError(path_, name, "dataset could not be written (disk full?)");
}

void File::write_string_attribute(const std::string& object, const std::string& attr,
                                  const std::string& value) {
  Handle t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.id(), value.size() + 1);  // NULLTERM: room for the terminator
  H5Tset_cset(t.id(), H5T_CSET_UTF8);
  Handle sp(H5Screate(H5S_SCALAR));
  Handle a(H5Acreate_by_name(file_.id(), object.c_str(), attr.c_str(), t.id(), sp.id(), H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT));
  if (!a.valid() || H5Awrite(a.id(), t.id(), value.c_str()) < 0)
    throw InputError(path_, attr, "attribute could not be written");
}

void File::write_int_attribute(const std::string& object, const std::string& attr,
                               const std::vector<int>& values) {
  const hsize_t n = values.size();
  Handle sp(H5Screate_simple(1, &n, nullptr));
  Handle a(H5Acreate_by_name(file_.id(), object.c_str(), attr.c_str(), H5T_STD_I32LE, sp.id(),
                             H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!a.valid() || H5Awrite(a.id(), H5T_NATIVE_INT, values.data()) < 0)
    throw InputError(path_, attr, "attribute could not be written");
}

void File::write_double_attribute(const std::string& object, const std::string& attr,
                                  double value) {
  Handle sp(H5Screate(H5S_SCALAR));
  Handle a(H5Acreate_by_name(file_.id(), object.c_str(), attr.c_str(), H5T_IEEE_F64LE, sp.id(),
                             H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!a.valid() || H5Awrite(a.id(), H5T_NATIVE_DOUBLE, &value) < 0)
    throw InputError(path_, attr, "attribute could not be written");
}

}  // namespace ufno::h5
