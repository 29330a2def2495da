#pragma once
// What an output path may be: a new file, or an existing regular file that is none of the
// program's inputs. Outputs are written to a temporary name and renamed over the path, and a
// rename replaces whatever is there: a device node (/dev/null as root), a FIFO, a symbolic link,
// or the input case itself. So those are refused up front, with the option's name.
#include <string>
#include <vector>

namespace ufno {

// Throws InputError(out, option, ...) if `out` exists and is not a regular file, is a symbolic
// link, is a directory, or is the same file as any of `inputs` (also through links).
void check_output_path(const std::string& out, const std::vector<std::string>& inputs,
                       const std::string& option = "--out");

}  // namespace ufno
