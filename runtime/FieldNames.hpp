#pragma once
// The two fields a prediction holds, by name: SG (gas saturation) and dP (pressure buildup). A
// model file names its variable (io/ModelFile.cpp refuses others); code that sorts fields by
// name asks here, so a field of any other name is refused instead of taken for dP.
#include <string>

namespace ufno {

enum class FieldKind { SG, dP };

// std::invalid_argument naming the field for a name other than "SG" or "dP".
FieldKind field_kind(const std::string& name);

// "gas saturation" or "pressure buildup", for the output file's descriptions.
const char* field_description(FieldKind k);

}  // namespace ufno
