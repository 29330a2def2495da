#pragma once
// The model file: HDF5 with one dataset per reference state_dict tensor (named by its key) and
// root attributes for the architecture and the output scaling (docs/model-format.md). Opening
// checks the attributes against each other and against the datasets present; each layer then
// checks the shape of every tensor it takes.
#include <memory>
#include <string>

#include "io/Hdf5File.hpp"
#include "operators/ModelSpec.hpp"
#include "operators/WeightSource.hpp"

namespace ufno {

class ModelFile : public WeightSource {
 public:
  explicit ModelFile(const std::string& path);

  const ModelSpec& spec() const { return spec_; }
  bool has(const std::string& name) const override;
  HostArray get(const std::string& name) const override;
  std::string origin() const override { return file_.path(); }

 private:
  void read_spec();
  void check_layers() const;
  h5::File file_;
  ModelSpec spec_;
};

}  // namespace ufno
