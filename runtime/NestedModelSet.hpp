#pragma once
// The nine models of a nested chain (docs/nested-sites.md, "The chain"), found in a directory by
// their `level` and `variable` attributes and checked against the site before anything runs:
// each level's model exists once, takes 8 (GLOBAL) or 9 (LGR) channels and has the level's grid.
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/Fno4dSpec.hpp"
#include "io/NestedSite.hpp"

namespace ufno {

// A level's grid as a model in the given axis order states it: (nx, ny, nz, T), or
// (T, nx, ny, nz) for a time-first model (axis_order TXYZ, the published models).
std::array<int, 4> nested_level_grid(const NestedLevel& l, int times, bool time_first);

// DIR's *.h5 regular files, in name order (bounded: a directory of millions is refused): the
// files a chain may read as its models.
std::vector<std::string> model_candidates(const std::string& dir);

class NestedModelSet {
 public:
  // Reads every FNO4D model file with a level among dir's *.h5 files and checks the set against
  // the site; an InputError names the directory or the file at fault.
  NestedModelSet(const std::string& dir, const NestedSite& site);

  // The model file of a level ("GLOBAL", "LGR1".."LGR4") and variable ("SG", "dP").
  const std::string& path(const std::string& level, const std::string& variable) const;
  const Fno4dSpec& spec(const std::string& level, const std::string& variable) const;

 private:
  using Key = std::pair<std::string, std::string>;  // level, variable
  std::map<Key, std::pair<std::string, Fno4dSpec>> models_;
};

}  // namespace ufno
