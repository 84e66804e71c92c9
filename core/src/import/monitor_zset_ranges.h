// SPDX-License-Identifier: MIT
#pragma once

// A sorted set's members in a range, as t_zset.c finds them: by score (zslParseRange: "(" before a score for an
// open end, "-inf", "+inf"), by rank (from 0, lowest first; below 0 from the highest; clipped to the members) or
// by member (zslParseLexRangeItem: "-", "+", "(" or "[" before a member). ZREMRANGEBY* removes them
// (monitor_zsets.cpp), ZRANGESTORE stores them (monitor_zset_store.cpp).

#include "monitor_collections.h"

#include <optional>
#include <string>
#include <unordered_map>

namespace layoutlab::monitor {

class ZsetRange {
public:
    enum class Kind : std::uint8_t { Score, Rank, Lex };
    // The range of `min` and `max`; nullopt, with the server's error in `refusal`, when they are not one.
    static std::optional<ZsetRange> parse(
        Kind kind, const std::string& min, const std::string& max, std::string& refusal);
    // The members in it, in the order the server walks them: lowest first, or highest first (`reverse`, a
    // reversed rank counting from the highest). A lexical range is walked as a listpack is (zzlFirstInLexRange,
    // zzlLastInLexRange): nothing when it is empty, or when the members lie wholly below or above it; else from
    // the first member not below it (reversed: not above it) while within it. Where every score is equal, as the
    // commands ask, that is every member in it; where they are not, a skiplist's walk may start elsewhere (its
    // levels are drawn at random).
    ScoredMembers select(const std::unordered_map<std::string, double>& zset, bool reverse = false) const;

private:
    struct LexBound {
        enum class Side : std::uint8_t { Lowest, Highest, Member } side = Side::Member;
        std::string member;
        bool open = false;
    };
    static std::optional<LexBound> parseLexBound(const std::string& text);
    static int compareLex(const LexBound& a, const LexBound& b);
    static int compareLex(std::string_view member, const LexBound& b);
    bool aboveMin(std::string_view member) const;
    bool belowMax(std::string_view member) const;
    ScoredMembers selectLex(ScoredMembers ordered, bool reversed) const;

    Kind m_kind = Kind::Score;
    double m_min = 0, m_max = 0; // Score
    bool m_minOpen = false, m_maxOpen = false;
    std::int64_t m_start = 0, m_end = 0; // Rank
    LexBound m_lexMin, m_lexMax; // Lex
};

} // namespace layoutlab::monitor
