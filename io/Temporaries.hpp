#pragma once
// Temporaries of outputs: every output (file or deck directory) is written under
// "<path>.tmp.<pid>" and renamed into place when complete. A killed run leaves its temporary
// behind; the next run that writes the same output removes it once it is stale.
#include <string>

namespace ufno {

// "<path>.tmp.<pid>".
std::string temporary_name(const std::string& path, long pid);

// Removes (file or directory) every "<path>.tmp.<pid>" whose process is gone and which is older
// than ten minutes: another job on this node, or on another node sharing the file system, may
// still be writing a younger one.
void remove_stale_temporaries(const std::string& path);

}  // namespace ufno
