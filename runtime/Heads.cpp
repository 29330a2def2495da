#include "runtime/Heads.hpp"

#include "runtime/DpFieldScale.hpp"
#include "runtime/DpPeakMatch.hpp"

namespace ufno {

void Heads::apply(HeadInput& in) const {
  for (const auto& h : heads_)
    if (h->stage() == in.stage) h->apply(in);
}

Heads Heads::of_stage(HeadStage s) const {
  Heads stage;
  for (const auto& h : heads_)
    if (h->stage() == s) stage.add(h);
  return stage;
}

const Head* Heads::find(const std::string& group) const {
  for (const auto& h : heads_)
    if (h->group() == group) return h.get();
  return nullptr;
}

bool Heads::reads_whole_cases() const {
  for (const auto& h : heads_)
    if (h->reads_whole_cases()) return true;
  return false;
}

Heads read_field_heads(const std::vector<std::string>& model_paths,
                       std::vector<std::string>& notes) {
  Heads field;
  for (const auto& p : model_paths) {
    // Only a dP model carries one (python3 -m ufno.dp_field_scale_head writes it there).
    std::string note;
    auto s = DpFieldScale::from_model_file(p, note);
    if (!note.empty()) notes.push_back(note);
    if (s) {
      field.add(std::make_shared<DpFieldScale>(std::move(*s)));
      break;
    }
  }
  // After the scale: the peak it sets is the one a user reads.
  for (const auto& p : model_paths)
    if (auto m = DpPeakMatch::from_model_file(p)) {
      field.add(std::make_shared<DpPeakMatch>(std::move(*m)));
      break;
    }
  return field;
}

}  // namespace ufno
