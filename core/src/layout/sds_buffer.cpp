// SPDX-License-Identifier: MIT
#include "layoutlab/layout/sds_buffer.h"

#include <algorithm>

namespace layoutlab::sds {

namespace {

// sds.c sdsTypeMaxSize.
constexpr std::uint64_t typeMaxSize(Type type) {
    switch (type) {
    case Type::Type5:
        return (1u << 5) - 1;
    case Type::Type8:
        return (1u << 8) - 1;
    case Type::Type16:
        return (1u << 16) - 1;
    case Type::Type32:
        return UINT32_MAX;
    }
    return UINT32_MAX;
}

Type reqType(Flavor flavor, std::uint64_t len) {
    return flavor == Flavor::Valkey ? valkeyReqType(len) : redisReqType(len);
}

std::uint32_t clampCapacity(std::uint64_t capacity) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(capacity, UINT32_MAX));
}

// The buffer a type-`type` sds gets from an allocation of `usable` bytes: Valkey's adjustTypeIfNeeded
// widens the type when the header cannot describe the capacity; Redis 7.0 caps the alloc field.
Buffer fromAllocation(Flavor flavor, Type type, std::uint64_t usable, std::uint64_t len) {
    if (type == Type::Type5)
        return { clampCapacity(len), type };
    std::uint64_t capacity = usable - headerBytes(type) - 1;
    if (capacity > typeMaxSize(type)) {
        if (flavor == Flavor::Valkey) {
            type = valkeyReqType(capacity);
            capacity = usable - headerBytes(type) - 1;
        } else {
            capacity = typeMaxSize(type);
        }
    }
    return { clampCapacity(capacity), type };
}

} // namespace

Buffer newLen(Flavor flavor, std::uint64_t len, const AllocatorModel& allocator) {
    // sds.c _sdsnewlen: "Empty strings are usually created in order to append. Use type 8".
    Type type = reqType(flavor, len);
    if (type == Type::Type5 && len == 0)
        type = Type::Type8;
    return fromAllocation(flavor, type, allocator.usableSize(reqSize(len, type)), len);
}

Buffer makeRoomFor(
    Flavor flavor, const Buffer& buffer, std::uint64_t len, std::uint64_t addlen, const AllocatorModel& allocator) {
    // sds.c _sdsMakeRoomFor(s, addlen, greedy=1): nothing when the free space suffices (type 5 has none).
    if (avail(buffer, len) >= addlen)
        return buffer;
    std::uint64_t newlen = len + addlen;
    newlen = newlen < kMaxPrealloc ? newlen * 2 : newlen + kMaxPrealloc;
    // "Don't use type 5: the user is appending to the string and type 5 is not able to remember empty
    // space".
    Type type = reqType(flavor, newlen);
    if (type == Type::Type5)
        type = Type::Type8;
    return fromAllocation(flavor, type, allocator.usableSize(reqSize(newlen, type)), len + addlen);
}

Buffer resized(Flavor flavor, const Buffer& buffer, std::uint64_t len, std::uint64_t size, bool wouldRegrow,
    const AllocatorModel& allocator) {
    // "Return ASAP if the size is already good" (sdsalloc of type 5 is its length).
    if (buffer.capacity == size)
        return buffer;
    Type type = reqType(flavor, size);
    if (wouldRegrow && type == Type::Type5) // "not good for strings that are expected to grow back"
        type = Type::Type8;
    // "If the type is the same, or can hold the size in it with low overhead (larger than SDS_TYPE_8), we just
    // realloc()", keeping the old header; else a new allocation with the type's.
    const bool inPlace = buffer.type == type || (type < buffer.type && type > Type::Type8);
    const Type kept = inPlace ? buffer.type : type;
    if (flavor == Flavor::Redis70)
        return { clampCapacity(size), kept }; // sdssetalloc(s, size)
    return fromAllocation(flavor, kept, allocator.usableSize(reqSize(size, kept)), std::min(len, size));
}

Buffer trimmedIfNeeded(const Buffer& buffer, std::uint64_t len) {
    // object.c trimStringObjectIfNeeded: sdsavail(s) > sdslen(s)/10 -> sdsRemoveFreeSpace -> sdsResize(s,
    // len): the type for the length (never 5), and alloc set to the length. The allocation keeps its size
    // class (sdsResize reallocates to header + len + 1, the class sdsnewlen chose).
    if (avail(buffer, len) <= len / 10)
        return buffer;
    Type type = redisReqType(len);
    if (type == Type::Type5)
        type = Type::Type8;
    return { clampCapacity(len), type };
}

std::uint64_t headerBytesOf(std::uint64_t bufferBytes, std::uint64_t len) {
    if (bufferBytes == reqSize(len, Type::Type5))
        return headerBytes(Type::Type5);
    // A type-8 buffer's capacity is at most 255; wider types start above that in every flavor.
    if (bufferBytes <= reqSize(typeMaxSize(Type::Type8), Type::Type8))
        return headerBytes(Type::Type8);
    if (bufferBytes <= reqSize(typeMaxSize(Type::Type16), Type::Type16))
        return headerBytes(Type::Type16);
    return headerBytes(Type::Type32);
}

} // namespace layoutlab::sds
