#pragma once
// The model file: HDF5 with one dataset per reference state_dict tensor (named by its key) and
// root attributes for the architecture and the output scaling (docs/model-format.md). Opening
// checks the attributes against each other and against the datasets present; each layer then
// checks the shape of every tensor it takes.
#include <memory>
#include <string>

#include "core/ModelSpec.hpp"
#include "core/WeightSource.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

// A trained network's weights and statistics are O(1)-O(100); larger values come from a broken
// or hostile file and would give plausible-looking garbage.
constexpr double kMaxWeight = 1e6;
// One padded-grid activation beyond this (bytes) is refused before any allocation.
constexpr double kMaxActivationBytes = 64.0 * (1ull << 30);

class ModelFile : public WeightSource {
 public:
  explicit ModelFile(const std::string& path);

  const ModelSpec& spec() const { return spec_; }
  bool has(const std::string& name) const override;
  HostArray get(const std::string& name) const override;
  // A rank's block of a spectral layer's corner, read as that hyperslab alone (one contiguous
  // read when the block is the whole corner), not the whole corner read and then sliced.
  HostArray get_block(const std::string& name, const std::vector<std::size_t>& start,
                      const std::vector<std::size_t>& count) const override;
  void get_block_into(const std::string& name, const std::vector<std::size_t>& start,
                      const std::vector<std::size_t>& count, HostArray& out,
                      bool check_values = true) const override;
  std::vector<std::size_t> shape(const std::string& name) const override;
  std::string origin() const override { return file_.path(); }

 private:
  void read_spec();
  void check_sizes() const;
  void check_layers() const;
  h5::File file_;
  ModelSpec spec_;
};

}  // namespace ufno
