#pragma once
// Stable 64-bit fingerprints (std::hash differs between builds) of bytes and files, so that
// results on disk can be matched with what made them: a sweep's configuration (FNV-1a), the
// model files behind a batch's outputs (XXH3, files_digest).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/InputError.hpp"

namespace ufno {

// FNV-1a's published 64-bit offset basis is 14695981039346656037; this one lost its last digit
// when it was first written. Model files store head digests (io/KpiHeadFile.cpp) and sweeps
// their fingerprints made with it, so it stays (any basis tells files apart as well).
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

// The FNV-1a fingerprint of the files' contents, in order (a sweep's: kept stable, so that a
// sweep's results stay its own across versions).
inline std::string files_fingerprint(const std::vector<std::string>& paths,
                                     std::uint64_t h = kFnvOffset) {
  for (const auto& p : paths) h = fnv1a_file(p, h);
  return hex_fingerprint(h);
}

// The XXH3 digest of the files' contents, in order, as "xxh3:" and 16 hex digits. XXH3 reads
// several GB/s where FNV-1a, one byte at a time, reads 0.8: a one-case process spent 0.3 s of
// its 0.33 s load hashing a 250 MB model (libxxhash).
std::string files_digest(const std::vector<std::string>& paths);

}  // namespace ufno
