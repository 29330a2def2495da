#include "runtime/NestedModelSet.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/InputError.hpp"
#include "io/Fno4dModelFile.hpp"
#include "io/ModelAttributes.hpp"

namespace ufno {

namespace {

constexpr std::size_t kMaxDirectoryEntries = 10000;  // a models directory, not a file system

}  // namespace

std::array<int, 4> nested_level_grid(const NestedLevel& l, int times, bool time_first) {
  if (time_first) return {times, l.shape[0], l.shape[1], l.shape[2]};
  return {l.shape[0], l.shape[1], l.shape[2], times};
}

std::vector<std::string> model_candidates(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(dir, "--models", "is not a directory (the nine nested models' directory)");
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (files.size() >= kMaxDirectoryEntries)
      throw InputError(dir, "--models", "holds more than 10000 .h5 files");
    if (it->path().extension() == ".h5" && it->is_regular_file(ec))
      files.push_back(it->path().string());
  }
  if (ec) throw InputError(dir, "--models", "cannot be read: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

std::string grid_string(const std::array<int, 4>& g) {
  return std::to_string(g[0]) + " x " + std::to_string(g[1]) + " x " + std::to_string(g[2]) +
         " x " + std::to_string(g[3]);
}

// A file of the ufno model format. Any other HDF5 file in the directory is not a model and is
// skipped; a file HDF5 cannot read (a truncated model, say) is refused by name, since skipping it
// would report its level as missing.
bool is_model_file(const std::string& file) {
  h5::silence_errors();
  try {
    const h5::File f = h5::File::open_read(file);
    return f.string_attribute("/", "format").value_or("") == "ufno-model";
  } catch (const std::exception&) {
    throw InputError(file, "--models",
                     "is not a readable HDF5 file (truncated or corrupt?); every .h5 file of a "
                     "models directory is read");
  }
}

}  // namespace

NestedModelSet::NestedModelSet(const std::string& dir, const NestedSite& site) {
  for (const auto& file : model_candidates(dir)) {
    if (!is_model_file(file) || model_architecture(file) != "FNO4D") continue;
    Fno4dModelFile m(file);
    const Fno4dSpec& s = m.spec();
    if (s.level.empty()) continue;
    if (s.level == "GLOBAL" && s.variable != "dP")
      throw InputError(file, "variable",
                       "a GLOBAL model predicts dP only (the chain's first step)");
    const Key key{s.level, s.variable};
    if (models_.count(key))
      throw InputError(file, "level",
                       "a second " + s.level + " " + s.variable +
                           " model (first: " + models_.at(key).first + ")");
    models_[key] = {file, s};
  }
  for (const auto& l : site.levels) {
    for (const char* v : {"dP", "SG"}) {
      if (l.lgr() == 0 && std::string(v) == "SG") continue;
      const Key key{l.name, v};
      if (!models_.count(key))
        throw InputError(dir, "--models",
                         "no " + l.name + " " + v +
                             " model (FNO4D model files with attributes "
                             "level and variable; python3 -m ufno.convert --level)");
      const auto& [file, s] = models_.at(key);
      const int channels = l.lgr() == 0 ? kNestedChannels : kNestedChannels + 1;
      if (s.in_channels != channels)
        throw InputError(file, "in_channels",
                         "is " + std::to_string(s.in_channels) + "; a " + l.name + " model takes " +
                             std::to_string(channels));
      const auto want = nested_level_grid(l, int(site.times_days.size()), s.time_first());
      if (s.grid != want)
        throw InputError(file, "grid",
                         grid_string(s.grid) + " is not the grid of " + l.group() + " in the " +
                             "model's axis order " + s.axis_order + ", " + grid_string(want));
    }
  }
}

const std::string& NestedModelSet::path(const std::string& level,
                                        const std::string& variable) const {
  return models_.at({level, variable}).first;
}

const Fno4dSpec& NestedModelSet::spec(const std::string& level, const std::string& variable) const {
  return models_.at({level, variable}).second;
}

}  // namespace ufno
