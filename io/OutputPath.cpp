#include "io/OutputPath.hpp"

#include <filesystem>
#include <system_error>

#include "core/InputError.hpp"

namespace ufno {

void check_output_path(const std::string& out, const std::vector<std::string>& inputs,
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
  for (const auto& in : inputs) {
    if (in.empty()) continue;
    if (fs::equivalent(out, in, ec) && !ec)
      throw InputError(out, option, "is the input file " + in + "; it would be overwritten");
  }
}

}  // namespace ufno
