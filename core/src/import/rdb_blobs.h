// SPDX-License-Identifier: MIT
#pragma once

// The compact encodings an RDB file holds as one string (rdb.c rdbSaveObject: a listpack's or an intset's
// bytes as they are in memory), decoded into their entries: each one's length as a string and its integer
// class, what the models size a listpack or a table from.

#include "rdb_parser.h"

#include <span>
#include <string>
#include <vector>

namespace layoutlab {

// listpack.c: a 6-byte header (total bytes, entry count), the entries, 0xFF. Appends each entry to `out`
// (an integer as its decimal digits and class, a string as its length); false with `problem` set when the
// bytes are not a whole listpack.
bool decodeListpack(std::span<const unsigned char> bytes, std::vector<RdbItem>& out, std::string& problem);

// intset.h struct intset: encoding (its members' width: 2, 4 or 8 bytes), length, the members. Appends each
// member and gives the width as the integer class of its widest (Int16, Int32, Int64).
bool decodeIntset(
    std::span<const unsigned char> bytes, std::vector<RdbItem>& out, IntegerClass& width, std::string& problem);

} // namespace layoutlab
