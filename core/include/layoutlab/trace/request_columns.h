// SPDX-License-Identifier: MIT
#pragma once

// A block of requests as the binary trace stores them, column by column (docs/trace-format.md), for
// consumers that need a few fields of every request rather than whole requests: statistics read the op
// bytes, key ids and sizes straight from the columns and never build a Request.

#include "layoutlab/trace/request.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace layoutlab {

// Little-endian values of `width` bytes each (0 to 4; 0: every value is 0). Eight bytes are readable from
// each value's start, so a value is one word load and a mask.
struct FixedWidthColumn {
    const unsigned char* data = nullptr;
    unsigned width = 0;

    std::uint64_t mask() const { return width >= 8 ? ~std::uint64_t { 0 } : (std::uint64_t { 1 } << (8 * width)) - 1; }
    std::uint64_t at(std::size_t i) const {
        std::uint64_t word;
        std::memcpy(&word, data + i * width, sizeof word);
        return word & mask();
    }
};

// One op byte per request: bits 0-3 the Op, bits 4-5 the ValueKind, bit 6 set when the request carries a
// TTL. A reader hands out only checked columns: every op byte names an op and a kind, bit 7 is clear, and
// every key id is below the trace's key-id limit.
struct RequestColumns {
    std::size_t count = 0;
    const unsigned char* opBytes = nullptr;
    FixedWidthColumn keyIds;
    FixedWidthColumn keyBytes;
    FixedWidthColumn valueBytes;

    static constexpr unsigned kOpMask = 0x0f;
    static constexpr unsigned kHasTtlShift = 6;
    static Op opOf(unsigned opByte) { return static_cast<Op>(opByte & kOpMask); }
    static bool hasTtl(unsigned opByte) { return (opByte >> kHasTtlShift) & 1; }
};

} // namespace layoutlab
