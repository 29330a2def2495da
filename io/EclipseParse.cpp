#include "io/EclipseParse.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include <opm/input/eclipse/Parser/ErrorGuard.hpp>
#include <opm/input/eclipse/Parser/ParseContext.hpp>
#include <opm/input/eclipse/Parser/Parser.hpp>

#include "core/InputError.hpp"

namespace ufno {

namespace {

// The INCLUDE file names of one deck file (quoted or bare, up to the '/'); names with $ aliases
// (PATHS) are left to OPM.
std::vector<std::string> include_names(const std::string& file) {
  std::ifstream f(file);
  std::vector<std::string> names;
  std::string line;
  bool want = false;
  while (std::getline(f, line)) {
    line = line.substr(0, line.find("--"));
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    std::string text = line.substr(first);
    if (!want) {
      want =
          text.rfind("INCLUDE", 0) == 0 && text.find_first_not_of(" \t\r", 7) == std::string::npos;
      continue;
    }
    text = text.substr(0, text.find('/') == 0 ? 0 : text.rfind('/'));
    text.erase(text.find_last_not_of(" \t\r") + 1);
    if (!text.empty() && (text.front() == '\'' || text.front() == '"'))
      text = text.substr(1, text.find(text.front(), 1) - 1);
    if (!text.empty() && text.find('$') == std::string::npos) names.push_back(text);
    want = false;
  }
  return names;
}

// Before OPM parses anything: every INCLUDE exists and is a regular file, none includes itself
// (directly or through others; OPM would recurse until memory runs out), and the tree is of a
// bounded size, in files and in bytes (OPM holds about seven times a deck's bytes while it
// parses). Relative names resolve against the top deck's directory, as OPM does. The deck and
// every file it includes, in the order they are met.
std::vector<std::string> checked_include_tree(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(path).parent_path();
  constexpr int kMaxFiles = 10000, kMaxDepth = 64;
  std::uintmax_t bytes = 0;
  std::vector<std::string> files;
  auto count = [&](const fs::path& file) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(file, ec);
    bytes += ec ? 0 : size;
    if (bytes > kMaxDeckBytes)
      throw InputError(path, file.string() == path ? "" : "INCLUDE",
                       (file.string() == path ? std::string("the deck")
                                              : "with " + file.string() + ", the deck") +
                           " is larger than " + std::to_string(kMaxDeckBytes >> 20) +
                           " MiB in all (the limit on a deck and its includes)");
    files.push_back(file.string());
  };
  std::function<void(const fs::path&, std::vector<fs::path>&)> visit =
      [&](const fs::path& file, std::vector<fs::path>& chain) {
        if (int(files.size()) > kMaxFiles || int(chain.size()) > kMaxDepth)
          throw InputError(path, "INCLUDE",
                           "more than " + std::to_string(kMaxFiles) + " files or " +
                               std::to_string(kMaxDepth) + " levels of includes");
        for (const auto& name : include_names(file.string())) {
          const fs::path inc = fs::path(name).is_absolute() ? fs::path(name) : root / name;
          std::error_code ec;
          if (!fs::is_regular_file(inc, ec))
            throw InputError(path, "INCLUDE",
                             "file " + inc.string() + " (included from " + file.string() +
                                 ") is missing or not a file");
          const fs::path canon = fs::canonical(inc);
          if (std::find(chain.begin(), chain.end(), canon) != chain.end())
            throw InputError(path, "INCLUDE",
                             inc.string() + " includes itself (from " + file.string() + ")");
          count(inc);
          chain.push_back(canon);
          visit(inc, chain);
          chain.pop_back();
        }
      };
  count(path);
  std::vector<fs::path> chain{fs::canonical(path)};
  visit(path, chain);
  return files;
}

// One printable line of an OPM message: OPM echoes the deck's bytes, which may be anything.
}  // namespace

const Opm::DeckKeyword& required_keyword(const Opm::Deck& deck, const std::string& path,
                                         const std::string& kw, const std::string& why) {
  if (!deck.hasKeyword(kw)) throw InputError(path, kw, "keyword is missing (" + why + ")");
  return deck[kw].back();
}

double reservoir_temperature_c(const Opm::Deck& deck, const std::string& path) {
  // SI temperatures are absolute.
  return required_keyword(deck, path, "RTEMP", "temperature")
             .getRecord(0)
             .getItem(0)
             .getSIDouble(0) -
         273.15;
}

double datum_pressure_bar(const Opm::Deck& deck, const std::string& path) {
  return required_keyword(deck, path, "EQUIL", "initial pressure")
             .getRecord(0)
             .getItem("DATUM_PRESSURE")
             .getSIDouble(0) /
         1e5;
}

std::string printable(const std::exception& e) {
  std::string m = e.what();
  for (auto& ch : m)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
  return m.substr(0, 300);
}

std::vector<std::string> deck_files(const std::string& path) {
  {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw InputError(path, "",
                       std::filesystem::exists(path, ec)
                           ? "is not a regular file (a directory, device or FIFO)"
                           : "cannot be opened (missing or unreadable)");
    std::ifstream probe(path);
    if (!probe) throw InputError(path, "", "cannot be opened (missing or unreadable)");
  }
  return checked_include_tree(path);
}

std::unique_ptr<Opm::Deck> parse_deck(const std::string& path) {
  deck_files(path);
  Opm::Parser parser;
  Opm::ParseContext ctx;
  Opm::ErrorGuard errors;
  try {
    return std::make_unique<Opm::Deck>(parser.parseFile(path, ctx, errors));
  } catch (const std::exception& e) {
    throw InputError(path, "", "the deck cannot be parsed: " + printable(e));
  }
}

}  // namespace ufno
