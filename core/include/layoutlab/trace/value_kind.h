// SPDX-License-Identifier: MIT
#pragma once

// What a value is, as traces record it (the op byte's bits 4-5) and layouts price it.

#include <cstdint>
#include <string_view>

namespace layoutlab {

enum class ValueKind : std::uint8_t {
    String = 0, // arbitrary bytes
    Integer = 1, // a canonical decimal integer that fits a C long
    SmallInteger = 2, // an integer in [0, 9999]: Redis shares these (OBJ_SHARED_INTEGERS)
    // Not in traces: a string the engine holds RAW whatever the threshold, because a command changed it in
    // place (APPEND, SETRANGE: db.c dbUnshareStringValue turns the value into a RAW sds first). Its sds
    // buffer is KeyShape::sdsBytes.
    RawString = 3,
};
inline constexpr bool isIntegerKind(ValueKind kind) {
    return kind == ValueKind::Integer || kind == ValueKind::SmallInteger;
}

// An integer as a listpack or an intset stores it, by its magnitude (listpack.c lpEncodeIntegerGetType:
// 7-bit unsigned, 13-, 16-, 24-, 32- or 64-bit signed; an intset takes 16, 32 or 64 bits by the same
// ranges, intset.c _intsetValueEncoding). None: not an integer lpStringToInt64 takes; stored as a string.
enum class IntegerClass : std::uint8_t { None = 0, Uint7, Int13, Int16, Int24, Int32, Int64 };
inline constexpr unsigned kIntegerClassCount = 7;
inline constexpr IntegerClass integerClassOf(std::int64_t v) {
    if (v >= 0 && v <= 127)
        return IntegerClass::Uint7;
    if (v >= -4096 && v <= 4095)
        return IntegerClass::Int13;
    if (v >= -32768 && v <= 32767)
        return IntegerClass::Int16;
    if (v >= -8388608 && v <= 8388607)
        return IntegerClass::Int24;
    if (v >= -2147483648LL && v <= 2147483647LL)
        return IntegerClass::Int32;
    return IntegerClass::Int64;
}

// The largest integer of `digits` decimal digits (1 to 19; 19: the largest a long long holds).
inline constexpr std::int64_t largestOfDigits(std::uint32_t digits) {
    std::int64_t v = 9;
    for (std::uint32_t d = 1; d < digits && d < 18; ++d)
        v = v * 10 + 9;
    return digits >= 19 ? INT64_MAX : v;
}

// How a server holds a string it is given (object.c tryObjectEncoding): as an integer when it is at most 20
// characters that string2l takes (util.c string2ll: an optional '-', then "0" alone or digits without a
// leading zero, within a long long; "-0" is not one), else as bytes.
inline constexpr ValueKind valueKindOf(std::string_view value) {
    if (value.empty() || value.size() > 20)
        return ValueKind::String;
    if (value == "0")
        return ValueKind::SmallInteger;
    const bool negative = value[0] == '-';
    const std::string_view digits = value.substr(negative ? 1 : 0);
    if (digits.empty() || digits.size() > 19 || digits[0] < '1' || digits[0] > '9')
        return ValueKind::String;
    for (const char c : digits)
        if (c < '0' || c > '9')
            return ValueKind::String;
    if (digits.size() == 19 && digits > (negative ? "9223372036854775808" : "9223372036854775807"))
        return ValueKind::String;
    return !negative && digits.size() <= 4 ? ValueKind::SmallInteger : ValueKind::Integer;
}

// The integer class of a string as listpack.c lpStringToInt64 takes it (string2ll's rules: what
// valueKindOf calls an integer), None for any other string.
IntegerClass integerClassOf(std::string_view value);

} // namespace layoutlab
