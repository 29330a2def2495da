#pragma once
// A 3-D site for the nested chain (docs/nested-sites.md): the GLOBAL level and, per well, the
// levels LGR1..LGR4, each with its shape and the window of its source level that its coarse
// channel is cut from. The site file holds every level's eight input channels; this describes
// the levels, and reads and writes the file.
#include <mpi.h>

#include <array>
#include <string>
#include <vector>

namespace ufno {

inline constexpr int kNestedChannels = 8;  // without the coarse channel
inline constexpr int kNestedLgrLevels = 4;

struct NestedLevel {
  std::string name;            // GLOBAL, LGR1..LGR4
  std::string well;            // empty for GLOBAL
  std::string carfin;          // the deck's CARFIN name (empty for GLOBAL)
  std::array<int, 3> shape{};  // nx, ny, nz
  std::array<int, 6> box{};    // I1, I2, J1, J2, K1, K2 in the parent's cells, 1-based
  std::array<int, 3> refinement{1, 1, 1};
  // The coarse channel: source cells [i0, i1) x [j0, j1) x [k0, k1), 0-based, each repeated
  // coarse_repeat times along its axis (docs/nested-sites.md, "The chain").
  std::array<int, 6> coarse_window{};
  std::array<int, 3> coarse_repeat{1, 1, 1};

  int lgr() const;  // 0 for GLOBAL, k for LGRk
  std::string group() const { return well.empty() ? name : well + "/" + name; }
  std::size_t cells() const { return std::size_t(shape[0]) * shape[1] * shape[2]; }
};

struct NestedWell {
  std::string name;
  int i = 0, j = 0, k1 = 0, k2 = 0;  // GLOBAL column and perforated layers, 1-based
  double rate_mt_per_year = 0;
  double surface_rate = 0;  // sm3/day, the deck's WCONINJE rate (0 when the file has none)
};

struct NestedSite {
  std::vector<double> times_days;
  std::vector<NestedWell> wells;
  std::vector<NestedLevel> levels;  // GLOBAL, then each well's LGR1..LGR4

  const NestedLevel& global() const { return levels.front(); }
  const NestedLevel& level(const std::string& well, int lgr) const;
  // The level whose prediction feeds `l`'s coarse channel, for the given variable's chain:
  // GLOBAL for LGR1, the same well's LGR(k-1) otherwise.
  const NestedLevel& source_of(const NestedLevel& l) const;
};

// Per level: its input (1, nx, ny, nz, T, 8) channels-last, and cell centres in metres.
struct NestedLevelData {
  std::vector<float> input;
  std::vector<double> cell_x, cell_y, cell_depth;  // (nx, ny, nz)
};

// Checks the nest structure (docs/nested-sites.md, "The deck"): every well has LGR1..LGR4, each
// coarse window lies inside its source and, repeated, has exactly the level's shape, and every
// well's nest has the same shapes. `origin`: the file named in errors.
void check_nested_site(const NestedSite& site, const std::string& origin);

bool is_nested_site_file(const std::string& path);
NestedSite read_nested_site(const std::string& path);  // the layout, checked; no channels
void write_nested_site(const std::string& path, const NestedSite& site,
                       const std::vector<NestedLevelData>& data, const std::string& source);

}  // namespace ufno
