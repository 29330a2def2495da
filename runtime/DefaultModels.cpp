#include "runtime/DefaultModels.hpp"

#include <cstdlib>
#include <filesystem>

#include "core/InputError.hpp"

#ifndef UFNO_SOURCE_MODEL_DIR
#define UFNO_SOURCE_MODEL_DIR ""
#endif

namespace ufno {

namespace fs = std::filesystem;

const std::vector<std::string>& default_model_names() {
  static const std::vector<std::string> names{"sg_ufno.h5", "dp_ufno.h5"};
  return names;
}

std::vector<std::string> default_model_dirs() {
  std::vector<std::string> dirs;
  // An explicit directory is the only one searched: falling back silently would hide a typo.
  if (const char* env = std::getenv("UFNO_MODEL_DIR"); env && *env) return {env};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share/ufno/models").string());
  if (*UFNO_SOURCE_MODEL_DIR) dirs.emplace_back(UFNO_SOURCE_MODEL_DIR);
  return dirs;
}

std::vector<std::string> default_models() {
  const auto dirs = default_model_dirs();
  for (const auto& d : dirs) {
    std::vector<std::string> paths;
    for (const auto& n : default_model_names())
      if (fs::is_regular_file(fs::path(d) / n)) paths.push_back((fs::path(d) / n).string());
    if (paths.size() == default_model_names().size()) return paths;
  }
  std::string searched;
  for (const auto& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
  throw InputError("--model", "",
                   "not given, and no directory holds the default models sg_ufno.h5 and "
                   "dp_ufno.h5 (searched: " +
                       searched + "; set UFNO_MODEL_DIR)");
}

}  // namespace ufno
