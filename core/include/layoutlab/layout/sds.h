// SPDX-License-Identifier: MIT
#pragma once

// Simple Dynamic Strings, as Valkey and Redis allocate them (src/sds.h, src/sds.c).
//
//   [len][alloc][flags] buf... '\0'      sdsReqSize(len, type) = hdr(type) + len + 1
//   type 5: 1-byte header (flags holds the length, len < 32)
//   type 8: 3 bytes, type 16: 5 bytes, type 32: 9 bytes

#include <cstdint>

namespace layoutlab::sds {

enum class Type : std::uint8_t { Type5, Type8, Type16, Type32 };

// sds.h: sizeof(struct sdshdr5/8/16/32) (packed).
constexpr std::uint64_t headerBytes(Type type) {
    switch (type) {
    case Type::Type5:
        return 1;
    case Type::Type8:
        return 3;
    case Type::Type16:
        return 5;
    case Type::Type32:
        return 9;
    }
    return 9;
}

// Valkey src/sds.c sdsReqType(): picks the smallest type whose header can also describe the
// allocation, so type 8 ends at 252 bytes ((1 << 8) - sizeof(sdshdr8) - 1) and type 16 at 65530.
constexpr Type valkeyReqType(std::uint64_t len) {
    if (len < (1u << 5))
        return Type::Type5;
    if (len <= (1u << 8) - headerBytes(Type::Type8) - 1)
        return Type::Type8;
    if (len <= (1u << 16) - headerBytes(Type::Type16) - 1)
        return Type::Type16;
    return Type::Type32;
}

// Redis 7.0.15 src/sds.c sdsReqType(): plain length limits.
constexpr Type redisReqType(std::uint64_t len) {
    if (len < (1u << 5))
        return Type::Type5;
    if (len < (1u << 8))
        return Type::Type8;
    if (len < (1u << 16))
        return Type::Type16;
    return Type::Type32;
}

// sds.h sdsReqSize(): header + string + NUL terminator.
constexpr std::uint64_t reqSize(std::uint64_t len, Type type) {
    return headerBytes(type) + len + 1;
}

// sdsnewlen() of a string value: empty strings get type 8 (sds.c _sdsnewlen: "Empty strings are
// usually created in order to append. Use type 8 since type 5 is not good at this").
constexpr std::uint64_t valkeyNewLenBytes(std::uint64_t len) {
    return reqSize(len, len == 0 ? Type::Type8 : valkeyReqType(len));
}
constexpr std::uint64_t redisNewLenBytes(std::uint64_t len) {
    return reqSize(len, len == 0 ? Type::Type8 : redisReqType(len));
}

// The sds a client's argument arrives in (networking.c processMultibulkBuffer -> object.c
// createStringObject): up to OBJ_ENCODING_EMBSTR_SIZE_LIMIT bytes it is an EMBSTR, whose sds is always
// type 8 (createEmbeddedStringObject: struct sdshdr8); longer, an sdsnewlen of the smallest type.
// Valkey 8.0's dict entries, and the 8.1 development tree of 2025-01-27, embed a key as it arrived
// (sdscopytobuffer copies sdsminlen(key)).
constexpr std::uint64_t valkeyArgvBytes(std::uint64_t len, std::uint64_t embstrLimit) {
    return len <= embstrLimit ? reqSize(len, Type::Type8) : valkeyNewLenBytes(len);
}

static_assert(reqSize(16, Type::Type5) == 18, "a 16-byte key sds is 18 bytes (LAYOUTS-valkey-redis.md §2)");
static_assert(valkeyNewLenBytes(96) == 100 && valkeyNewLenBytes(1024) == 1030);

} // namespace layoutlab::sds
