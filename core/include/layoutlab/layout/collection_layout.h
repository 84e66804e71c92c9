// SPDX-License-Identifier: MIT
#pragma once

// One collection key (a hash, set, sorted set or list) as an engine holds it: in its compact encoding (a
// listpack, an intset) or its full one (a table of separate entries, a skiplist beside a table, a quicklist
// of listpacks), chosen by the engine's limits as the engine chooses. Each type's rules, with their sources,
// are in its own file: hash_layout.cpp, set_layout.cpp, zset_layout.cpp and list_layout.cpp.
//
// Modelled for every engine line at hand: Redis 7.0 and 7.2 (layouts redis-7.0, redis-7.2), Valkey 8.0 (dict
// tables, valkey-8.0), and Valkey 8.1 and later (hashtable.c tables, valkey-8.1, -9.0, -9.1).
// The key's own allocations (its keyspace entry, key, object header, expire entry) are the layout's own, as
// it describes a string key whose value it never embeds (object.c: a collection's robj is createObject's).
//
// Expected values: where the engine draws at random (a skiplist node's level, zslRandomLevel) or its layout
// depends on where the keys' hashes fall (child buckets, the set dicts' bucket-held members), a part's count
// is its expectation, so that a keyspace of such keys sums to what a server holds.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/expected.h"
#include "layoutlab/trace/value_kind.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

class LayoutModel;

enum class CollectionType { Hash, Set, SortedSet, List };
const char* collectionTypeName(CollectionType type); // "hash", "set", "zset", "list"

struct CollectionShape {
    CollectionType type = CollectionType::Hash;
    std::uint32_t keyBytes = 16;
    std::uint64_t entries = 1; // fields, members or elements
    std::uint32_t elementBytes = 8; // a hash's field, a set's or sorted set's member, a list's element
    // Elements that are integer strings of elementBytes digits (an intset or a listpack stores them as
    // integers; a table as their digits). The integer taken is the largest of that many digits (999 for 3),
    // whose encoding the others of that length share or undercut.
    bool integerElements = false;
    // A hash's value, or a sorted set's score as its shortest text (d2string: "1.5" is 3 bytes).
    std::uint32_t valueBytes = 8;
    // Hash values that are integer strings, or integral scores, of valueBytes digits (as integerElements).
    bool integerValues = false;
    bool hasTtl = false;
    // How the entries arrived: all in one command (HSET, SADD, ZADD, RPUSH with every one: a table is sized
    // for them at once, a list converts before its first) or one per command (a table grows, and may be
    // rehashing when the last arrives).
    bool oneCommand = true;
};

// The engine's settings (config.c defaults).
struct CollectionLimits {
    std::uint64_t hashMaxListpackEntries = 512; // hash-max-listpack-entries (hash-max-ziplist-entries)
    std::uint64_t hashMaxListpackValue = 64; // hash-max-listpack-value
    std::uint64_t setMaxIntsetEntries = 512; // set-max-intset-entries
    std::uint64_t setMaxListpackEntries = 128; // set-max-listpack-entries (Redis 7.2, Valkey)
    std::uint64_t setMaxListpackValue = 64; // set-max-listpack-value
    std::uint64_t zsetMaxListpackEntries = 128; // zset-max-listpack-entries (zset-max-ziplist-entries)
    std::uint64_t zsetMaxListpackValue = 64; // zset-max-listpack-value
    std::int64_t listMaxListpackSize = -2; // list-max-listpack-size: < 0 a byte limit (-2: 8 KiB), > 0 entries

    bool operator==(const CollectionLimits&) const = default;
};

// A type's limits by the engines' names, in config.c's order, the one on an entry's length last (lists
// have none: their limit is a quicklist node's).
std::vector<std::string_view> collectionLimitNames(CollectionType type);
// The one on its entries that decides its compact encoding: for sets of integers the intset's.
std::string_view entriesLimitName(CollectionType type, bool integerElements = false);
// One limit by name; false (and nothing changed) for a name that is none of CollectionLimits'.
bool setCollectionLimit(CollectionLimits& limits, std::string_view name, std::int64_t value);
std::int64_t collectionLimit(const CollectionLimits& limits, std::string_view name); // 0 for an unknown name

struct CollectionPart {
    std::string what; // "listpack", "dict", "buckets", "entries", "members", or the key's own
    std::uint64_t requestedBytes = 0;
    double count = 1; // an expectation where the engine's layout is drawn at random
};

struct CollectionKeyLayout {
    std::string encoding; // OBJECT ENCODING's word: listpack, intset, hashtable, skiplist, quicklist
    std::string why; // the rule that chose it, in the engine's words
    std::vector<CollectionPart> parts; // the key's own first, then the collection's
    // Usable bytes of every part, under the allocator.
    double usableBytes(const AllocatorModel& allocator) const;
};

// Listpack sizes (listpack.c), exposed for the tests.
namespace listpack {
std::uint64_t stringEntryBytes(std::uint64_t length); // encoding + data + backlen
std::uint64_t integerEntryBytes(std::int64_t value);
// An entry of a string of `length` bytes whose integer class is `integer` (None: stored as the string).
std::uint64_t entryBytes(std::uint32_t length, IntegerClass integer);
// An entry as lpAppend stores a string: as an integer when it is one (lpStringToInt64), else as the string.
std::uint64_t entryBytes(std::uint32_t length, bool integer);
inline constexpr std::uint64_t kHeaderBytes = 6; // LP_HDR_SIZE
inline constexpr std::uint64_t kEndBytes = 1; // LP_EOF
} // namespace listpack

// largestOfDigits (trace/value_kind.h): the integer a shape's integers of that many digits are taken as.

// The key as `layout` holds it; an error naming the layout when it has no collection model, or the shape
// when no engine could hold it.
Expected<CollectionKeyLayout> describeCollection(const LayoutModel& layout, const CollectionShape& shape,
    const AllocatorModel& allocator, const CollectionLimits& limits = {});

} // namespace layoutlab
