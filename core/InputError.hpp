#pragma once
// The one error type for bad user input (case, tensor and model files, options): its message is a
// single line "FILE: FIELD: what is wrong" that the executables print as they are.
#include <stdexcept>
#include <string>
#include <vector>

namespace ufno {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, const std::string& field, const std::string& what)
      : std::runtime_error(file + ": " + (field.empty() ? "" : field + ": ") + what),
        file_(file),
        field_(field) {}
  // An error already formatted (for example received from another rank).
  static InputError from_message(const std::string& message) { return InputError(message); }
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }

 private:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  std::string file_, field_;
};

// "(a,b,c)" for messages about array shapes.
inline std::string shape_string(const std::vector<std::size_t>& s) {
  std::string r = "(";
  for (std::size_t i = 0; i < s.size(); ++i)
    r += std::to_string(s[i]) + (i + 1 < s.size() ? "," : "");
  return r + ")";
}

}  // namespace ufno
