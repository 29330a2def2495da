// core/Fingerprint: the model files' digest that every prediction carries (a batch rerun skips an
// output only when it matches) and the sweep's FNV-1a fingerprint.
#include "core/Fingerprint.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = (fs::temp_directory_path() / ("ufno_fp_" + name)).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// Bytes that vary at every position, longer than the digest's 1 MiB read.
std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = char((i * 2654435761u) >> 13);
  return s;
}

}  // namespace

TEST_CASE("the files' digest is XXH3's: the empty input's published value") {
  // XXH3_64bits of no bytes (seed 0) is 2d06800538d394c2 (xxHash's own test vectors).
  CHECK(ufno::files_digest({write_file("empty", "")}) == "xxh3:2d06800538d394c2");
  CHECK(ufno::files_digest({}) == "xxh3:2d06800538d394c2");
}

TEST_CASE("the files' digest streams: files in order read as one, across 1 MiB reads") {
  const std::string bytes = pattern((std::size_t(3) << 20) + 5);
  const std::size_t cut = (std::size_t(1) << 20) + 17;
  const std::string whole = write_file("whole", bytes);
  const std::string a = write_file("a", bytes.substr(0, cut));
  const std::string b = write_file("b", bytes.substr(cut));
  CHECK(ufno::files_digest({a, b}) == ufno::files_digest({whole}));
  CHECK(ufno::files_digest({b, a}) != ufno::files_digest({whole}));
  // One byte changed past the first read changes the digest.
  std::string changed = bytes;
  changed[(std::size_t(2) << 20) + 3] ^= 1;
  CHECK(ufno::files_digest({write_file("changed", changed)}) != ufno::files_digest({whole}));
}

TEST_CASE("a file the digest cannot open is named in the error") {
  CHECK_THROWS_WITH(ufno::files_digest({"/nonexistent/ufno_model.h5"}),
                    Catch::Contains("/nonexistent/ufno_model.h5"));
}

TEST_CASE("the FNV-1a fingerprint keeps its values: sweeps and model files store them") {
  // Its offset basis is the published one with the last digit dropped (the published basis gives
  // af63dc4c8601ec8c for "a"): model files store head digests made with it, so it stays.
  CHECK(ufno::kFnvOffset * 10 + 7 == 14695981039346656037ull);
  CHECK(ufno::hex_fingerprint(ufno::fnv1a(std::string("a"))) == "44bd8ad473cd9906");
  CHECK(ufno::hex_fingerprint(ufno::fnv1a(std::string("a"), 14695981039346656037ull)) ==
        "af63dc4c8601ec8c");
}
