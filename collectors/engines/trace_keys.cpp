// SPDX-License-Identifier: MIT
#include "layoutlab/collect/trace_keys.h"

#include <algorithm>
#include <string_view>

namespace layoutlab {

namespace {
constexpr std::string_view kKeyPrefix = "key:";
constexpr std::size_t kMaxIdDigits = 10; // 4294967295
constexpr unsigned kShortBase = 94; // '!' .. '~'
} // namespace

std::string traceKeyName(std::uint32_t id, std::uint32_t bytes) {
    // One naming per length: decimal where any 32-bit id fits, base 94 below that, so names of one length
    // never mix the two ways (which could collide).
    if (bytes >= kKeyPrefix.size() + kMaxIdDigits) {
        const std::string digits = std::to_string(id);
        std::string name(kKeyPrefix);
        name.append(bytes - kKeyPrefix.size() - digits.size(), '0');
        return name + digits;
    }
    std::string name(bytes, '!');
    std::uint32_t rest = id;
    for (std::uint32_t i = 0; i < bytes && rest > 0; ++i, rest /= kShortBase)
        name[i] = static_cast<char>('!' + rest % kShortBase);
    return name;
}

bool keyNamesDistinct(std::uint64_t idLimit, std::uint32_t bytes) {
    if (idLimit <= 1 || bytes >= kKeyPrefix.size() + kMaxIdDigits)
        return true;
    std::uint64_t capacity = 1; // 94^bytes, saturating
    for (std::uint32_t i = 0; i < bytes && capacity < idLimit; ++i)
        capacity *= kShortBase;
    return capacity >= idLimit;
}

void KeyNameCheck::see(std::uint32_t keyBytes) {
    if (std::find(m_checked.begin(), m_checked.end(), keyBytes) != m_checked.end())
        return;
    m_checked.push_back(keyBytes);
    m_repeats = m_repeats || (m_idLimit != 0 && !keyNamesDistinct(m_idLimit, keyBytes));
}

std::string traceValue(std::uint32_t bytes, ValueKind kind, std::uint32_t seed) {
    // A decimal that fits a C long is stored by Redis as an integer (object.c tryObjectEncoding). Of 19
    // digits, those from 9223372036854775808 on do not: a 19-digit value starts with at most an 8.
    constexpr std::uint32_t kLongDigits = 19;
    if (kind == ValueKind::String || bytes == 0 || bytes > kLongDigits)
        return std::string(bytes, static_cast<char>('a' + seed % 26));
    std::string digits(bytes, '0');
    digits[0] = static_cast<char>('1' + seed % (bytes == kLongDigits ? 8 : 9));
    for (std::uint32_t i = 1; i < bytes; ++i)
        digits[i] = static_cast<char>('0' + (seed + i) % 10);
    return digits;
}

} // namespace layoutlab
