#pragma once
// A stable 64-bit fingerprint (FNV-1a; std::hash differs between builds) of bytes and files, so
// that results on disk can be matched with what made them: a sweep's configuration, the model
// files behind a batch's outputs.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/InputError.hpp"

namespace ufno {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;

inline std::uint64_t fnv1a(const unsigned char* bytes, std::size_t n,
                           std::uint64_t h = kFnvOffset) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

inline std::uint64_t fnv1a(const std::string& bytes, std::uint64_t h = kFnvOffset) {
  return fnv1a(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), h);
}

// The file's bytes hashed as they are read, 1 MiB at a time: a 250 MB model file is never held
// in memory for its fingerprint (that doubled a one-case process's peak memory).
inline std::uint64_t fnv1a_file(const std::string& path, std::uint64_t h = kFnvOffset) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw InputError(path, "", "cannot be opened");
  std::vector<unsigned char> buf(std::size_t(1) << 20);
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) h = fnv1a(buf.data(), n, h);
  if (std::ferror(f.get())) throw InputError(path, "", "cannot be read");
  return h;
}

inline std::string hex_fingerprint(std::uint64_t h) {
  char b[32];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

// The fingerprint of the files' contents, in order.
inline std::string files_fingerprint(const std::vector<std::string>& paths,
                                     std::uint64_t h = kFnvOffset) {
  for (const auto& p : paths) h = fnv1a_file(p, h);
  return hex_fingerprint(h);
}

}  // namespace ufno
