#include "runtime/FieldNames.hpp"

#include <stdexcept>

namespace ufno {

FieldKind field_kind(const std::string& name) {
  if (name == "SG") return FieldKind::SG;
  if (name == "dP") return FieldKind::dP;
  throw std::invalid_argument("a field named \"" + name + "\" is neither SG nor dP");
}

const char* field_description(FieldKind k) {
  return k == FieldKind::SG ? "gas saturation" : "pressure buildup";
}

}  // namespace ufno
