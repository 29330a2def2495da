#pragma once
// What an output path may be: a new file, or an existing regular file that is none of the
// program's inputs. Outputs are written to a temporary name and renamed over the path, and a
// rename replaces whatever is there: a device node (/dev/null as root), a FIFO, a symbolic link,
// or an input itself (the case, a file the deck includes, a model). So those are refused up
// front, with the option's name. Inputs are compared by identity (device and inode), so another
// name of the same file (a hard or symbolic link, "./a/../a") is still that input.
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ufno {

// The files a run reads, by identity. Paths that do not exist (yet) are left out.
class InputFiles {
 public:
  InputFiles() = default;
  InputFiles(const std::vector<std::string>& paths) { add(paths); }  // NOLINT: a list converts
  InputFiles(std::initializer_list<std::string> paths) { add(std::vector<std::string>(paths)); }
  void add(const std::string& path);
  void add(const std::vector<std::string>& paths);
  // The input that `path` is (as it was given), or nullptr.
  const std::string* find(const std::string& path) const;

 private:
  std::map<std::pair<unsigned long long, unsigned long long>, std::string> ids_;
};

// Throws InputError(out, option, ...) if `out` exists and is not a regular file, is a symbolic
// link, is a directory, or is the same file as any of `inputs`.
void check_output_path(const std::string& out, const InputFiles& inputs,
                       const std::string& option = "--out");
// The same for a prediction file and the viewer description written beside it
// (io/XdmfDescription.hpp xdmf_path: OUT.h5 -> OUT.xmf), which replaces what is there too.
void check_prediction_output_path(const std::string& out, const InputFiles& inputs,
                                  const std::string& option = "--out");

}  // namespace ufno
