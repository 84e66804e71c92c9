// SPDX-License-Identifier: MIT
#pragma once

// What one key costs: the shape of a key (its lengths, TTL, value kind) goes in; the allocations the
// store makes for it and the path a GET takes through them come out.

#include "layoutlab/trace/value_kind.h"

#include <array>
#include <cstdint>
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

    bool operator==(const Allocation&) const = default;
};

struct KeyLayout {
    static constexpr std::size_t kMaxAllocations = 8;

    Encoding encoding = Encoding::Raw;
    bool stored = true; // false when the engine refuses the key (memcached: item larger than -I)
    std::array<Allocation, kMaxAllocations> allocations {};
    std::uint8_t allocationCount = 0;
    std::uint8_t indexLinesPerGet = 0; // hash-table lines a GET reads before the first object
    std::uint8_t dependentLoads = 0; // loads whose address was read from memory by an earlier load
    std::uint16_t pointerBytes = 0; // pointer fields of this key's structures, index slots included

    void add(const Allocation& allocation) { allocations[allocationCount++] = allocation; }
    bool embedded() const { return encoding == Encoding::Embedded; }
    bool operator==(const KeyLayout&) const = default;
};

} // namespace layoutlab
