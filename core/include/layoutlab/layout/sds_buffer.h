// SPDX-License-Identifier: MIT
#pragma once

// An sds string's buffer as the engine's sds.c sizes it: what sdsnewlen() makes for a string of some
// length, and how sdsMakeRoomFor() grows it when APPEND or SETRANGE lengthens the string in place. The
// capacity a growth leaves is what decides whether the next APPEND allocates again.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/layout/sds.h"

#include <cstdint>

namespace layoutlab::sds {

// The two sds.c generations the layouts model.
enum class Flavor : std::uint8_t {
    // Redis 7.0 sds.c: sdsReqType by plain length limits; a buffer larger than its type can describe
    // keeps the type, its alloc field capped at the type's maximum.
    Redis70,
    // Valkey 8.0 and later sds.c: sdsReqType leaves room for the header; adjustTypeIfNeeded moves to a
    // wider type when the allocator's usable size exceeds what the header can describe.
    Valkey,
};

struct Buffer {
    std::uint32_t capacity = 0; // sdsalloc(): bytes the string may hold (type 5: its own length)
    Type type = Type::Type8;

    // Header + capacity + NUL: the allocator's usable size for this many bytes is the buffer's.
    std::uint64_t bytes() const { return headerBytes(type) + capacity + 1; }
    bool operator==(const Buffer&) const = default;
};

// sds.c sdsavail: the free bytes past a string of `len` bytes (a type-5 string has none).
inline std::uint64_t avail(const Buffer& buffer, std::uint64_t len) {
    return buffer.type == Type::Type5 ? 0 : buffer.capacity - (len < buffer.capacity ? len : buffer.capacity);
}

// sds.c SDS_MAX_PREALLOC: a growth doubles the new length below 1 MiB, and adds 1 MiB above.
inline constexpr std::uint64_t kMaxPrealloc = 1024 * 1024;

// sds.c sdsnewlen(len): the buffer a string of `len` bytes is created in.
Buffer newLen(Flavor flavor, std::uint64_t len, const AllocatorModel& allocator);
// sds.c sdsMakeRoomFor(s, addlen) (greedy) on a string of `len` bytes in `buffer`.
Buffer makeRoomFor(
    Flavor flavor, const Buffer& buffer, std::uint64_t len, std::uint64_t addlen, const AllocatorModel& allocator);
// sds.c sdsResize(s, size, would_regrow) on a string of `len` bytes in `buffer`: the header the size needs (never
// type 5 when it would regrow), kept where the allocation is reallocated in place; the alloc field the size
// itself (Redis 7.x) or what the allocator gave (Valkey: s_realloc_usable / s_malloc_usable).
Buffer resized(Flavor flavor, const Buffer& buffer, std::uint64_t len, std::uint64_t size, bool wouldRegrow,
    const AllocatorModel& allocator);
// Redis 7.0 object.c trimStringObjectIfNeeded -> sds.c sdsRemoveFreeSpace: a RAW value with more than
// 10% free space keeps its allocation but records a capacity of its length.
Buffer trimmedIfNeeded(const Buffer& buffer, std::uint64_t len);
// The header of a buffer of Buffer::bytes() `bufferBytes` holding `len` bytes (for the bytes a read
// of the string touches).
std::uint64_t headerBytesOf(std::uint64_t bufferBytes, std::uint64_t len);

} // namespace layoutlab::sds
