#include "io/OutputPath.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "core/InputError.hpp"
#include "io/XdmfDescription.hpp"

namespace ufno {

namespace {

// (device, inode) of the file `path` names, through links; false when there is none.
bool identity(const std::string& path, std::pair<unsigned long long, unsigned long long>& id) {
  struct stat s {};
  if (path.empty() || ::stat(path.c_str(), &s) != 0) return false;
  id = {static_cast<unsigned long long>(s.st_dev), static_cast<unsigned long long>(s.st_ino)};
  return true;
}

}  // namespace

void InputFiles::add(const std::string& path) {
  std::pair<unsigned long long, unsigned long long> id;
  if (identity(path, id)) ids_.emplace(id, path);
}

void InputFiles::add(const std::vector<std::string>& paths) {
  for (const auto& p : paths) add(p);
}

const std::string* InputFiles::find(const std::string& path) const {
  std::pair<unsigned long long, unsigned long long> id;
  if (!identity(path, id)) return nullptr;
  const auto it = ids_.find(id);
  return it == ids_.end() ? nullptr : &it->second;
}

void check_output_path(const std::string& out, const InputFiles& inputs,
                       const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(out, ec);
  if (ec || !fs::exists(link)) return;  // a new file
  if (fs::is_symlink(link))
    throw InputError(out, option, "is a symbolic link; give the path of a new or regular file");
  if (fs::is_directory(link)) throw InputError(out, option, "is a directory, not a file");
  if (!fs::is_regular_file(link))
    throw InputError(out, option,
                     "is not a regular file (a device, FIFO or socket): it is never replaced");
  if (const std::string* in = inputs.find(out))
    throw InputError(out, option, "is the input file " + *in + "; it would be overwritten");
}

void check_prediction_output_path(const std::string& out, const InputFiles& inputs,
                                  const std::string& option) {
  check_output_path(out, inputs, option);
  const std::string description = xdmf_path(out);
  if (description == out)
    throw InputError(out, option,
                     "ends in .xmf, the name of the viewer description written beside the "
                     "prediction; give OUT.h5");
  if (const std::string* in = inputs.find(description))
    throw InputError(
        out, option,
        "its viewer description " + description + " would overwrite the input file " + *in);
  check_output_path(description, inputs, option + " (its viewer description)");
}

}  // namespace ufno
