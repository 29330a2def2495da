#include "core/Fingerprint.hpp"

#include <memory>
#include <stdexcept>

#include <xxhash.h>

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
