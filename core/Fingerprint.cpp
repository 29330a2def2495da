#include "core/Fingerprint.hpp"

#include <memory>
#include <stdexcept>

// Header-only: the digest needs libxxhash-dev's header at build time and no library at run time
// (the GPU bundle runs on machines without libxxhash). GCC 12 warns of uninitialised values
// inside its own AVX-512 intrinsics as xxHash uses them (a false positive of the compiler's).
#define XXH_INLINE_ALL
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <xxhash.h>
#pragma GCC diagnostic pop

namespace ufno {

std::string files_digest(const std::vector<std::string>& paths) {
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(),
                                                                        &XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK)
    throw std::runtime_error("files_digest: cannot start an XXH3 state");
  std::vector<unsigned char> buf(std::size_t(1) << 20);
  for (const auto& path : paths) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw InputError(path, "", "cannot be opened");
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f.get())) > 0)
      XXH3_64bits_update(state.get(), buf.data(), n);
    if (std::ferror(f.get())) throw InputError(path, "", "cannot be read");
  }
  return "xxh3:" + hex_fingerprint(XXH3_64bits_digest(state.get()));
}

}  // namespace ufno
