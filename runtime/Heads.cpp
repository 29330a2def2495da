#include "runtime/Heads.hpp"

#include "runtime/DpFieldScale.hpp"

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
  return field;
}

}  // namespace ufno
