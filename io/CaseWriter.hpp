#pragma once
// Writes a whole-grid ReservoirCase in the case-file format (docs/case-format.md), through a
// temporary file renamed into place.
#include <string>

#include "io/CaseFile.hpp"

namespace ufno {

void write_case(const std::string& path, const ReservoirCase& c, const std::string& description);

}  // namespace ufno
