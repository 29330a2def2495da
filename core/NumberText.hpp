#pragma once
// A number as a user reads it in a message or a column name: the stream's shortest general
// form (0.01, 30, 1e+06), not std::to_string's fixed six decimals (0.010000).
#include <sstream>
#include <string>

namespace ufno {

inline std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace ufno
