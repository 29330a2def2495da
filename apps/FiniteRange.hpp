#pragma once
// A command-line number within [lo, hi] and finite. CLI11's Range compares with < and >, which a
// NaN passes ("--sweep-max-seconds nan" started a server whose sweeps were never stopped).
#include <CLI/CLI.hpp>
#include <cmath>
#include <sstream>
#include <string>

namespace ufno {

inline CLI::Validator finite_range(double lo, double hi) {
  std::ostringstream range;
  range << "a finite number in [" << lo << ", " << hi << "]";
  const std::string want = range.str();
  return CLI::Validator(
      [lo, hi, want](std::string& s) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(s, &used);
        } catch (const std::exception&) {
          return "Value " + s + " is not " + want;
        }
        if (used != s.size() || !std::isfinite(v) || v < lo || v > hi)
          return "Value " + s + " is not " + want;
        return "";
      },
      want);
}

}  // namespace ufno
