// SPDX-License-Identifier: MIT
#pragma once

// What one key costs: the shape of a key (its lengths, TTL, value kind) goes in; the allocations the
// store makes for it and the path a GET takes through them come out.

#include "layoutlab/trace/value_kind.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace layoutlab {

struct KeyShape {
    std::uint32_t keyBytes = 0;
    std::uint32_t valueBytes = 0;
    bool hasTtl = false;
    ValueKind kind = ValueKind::String;
    // No TTL now, but the key's object keeps the expire field a TTL once needed: Valkey 8.1 and later
    // remove a TTL by setting the field to -1 (db.c removeExpire -> object.c objectSetExpire), and only
    // a new object drops it. Set only for layouts that track it (LayoutModel::tracksStaleExpire).
    bool staleExpire = false;
    // ValueKind::RawString only: the sds buffer, as header + capacity + NUL (sds.h SdsBuffer::bytes()); the
    // allocator's usable size for it is what the engine holds. 0: the sds as sdsnewlen(valueBytes) makes it.
    std::uint32_t sdsBytes = 0;

    auto operator<=>(const KeyShape&) const = default;
};

enum class Encoding : std::uint8_t {
    Embedded, // value inside the key's main allocation (Valkey/Redis EMBSTR)
    Raw, // value in a separate allocation behind a pointer
    Integer, // value held in the object's pointer field
    SharedInteger, // value is a shared object: no allocation of its own
    Item, // memcached item in one slab chunk
    ChunkedItem, // memcached item split over chunks (larger than slab_chunk_max)
};
std::string_view encodingName(Encoding encoding);

enum class Purpose : std::uint8_t {
    Object, // robj / serverObject (with whatever is embedded in it)
    Key, // a separate key string
    Value, // a separate value string
    Entry, // dictEntry of the keyspace
    ExpireEntry, // dictEntry of the expires dict
    Item, // memcached item
    ItemHeader, // memcached chunked-item header
    ItemChunk, // memcached chunk of a large item
};
std::string_view purposeName(Purpose purpose);

struct Allocation {
    std::uint64_t requestedBytes = 0; // what the store asks the allocator for
    std::uint64_t readBytes = 0; // bytes a GET reads from the start of it (0: not read by GET)
    std::uint32_t count = 1; // identical allocations (chunks of a large item)
    Purpose purpose = Purpose::Object;
    // Key and value bytes inside it, per allocation (the rest of requestedBytes is headers, length
    // fields, terminators and framing). A value held in a pointer field (an integer) counts where the
    // pointer is; a shared integer's value is in no allocation of the key's.
    std::uint64_t payloadBytes = 0;
    // The allocation holding the key a GET compares: memcmpVectorEnd(where the key starts, its length).
    std::uint32_t memcmpEnd = 0;
    // The key a lookup compares is in this allocation (a chain walk reads it of every candidate).
    bool holdsKey = false;

    bool operator==(const Allocation&) const = default;
};

// The engines compare a looked-up key with memcmp (Valkey sdscmp, Redis dictSdsKeyCompare, memcached
// assoc_find). glibc's AVX2 memcmp (sysdeps/x86_64/multiarch/memcmp-avx2-movbe.S, L(less_vec)) compares 2
// to 31 bytes with one whole 32-byte load from each side, unless a load could cross a page: the compare of
// a short key reads past it, into the next line when the key sits near a line's end. Measured on the
// 2025-02-06 Valkey tree under callgrind (docs/validation.md): memcmp's own misses match it, not the key.
inline constexpr std::uint32_t kMemcmpVectorBytes = 32;
inline constexpr std::uint64_t kMemcmpPageBytes = 4096;
// How far from the start of its allocation the compare of `keyBytes` bytes at offset `keyAt` loads
// (0: no whole-vector load).
constexpr std::uint32_t memcmpVectorEnd(std::uint64_t keyAt, std::uint64_t keyBytes) {
    return keyBytes >= 2 && keyBytes < kMemcmpVectorBytes ? static_cast<std::uint32_t>(keyAt + kMemcmpVectorBytes) : 0;
}
// The bytes a GET loads from the start of an allocation at `address` that it reads `readBytes` of: the
// compare's vector as well, where it reaches further and stays in its page (L(page_cross_less_vec)).
constexpr std::uint64_t bytesLoadedAt(std::uint64_t address, std::uint64_t readBytes, std::uint32_t memcmpEnd) {
    if (memcmpEnd <= readBytes)
        return readBytes;
    const std::uint64_t vector = address + memcmpEnd - kMemcmpVectorBytes;
    return vector % kMemcmpPageBytes > kMemcmpPageBytes - kMemcmpVectorBytes ? readBytes : memcmpEnd;
}

