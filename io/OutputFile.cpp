#include "io/OutputFile.hpp"

#include <unistd.h>

#include <cstdio>

namespace ufno {

OutputFile::OutputFile(const std::string& path)
    : path_(path),
      tmp_(path + ".tmp." + std::to_string(::getpid())),
      file_(h5::File::create(tmp_)) {}

OutputFile::~OutputFile() {
  if (!committed_) {
    try {
      file_.close();
    } catch (...) {
    }
    std::remove(tmp_.c_str());
  }
}

void OutputFile::write_field(const std::string& name, const std::vector<std::size_t>& shape,
                             const std::vector<float>& values, const std::string& units,
                             const std::string& description) {
  file_.write_floats(name, shape, values.data());
  file_.write_string_attribute(name, "units", units);
  file_.write_string_attribute(name, "description", description);
}

void OutputFile::write_times(const std::vector<double>& days) {
  std::vector<float> v(days.begin(), days.end());
  file_.write_floats("TIMES", {v.size()}, v.data());
  file_.write_string_attribute("TIMES", "units", "day");
}

void OutputFile::set_attribute(const std::string& name, const std::string& value) {
  file_.write_string_attribute("/", name, value);
}

void OutputFile::commit() {
  file_.close();
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw InputError(path_, "", "could not be created by renaming " + tmp_);
  committed_ = true;
}

}  // namespace ufno
