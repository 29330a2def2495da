#pragma once
// A run's heads (runtime/Head.hpp) in the order they act, each at its stage, shared by whoever
// applies them. screening/HeadRegistry.hpp reads all five kinds into one and hands its field
// stage to the prediction (runtime/Predictor.hpp), which applies it to the network's dP field;
// a prediction without a registry reads the field stage itself (read_field_heads).
#include <memory>
#include <string>
#include <vector>

#include "runtime/Head.hpp"

namespace ufno {

class Heads {
 public:
  void add(std::shared_ptr<const Head> h) { heads_.push_back(std::move(h)); }
  // Applies the heads of in's stage, in order.
  void apply(HeadInput& in) const;
  // The heads of one stage, in order (the same objects).
  Heads of_stage(HeadStage s) const;
  // The head of a group, or null.
  const Head* find(const std::string& group) const;
  // Whether a head needs the pass's whole case files (Head::reads_whole_cases).
  bool reads_whole_cases() const;
  const std::vector<std::shared_ptr<const Head>>& all() const { return heads_; }

 private:
  std::vector<std::shared_ptr<const Head>> heads_;
};

// The field-stage heads of a run's model files, read and validated (InputError naming the file
// and field for a malformed one), in the order they act: the dP field-scale head
// (runtime/DpFieldScale.hpp) of the first file that carries one fitted to its network, then the
// peak match of the first file's maximum-dP head (runtime/DpPeakMatch.hpp). A head fitted to
// another network is left out with one line in `notes`.
Heads read_field_heads(const std::vector<std::string>& model_paths,
                       std::vector<std::string>& notes);

}  // namespace ufno
