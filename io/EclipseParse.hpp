#pragma once
// Parsing an ECLIPSE deck with opm-common safely: the file is a readable regular file, its
// INCLUDE tree exists, has no cycle and is of bounded size, and OPM's exceptions become one
// printable line naming the file.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <opm/input/eclipse/Deck/Deck.hpp>

namespace ufno {

// The most a deck and its includes may hold together, in bytes: a radial case's deck is a few
// MB, the largest site deck (levels of up to 4.2 M cells, io/NestedSite.cpp) about 200 MB
// written out value by value.
constexpr std::uintmax_t kMaxDeckBytes = std::uintmax_t(512) << 20;

// The deck (a readable regular file) and every file it includes, checked as parse_deck checks
// them before parsing; an InputError names the deck and the file at fault.
std::vector<std::string> deck_files(const std::string& path);

std::unique_ptr<Opm::Deck> parse_deck(const std::string& path);

// The last occurrence of keyword `kw`, or an InputError naming it and why it is needed.
const Opm::DeckKeyword& required_keyword(const Opm::Deck& deck, const std::string& path,
                                         const std::string& kw, const std::string& why);
// RTEMP in degrees Celsius and EQUIL's datum pressure in bar, read the same way for every deck.
double reservoir_temperature_c(const Opm::Deck& deck, const std::string& path);
double datum_pressure_bar(const Opm::Deck& deck, const std::string& path);

// One printable line of an OPM message: OPM echoes the deck's bytes, which may be anything.
std::string printable(const std::exception& e);

}  // namespace ufno
