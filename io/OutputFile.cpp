#include "io/OutputFile.hpp"

#include <unistd.h>

#include <cstdio>

#include "io/OutputPath.hpp"
#include "io/Temporaries.hpp"

namespace ufno {

namespace {
// One temporary name for all ranks: rank 0's process id. Rank 0 first clears the stale
// temporaries of earlier, killed runs of the same output.
std::string shared_temporary_name(const std::string& path, MPI_Comm comm) {
  int rank = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  if (rank == 0) remove_stale_temporaries(path);
  long pid = ::getpid();
  if (comm != MPI_COMM_NULL) MPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
  return temporary_name(path, pid);
}
}  // namespace

OutputFile::OutputFile(const std::string& path, MPI_Comm comm)
    : path_((check_output_path(path, {}), path)),
      tmp_(shared_temporary_name(path, comm)),
      comm_(comm),
      // Errors name the output: the temporary is gone when a user reads them.
      file_(h5::File::create(tmp_, comm, path_)) {
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank_);
}

OutputFile::~OutputFile() {
  if (!committed_) {
    try {
      file_.close();
    } catch (...) {
    }
    if (rank_ == 0) std::remove(tmp_.c_str());
  }
}

void OutputFile::write_field(const std::string& name, const std::vector<std::size_t>& global,
                             int x0, int y0, const std::vector<std::size_t>& block_shape,
                             const std::vector<float>& values, const std::string& units,
                             const std::string& description) {
  file_.write_block(name, global, {0, 0, std::size_t(x0), std::size_t(y0)}, block_shape,
                    values.data());
  file_.write_string_attribute(name, "units", units);
  file_.write_string_attribute(name, "description", description);
}

void OutputFile::write_block(const std::string& name, const std::vector<std::size_t>& global,
                             const std::vector<std::size_t>& start,
                             const std::vector<std::size_t>& count,
                             const std::vector<float>& values, const std::string& units,
                             const std::string& description) {
  file_.write_block(name, global, start, count, values.data());
  file_.write_string_attribute(name, "units", units);
  file_.write_string_attribute(name, "description", description);
}

void OutputFile::write_times(const std::vector<double>& days) {
  std::vector<float> v(days.begin(), days.end());
  // Written once, by rank 0; the other ranks take part in the collective call with no data.
  file_.write_block("TIMES", {v.size()}, {0}, {rank_ == 0 ? v.size() : 0}, v.data());
  file_.write_string_attribute("TIMES", "units", "day");
}

void OutputFile::set_attribute(const std::string& name, const std::string& value) {
  file_.write_string_attribute("/", name, value);
}

void OutputFile::commit() {
  file_.close();
  int ok = 1;
  if (rank_ == 0) ok = std::rename(tmp_.c_str(), path_.c_str()) == 0;
  if (comm_ != MPI_COMM_NULL) MPI_Bcast(&ok, 1, MPI_INT, 0, comm_);
  if (!ok)
    throw InputError(path_, "", "could not be created (renaming its complete temporary failed)");
  committed_ = true;
}

}  // namespace ufno
