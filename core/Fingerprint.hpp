#pragma once
// A stable 64-bit fingerprint (FNV-1a; std::hash differs between builds) of bytes and files, so
// that results on disk can be matched with what made them: a sweep's configuration, the model
// files behind a batch's outputs.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/InputError.hpp"

namespace ufno {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;

inline std::uint64_t fnv1a(const std::string& bytes, std::uint64_t h = kFnvOffset) {
  for (unsigned char ch : bytes) h = (h ^ ch) * 1099511628211ull;
  return h;
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "", "cannot be opened");
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline std::string hex_fingerprint(std::uint64_t h) {
  char b[32];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

// The fingerprint of the files' contents, in order.
inline std::string files_fingerprint(const std::vector<std::string>& paths,
                                     std::uint64_t h = kFnvOffset) {
  for (const auto& p : paths) h = fnv1a(file_bytes(p), h);
  return hex_fingerprint(h);
}

}  // namespace ufno
