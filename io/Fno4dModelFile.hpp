#pragma once
// The model file of a 4-D FNO (docs/model-format.md, section FNO4D): the same HDF5 container as
// the U-FNO's, architecture "FNO4D". Opening checks every attribute, their consistency (modes
// that fit the padded grid, sizes this build can run) and which layers and normalisers the
// datasets hold; each layer then checks the shape of every tensor it takes. Grid-sized arrays
// (the normalisers) can be read a block at a time, so each rank reads only its block.
#include <string>

#include "core/Fno4dSpec.hpp"
#include "core/WeightSource.hpp"
#include "io/Hdf5File.hpp"

namespace ufno {

class Fno4dModelFile : public WeightSource {
 public:
  explicit Fno4dModelFile(const std::string& path);

  const Fno4dSpec& spec() const { return spec_; }
  bool has(const std::string& name) const override;
  HostArray get(const std::string& name) const override;
  HostArray get_block(const std::string& name, const std::vector<std::size_t>& start,
                      const std::vector<std::size_t>& count) const override;
  void get_block_into(const std::string& name, const std::vector<std::size_t>& start,
                      const std::vector<std::size_t>& count, HostArray& out,
                      bool check_values = true) const override;
  std::vector<std::size_t> shape(const std::string& name) const override;
  std::string origin() const override { return file_.path(); }

 private:
  void read_spec();
  void check_datasets();
  h5::File file_;
  Fno4dSpec spec_;
};

}  // namespace ufno
