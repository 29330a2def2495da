#pragma once
// main() of the single-process tools (ufno_import, ufno_export): bad input is one line
// "<tool>: error: FILE: FIELD: what" and exit 2; anything else "<tool>: internal error" and 1.
#include <exception>
#include <iostream>

#include "core/InputError.hpp"

namespace ufno {

template <class Run>
int tool_main(const char* tool, int argc, char** argv, Run run) {
  try {
    return run(argc, argv);
  } catch (const InputError& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << tool << ": internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace ufno
