#pragma once
// Parsing an ECLIPSE deck with opm-common safely: the file is a readable regular file, its
// INCLUDE tree exists, has no cycle and is of bounded size, and OPM's exceptions become one
// printable line naming the file.
#include <memory>
#include <stdexcept>
#include <string>

#include <opm/input/eclipse/Deck/Deck.hpp>

namespace ufno {

std::unique_ptr<Opm::Deck> parse_deck(const std::string& path);

// One printable line of an OPM message: OPM echoes the deck's bytes, which may be anything.
std::string printable(const std::exception& e);

}  // namespace ufno
