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

// The last occurrence of keyword `kw`, or an InputError naming it and why it is needed.
const Opm::DeckKeyword& required_keyword(const Opm::Deck& deck, const std::string& path,
                                         const std::string& kw, const std::string& why);
// RTEMP in degrees Celsius and EQUIL's datum pressure in bar, read the same way for every deck.
double reservoir_temperature_c(const Opm::Deck& deck, const std::string& path);
double datum_pressure_bar(const Opm::Deck& deck, const std::string& path);

// One printable line of an OPM message: OPM echoes the deck's bytes, which may be anything.
std::string printable(const std::exception& e);

}  // namespace ufno
