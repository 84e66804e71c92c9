// SPDX-License-Identifier: MIT
#pragma once

// What a value is, as traces record it (the op byte's bits 4-5) and layouts price it.

#include <cstdint>

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

} // namespace layoutlab