struct KeyLayout {
    static constexpr std::size_t kMaxAllocations = 8;
    static constexpr std::size_t kMaxTransients = 6;

    Encoding encoding = Encoding::Raw;
    bool stored = true; // false when the engine refuses the key (memcached: item larger than -I)
    std::array<Allocation, kMaxAllocations> allocations {};
    std::uint8_t allocationCount = 0;
    std::uint8_t indexLinesPerGet = 0; // hash-table lines a GET reads before the first object
    std::uint8_t dependentLoads = 0; // loads whose address was read from memory by an earlier load
    std::uint16_t pointerBytes = 0; // pointer fields of this key's structures, index slots included
    // What a write of the key (SET key value, with EX seconds when it has a TTL) allocates for the command
    // alone, before the key's own allocations: the client's argv array and argument objects, freed when the
    // command ends. The allocator hands a freed region out again first, so from the first write that needs
    // them they hold regions of their classes that the keys' allocations would otherwise take, which shifts
    // where those fall against cache lines. Requested bytes, in allocation order.
    std::array<std::uint32_t, kMaxTransients> transients {};
    std::uint8_t transientCount = 0;
    // Which of them are the key's name as an object (object.c createStringObject: one EMBSTR, or an robj and
    // its sds), the object an expire cycle also makes of a key it removes (expire.c
    // activeExpireCycleTryExpire); none when the layout has no transients.
    std::uint8_t keyArgumentAt = 0;
    std::uint8_t keyArgumentCount = 0;
    // The order the engine makes the allocations in, where it is not the order above (a GET's): two of a
    // key's allocations in one class sit in that order, which decides the lines they share.
    std::array<std::uint8_t, kMaxAllocations> madeOrder {};
    bool madeInOtherOrder = false;

    // The index of the allocation made `n`th.
    std::size_t made(std::size_t n) const { return madeInOtherOrder ? madeOrder[n] : n; }
    // `order`: each allocation's index, as many as allocationCount; the layout's own order is kept as none.
    void setMadeOrder(const std::uint8_t* order, std::size_t count) {
        madeOrder = {};
        madeInOtherOrder = false;
        for (std::size_t n = 0; n < count && n < kMaxAllocations; ++n) {
            madeOrder[n] = order[n];
            madeInOtherOrder = madeInOtherOrder || order[n] != n;
        }
        if (!madeInOtherOrder)
            madeOrder = {};
    }
    void setMadeOrder(std::initializer_list<std::uint8_t> order) { setMadeOrder(order.begin(), order.size()); }

    void add(const Allocation& allocation) { allocations[allocationCount++] = allocation; }
    void addTransient(std::uint64_t bytes) {
        if (transientCount < kMaxTransients)
            transients[transientCount++] = static_cast<std::uint32_t>(bytes);
    }
    bool embedded() const { return encoding == Encoding::Embedded; }
    // The index of the allocation holding the key (Allocation::holdsKey), allocationCount when none does.
    std::size_t keyAllocation() const {
        for (std::size_t a = 0; a < allocationCount; ++a)
            if (allocations[a].holdsKey)
                return a;
        return allocationCount;
    }
    bool operator==(const KeyLayout&) const = default;
};

} // namespace layoutlab
