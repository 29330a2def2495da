#pragma once
// Writes a whole-grid ReservoirCase in the case-file format (docs/case-format.md), through a
// temporary file renamed into place.
#include <string>

#include "io/CaseFile.hpp"

namespace ufno {

// `generator` names the program that made the case (the file's `generator` attribute).
void write_case(const std::string& path, const ReservoirCase& c, const std::string& description,
                const std::string& generator);

}  // namespace ufno
