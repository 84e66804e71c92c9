// SPDX-License-Identifier: MIT
#pragma once

// One hash key as an engine holds it, in its compact encoding (a listpack) or its full one (a hash
// table of separate entries), chosen by the engine's limits as it chooses (t_hash.c
// hashTypeTryConversion, hashTypeSet): more than hash-max-listpack-entries fields, or a field or value
// longer than hash-max-listpack-value bytes, and the hash is a table.
//
// Modelled for the engines whose hashes are dicts (Redis 7.0 and 7.2, Valkey 8.0: layouts redis-7.0 and
// valkey-8.0), and for Valkey 8.1 and later (hashtable.c tables of hashTypeEntry or entry.c entries; see
// hash_layout.cpp), from their source:
//   listpack (listpack.c): a 6-byte header (total bytes, element count), each field and value an entry
//     (its encoding: a string of under 64 bytes takes 1 byte, under 4,096 2, else 5; an integer string
//     1 to 9 bytes by its magnitude, lpEncodeGetType), then its backlen (lpEncodeBacklen: 1 byte up to
//     127, 2 up to 16,382, ...), and a 1-byte end. Grown by realloc to its exact size (lpInsert), so it
//     holds the size class of its bytes.
//   table (dict.c): the dict (56 bytes), 8 bytes per bucket, a 24-byte dictEntry per field, and the
//     field and the value each an sds of the smallest header (hashTypeSet: sdsdup of the arguments). The
//     buckets are the power of two at or above the fields (at least 4: _dictNextExp), and a table that
//     grew on an insert keeps its old half until incremental rehashing has moved every non-empty bucket
//     of it, one per later lookup (_dictRehashStep: two per field an HSET adds on Redis 7.0, one on 7.2 and
//     Valkey 8.0): a hash that grew near its last field holds both. The table grows and rehashes as the
//     keyspace's does (sim/index_table_model.h), which hashtable.c's tables (8.1 and later) do too.
// The key's own allocations (its keyspace entry, key, object header, expire entry) are the layout's own, as
// it describes a string key whose value it never embeds.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/expected.h"
#include "layoutlab/layout/key_layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace layoutlab {

class LayoutModel;

struct HashShape {
    std::uint32_t keyBytes = 16;
    std::uint64_t entries = 1; // fields
    std::uint32_t fieldBytes = 8;
    std::uint32_t valueBytes = 8;
    // Values that are integer strings (a listpack stores them as integers; a table as their digits). The
    // integer taken is the largest of valueBytes digits (999 for 3), whose encoding the others of that
    // length share or undercut by a byte.
    bool integerValues = false;
    bool hasTtl = false;
    // How the fields arrived: all in one HSET (a table is sized for them at once) or one per HSET (it
    // grows, and may be rehashing when the last arrives).
    bool oneCommand = true;
};

// The engine's settings (config.c defaults).
struct HashLimits {
    std::uint64_t maxListpackEntries = 512; // hash-max-listpack-entries (hash-max-ziplist-entries)
    std::uint64_t maxListpackValue = 64; // hash-max-listpack-value
};

struct HashPart {
    std::string what; // "listpack", "dict", "buckets", "entries", "fields", "values", or the key's own
    std::uint64_t requestedBytes = 0;
    std::uint64_t count = 1;
};

struct HashKeyLayout {
    std::string encoding; // "listpack" or "hashtable"
    std::string why; // the rule that chose it, in the engine's words
    std::vector<HashPart> parts; // the key's own first, then the hash's
    // Usable bytes of every part, under the allocator.
    std::uint64_t usableBytes(const AllocatorModel& allocator) const;
};

// Listpack sizes (listpack.c), exposed for the tests.
namespace listpack {
std::uint64_t stringEntryBytes(std::uint64_t length); // encoding + data + backlen
std::uint64_t integerEntryBytes(std::int64_t value);
inline constexpr std::uint64_t kHeaderBytes = 6; // LP_HDR_SIZE
inline constexpr std::uint64_t kEndBytes = 1; // LP_EOF
} // namespace listpack

// The hash as `layout` holds it; an error naming the layout when it has no hash model yet.
Expected<HashKeyLayout> describeHash(
    const LayoutModel& layout, const HashShape& shape, const AllocatorModel& allocator, const HashLimits& limits = {});

} // namespace layoutlab
