// SPDX-License-Identifier: MIT
#include "monitor_zset_ranges.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace layoutlab::monitor {

namespace {
// t_zset.c zslParseRange's end: a score, "(" before it for an open end; strtod of the rest whole, not NaN.
std::optional<double> parseRangeScore(const std::string& text, bool& open) {
    open = !text.empty() && text[0] == '(';
    const char* begin = text.c_str() + (open ? 1 : 0);
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end != text.c_str() + text.size() || std::isnan(v))
        return std::nullopt;
    return v;
}
} // namespace

std::optional<ZsetRange> ZsetRange::parse(
    Kind kind, const std::string& min, const std::string& max, std::string& refusal) {
    ZsetRange range;
    range.m_kind = kind;
    switch (kind) {
    case Kind::Score: {
        const auto low = parseRangeScore(min, range.m_minOpen), high = parseRangeScore(max, range.m_maxOpen);
        if (!low || !high) {
            refusal = "min or max is not a float";
            return std::nullopt;
        }
        range.m_min = *low;
        range.m_max = *high;
        return range;
    }
    case Kind::Rank: {
        const auto start = parseLongLong(min), end = parseLongLong(max);
        if (!start || !end) {
            refusal = "value is not an integer or out of range";
            return std::nullopt;
        }
        range.m_start = *start;
        range.m_end = *end;
        return range;
    }
    case Kind::Lex: {
        const auto low = parseLexBound(min), high = parseLexBound(max);
        if (!low || !high) {
            refusal = "min or max not valid string range item";
            return std::nullopt;
        }
        range.m_lexMin = *low;
        range.m_lexMax = *high;
        return range;
    }
    }
    return std::nullopt;
}

ScoredMembers ZsetRange::select(const std::unordered_map<std::string, double>& zset, bool reverse) const {
    ScoredMembers ordered = scoredMembers(zset);
    std::sort(ordered.begin(), ordered.end(), lowerInSortedSet);
    if (reverse)
        std::reverse(ordered.begin(), ordered.end());
    if (m_kind == Kind::Lex)
        return selectLex(std::move(ordered), reverse);
    ScoredMembers out;
    if (m_kind == Kind::Score) {
        for (const auto& e : ordered)
            if ((m_minOpen ? e.first > m_min : e.first >= m_min) && (m_maxOpen ? e.first < m_max : e.first <= m_max))
                out.push_back(e);
        return out;
    }
    // Ranks from 0 in walking order; below 0 counted from the far end; the range clipped to the members.
    const auto length = static_cast<std::int64_t>(ordered.size());
    std::int64_t from = m_start < 0 ? length + m_start : m_start, to = m_end < 0 ? length + m_end : m_end;
    from = std::max<std::int64_t>(from, 0);
    if (from > to || from >= length)
        return out;
    to = std::min(to, length - 1);
    return ScoredMembers(ordered.begin() + from, ordered.begin() + to + 1);
}

ScoredMembers ZsetRange::selectLex(ScoredMembers ordered, bool reversed) const {
    ScoredMembers out;
    const int bounds = compareLex(m_lexMin, m_lexMax);
    if (ordered.empty() || bounds > 0 || (bounds == 0 && (m_lexMin.open || m_lexMax.open)))
        return out;
    const std::string& lowest = *(reversed ? ordered.back() : ordered.front()).second;
    const std::string& highest = *(reversed ? ordered.front() : ordered.back()).second;
    if (!aboveMin(highest) || !belowMax(lowest))
        return out; // zzlIsInLexRange: the members lie wholly outside it
    // The first member within the range's near end, then those after it while within its far end.
    auto nearEnd = [&](const std::string& m) { return reversed ? belowMax(m) : aboveMin(m); };
    auto farEnd = [&](const std::string& m) { return reversed ? aboveMin(m) : belowMax(m); };
    auto at = std::find_if(ordered.begin(), ordered.end(), [&](const auto& e) { return nearEnd(*e.second); });
    for (; at != ordered.end() && farEnd(*at->second); ++at)
        out.push_back(*at);
    return out;
}

bool ZsetRange::aboveMin(std::string_view member) const {
    const int c = compareLex(member, m_lexMin);
    return m_lexMin.open ? c > 0 : c >= 0;
}

bool ZsetRange::belowMax(std::string_view member) const {
    const int c = compareLex(member, m_lexMax);
    return m_lexMax.open ? c < 0 : c <= 0;
}

// t_zset.c zslParseLexRangeItem: "-" and "+" (below and above every member), "(" or "[" before a member for an
// open or a closed end; and sdscmplex, which compares with them.
std::optional<ZsetRange::LexBound> ZsetRange::parseLexBound(const std::string& text) {
    if (text == "-" || text == "+")
        return LexBound { text == "-" ? LexBound::Side::Lowest : LexBound::Side::Highest, {}, true };
    if (text.empty() || (text[0] != '(' && text[0] != '['))
        return std::nullopt;
    return LexBound { LexBound::Side::Member, text.substr(1), text[0] == '(' };
}

int ZsetRange::compareLex(const LexBound& a, const LexBound& b) {
    if (a.side == b.side && a.side != LexBound::Side::Member)
        return 0; // the same shared string
    if (a.side == LexBound::Side::Lowest || b.side == LexBound::Side::Highest)
        return -1;
    if (a.side == LexBound::Side::Highest || b.side == LexBound::Side::Lowest)
        return 1;
    return a.member.compare(b.member); // sdscmp: memcmp, then the shorter first
}

// A member against a bound (sdscmplex(member, bound)).
int ZsetRange::compareLex(std::string_view member, const LexBound& b) {
    if (b.side != LexBound::Side::Member)
        return b.side == LexBound::Side::Highest ? -1 : 1;
    return member.compare(b.member);
}

} // namespace layoutlab::monitor
