// SPDX-License-Identifier: MIT
// The texts drive's writer makes up for a trace's elements (element_commands.h elementText, scoreText): names
// and values of exactly a length and an integer class, and sorted-set scores whose printed text has the lengths
// a trace gives.
#include "layoutlab/collect/element_commands.h"

#include "layoutlab/trace/random.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <optional>

namespace layoutlab {

namespace {

// Wide enough for every count of integers of one length and class (a long long's whole range and more).
__extension__ typedef __int128 Wide;

struct Range {
    Wide low = 0;
    Wide high = -1; // empty when high < low
    Wide count() const { return high >= low ? high - low + 1 : 0; }
};

Range intersect(Range a, Range b) {
    return { std::max(a.low, b.low), std::min(a.high, b.high) };
}

Wide powerOfTen(std::uint32_t e) {
    Wide v = 1;
    for (std::uint32_t i = 0; i < e; ++i)
        v *= 10;
    return v;
}

// The integers of each class (value_kind.h integerClassOf, listpack.c lpEncodeIntegerGetType): the positive
// part, then the negative part.
std::array<Range, 2> classRanges(IntegerClass cls) {
    constexpr Wide kMin = std::numeric_limits<std::int64_t>::min();
    constexpr Wide kMax = std::numeric_limits<std::int64_t>::max();
    switch (cls) {
    case IntegerClass::Uint7:
        return { Range { 0, 127 }, Range {} };
    case IntegerClass::Int13:
        return { Range { 128, 4095 }, Range { -4096, -1 } };
    case IntegerClass::Int16:
        return { Range { 4096, 32767 }, Range { -32768, -4097 } };
    case IntegerClass::Int24:
        return { Range { 32768, 8388607 }, Range { -8388608, -32769 } };
    case IntegerClass::Int32:
        return { Range { 8388608, 2147483647 }, Range { -2147483648LL, -8388609 } };
    case IntegerClass::Int64:
        return { Range { 2147483648LL, kMax }, Range { kMin, -2147483649LL } };
    case IntegerClass::None:
        break;
    }
    return {};
}

// The integers printed in exactly `bytes` characters: positive (no leading zero), and negative.
std::array<Range, 2> lengthRanges(std::uint32_t bytes) {
    Range positive, negative;
    if (bytes >= 1 && bytes <= 19)
        positive = { bytes == 1 ? 0 : powerOfTen(bytes - 1), powerOfTen(bytes) - 1 };
    if (bytes >= 2 && bytes <= 20)
        negative = { -(powerOfTen(bytes - 1) - 1), bytes == 2 ? -1 : -powerOfTen(bytes - 2) };
    return { positive, negative };
}

std::string printed(Wide v) {
    return fmt::format("{}", static_cast<std::int64_t>(v));
}

constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// How many texts of `bytes` letters and digits, a letter first, there are (saturated).
Wide letterTexts(std::uint32_t bytes) {
    if (bytes == 0)
        return 1;
    Wide count = kLetters.size();
    for (std::uint32_t i = 1; i < bytes && count < Wide { UINT64_MAX }; ++i)
        count *= kChars.size();
    return std::min(count, Wide { UINT64_MAX });
}

// The `n`th such text: never an integer string2ll takes, nor a float strtold does.
std::string letterText(std::uint32_t bytes, Wide n) {
    std::string out(bytes, 'x');
    if (bytes == 0)
        return out;
    out[0] = kLetters[static_cast<std::size_t>(n % kLetters.size())];
    n /= kLetters.size();
    for (std::uint32_t i = 1; i < bytes && n; ++i) {
        out[i] = kChars[static_cast<std::size_t>(n % kChars.size())];
        n /= kChars.size();
    }
    return out;
}

} // namespace

bool elementText(std::uint32_t bytes, IntegerClass cls, std::uint64_t n, std::string& out, std::uint64_t first) {
    if (cls != IntegerClass::None) {
        const auto classes = classRanges(cls);
        const auto lengths = lengthRanges(bytes);
        const Range positive = intersect(classes[0], lengths[0]);
        const Range negative = intersect(classes[1], lengths[1]);
        const Wide total = positive.count() + negative.count();
        if (total > 0) {
            const Wide at = (Wide { first } + n) % total;
            out = printed(at < positive.count() ? positive.low + at : negative.low + (at - positive.count()));
            return Wide { n } < total;
        }
        // No integer of this class is this long: a string of the length.
        out = letterText(bytes, (Wide { first } + n) % letterTexts(bytes));
        return false;
    }
    const Wide total = letterTexts(bytes);
    out = letterText(bytes, (Wide { first } + n) % total);
    return Wide { n } < total; // else the name repeats one made before
}

namespace {
// Texts of `shortest` characters, digits around one point, whose number prints back as them (the shortest
// text that reads back) and in "%.17g" (Redis 7.0's util.c d2string) in `seventeen` characters: drawn from a
// fixed sequence, the first that fits remembered for each pair of lengths.
std::optional<std::string> printedInSeventeen(std::uint32_t shortest, std::uint32_t seventeen) {
    thread_local std::map<std::pair<std::uint32_t, std::uint32_t>, std::optional<std::string>> found;
    const auto [at, made] = found.try_emplace({ shortest, seventeen });
    if (!made || shortest < 3 || shortest > 18)
        return at->second;
    std::uint64_t state = std::uint64_t { shortest } << 32 | seventeen;
    auto digit = [&state](char from) { return static_cast<char>(from + Random::splitmix64(state) % ('9' - from + 1)); };
    for (int tries = 0; tries < 20000; ++tries) {
        const std::uint32_t point = 1 + static_cast<std::uint32_t>(Random::splitmix64(state) % (shortest - 2));
        std::string text(shortest, '.');
        for (std::uint32_t i = 0; i < shortest; ++i)
            if (i != point) // no leading zero but "0.", no trailing one
                text[i] = digit((i == 0 && point > 1) || i + 1 == shortest ? '1' : '0');
        const double v = std::strtod(text.c_str(), nullptr);
        std::array<char, 40> shortestText {}, printed {};
        const auto end = std::to_chars(shortestText.data(), shortestText.data() + shortestText.size(), v).ptr;
        const auto printedEnd // as "%.17g" prints it
            = std::to_chars(printed.data(), printed.data() + printed.size(), v, std::chars_format::general, 17).ptr;
        if (std::string_view(shortestText.data(), static_cast<std::size_t>(end - shortestText.data())) == text
            && printedEnd - printed.data() == static_cast<std::ptrdiff_t>(seventeen)) {
            at->second = text;
            break;
        }
    }
    return at->second;
}
// "1." and the digits of 2^-k, k = length - 2 (2^-k = 5^k / 10^k): a text of `length` characters, 3 to 18.
std::string onePlusPowerOfHalf(std::uint32_t length) {
    const std::uint32_t k = length - 2;
    std::uint64_t fivePower = 1;
    for (std::uint32_t i = 0; i < k; ++i)
        fivePower *= 5;
    return fmt::format("1.{:0>{}}", fivePower, k);
}
} // namespace

bool scoreText(std::uint32_t packed, IntegerClass cls, std::string& out) {
    const std::uint32_t bytes = shortestScoreBytes(packed), seventeen = seventeenDigitScoreBytes(packed);
    if (cls != IntegerClass::None)
        return elementText(bytes, cls, 0, out);
    if (bytes == 2) {
        out = "-0"; // the one score of two characters that is not an integer: d2string's negative zero
        return true;
    }
    // 1 + 2^-k prints in full in k fraction digits (2^-k = 5^k / 10^k), within the 17 significant digits
    // d2string keeps: from "1.5" (3 characters) to 16 fraction digits (18).
    constexpr std::uint32_t kShortest = 3, kLongest = 18;
    if (seventeen == 0 && bytes >= kShortest && bytes <= kLongest) {
        out = onePlusPowerOfHalf(bytes);
        return true;
    }
    const std::uint32_t printed = seventeen != 0 ? seventeen : bytes;
    if (auto text = printedInSeventeen(bytes, printed)) {
        out = std::move(*text);
        return true;
    }
    // A negative number's texts are a sign longer (a weighted sum's, a score given below 0).
    if (bytes > kShortest && printed > kShortest)
        if (auto text = printedInSeventeen(bytes - 1, printed - 1)) {
            out = "-" + *text;
            return true;
        }
    out = onePlusPowerOfHalf(std::clamp(bytes, kShortest, kLongest)); // the nearest length there is
    return false;
}

} // namespace layoutlab
