// SPDX-License-Identifier: MIT
#pragma once

// What differs between the engine lines' collections (layout/collection_layout.h), and the parts the four
// types share: the key's own allocations and a table's.

#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/index_table_model.h"

#include <optional>

namespace layoutlab::collection {

inline constexpr std::uint64_t kDictEntryBytes = 24; // dict.c dictEntry {key, v, next}
// dict.c dictEntryNoValue {key, next}: Redis 7.2's and Valkey 8.0's set dicts (no_value).
inline constexpr std::uint64_t kDictEntryNoValueBytes = 16;
inline constexpr std::uint64_t kDictBytes = 56; // dict.h struct dict (52 bytes of fields, 8-aligned): dictCreate
inline constexpr std::uint32_t kZaddLookups = 2; // t_zset.c zsetAdd: the find, then the add, a rehash step each
inline constexpr std::uint64_t kIntsetHeaderBytes = 8; // intset.h struct intset {uint32_t encoding, length}
// dict.h DICT_HT_INITIAL_SIZE: rdb.c rdbLoadObject expands a dict for a loaded key only past it.
inline constexpr std::uint64_t kDictInitialBuckets = 4;

// intset.c _intsetValueEncoding: a member's width, 2, 4 or 8 bytes, by the ranges the integer classes share.
inline constexpr std::uint8_t intsetWidthOf(IntegerClass integer) {
    return integer == IntegerClass::Int64                                  ? 8
        : integer == IntegerClass::Int24 || integer == IntegerClass::Int32 ? 4
                                                                           : 2;
}

struct Rules {
    std::vector<CollectionPart> keyParts; // the key's own allocations
    // The tables: dict.c's (Redis, Valkey 8.0) or hashtable.c's (Valkey 8.1 and later), grown and rehashed
    // by the index model, as the keyspace's is; their struct's name and size.
    IndexKind tableKind = IndexKind::RedisDict;
    IndexParams tableParams = engineIndexParams(IndexKind::RedisDict); // the engine's geometry of that kind
    std::string tableStruct = "dict";
    std::uint64_t tableStructBytes = kDictBytes;
    // hashtable.c: the hash type's metadata after the struct (server.c hashHashtableTypeMetadataSize).
    std::uint64_t hashMetadataBytes = 0;
    // Lookups of the table an HSET makes per field it adds, each a rehash step: Redis 7.0's hashTypeSet
    // looks the field up (dictFind) and then adds it (dictAdd); 7.2 and Valkey add it in one call.
    std::uint32_t hsetLookups = 1;
    // Redis 7.2 and Valkey: an HSET of more pairs than hash-max-listpack-entries converts the listpack before
    // any is added and expands the table for them all (t_hash.c hashTypeTryConversion's new_fields), however
    // many of its fields repeat. Redis 7.0's checks only the arguments' lengths: the pairs are appended
    // until the listpack holds one field past the limit.
    bool hsetSizesTable = true;
    std::uint64_t (*sdsBytes)(std::uint64_t length) = nullptr; // sdsnewlen's and sdsdup's, the engine's sds
    // Valkey 9.0 and later: a hash's entries of entry.c, the value embedded when it fits; 8.1: hashTypeEntry.
    bool hashEntriesEmbedValues = false;
    // Valkey's development tree before 2025-02-06 (layout option key-header=as-sent): 8.1's hashTypeEntry
    // copies its field with the header the argument came with (t_hash.c hashTypeCreateEntry ->
    // sds.c sdscopytobuffer): a type-8 header for an argument of up to 44 bytes (an EMBSTR's), where a field
    // made from a listpack entry (hashTypeConvertListpack) has the smallest.
    bool hashFieldsAsSent = false;
    // Redis 7.2 and Valkey: small sets of strings are listpacks (t_set.c setTypeCreate); Redis 7.0's are
    // tables.
    bool listpackSets = true;
    // Redis 7.2 and Valkey: a small list is one listpack (t_list.c listTypeTryConversion); Redis 7.0's is
    // always a quicklist.
    bool listpackLists = true;
    // Redis 7.2's and Valkey 8.0's set dicts (server.c setDictType: no_value, keys_are_odd): a member alone in
    // its bucket is held by the bucket itself, and only the others take a dictEntryNoValue (dict.c
    // dictInsertAtPosition, and rehashEntriesInBucketAtIndex as a rehash moves them). Redis 7.0's take a
    // dictEntry each.
    bool setEntriesOnlyWhenShared = true;
    // Valkey 8.0's dict rehashes the old bucket an add looks up before anything else (dict.c
    // dictFindPositionForInsert -> dictBucketRehash); Redis 7.2's takes the next bucket in order.
    bool bucketRehashOnAccess = false;
    // Redis 7.2 and Valkey: ZADD makes a sorted set for its member count (zsetTypeCreate: a skiplist's table
    // expanded for it), and a listpack converts to a table expanded for its members (zsetConvertAndExpand).
    // Redis 7.0's are unsized: a listpack unless the first member is too long, and a converted listpack's
    // table grows from 4 buckets as its members are added (zsetConvert).
    bool zsetSizeHints = true;
    // Valkey: ZADD decides a new sorted set's encoding, and an existing listpack's conversion, by its longest
    // member (zaddGenericCommand's maxelelen: zsetTypeCreate, zsetTypeMaybeConvert). Redis 7.2 creates it by its
    // first member's length and converts an existing one by the count alone, so that a longer member later in
    // the command converts the listpack as it is added, its table expanded for the members so far (zsetAdd ->
    // zsetConvertAndExpand, zsetLength + 1); Redis 7.0 goes by the first member too (zsetSizeHints).
    bool zsetLongestMemberHint = true;
    // ZUNIONSTORE's result (t_zset.c zunionInterDiffGenericCommand): Valkey expands the destination's table for
    // the largest source and adds the union's members into it one by one, growing it (dictAddRaw, hashtable.c
    // hashtableFindPositionForInsert); Redis 7.x builds the union in a dict of its own (accumulator) and expands
    // the destination's for all of it (dictExpand(dstzset->dict, dictSize(accumulator))).
    bool zsetUnionSizedForLargestSource = true;
    // Redis 7.0 writes a listpack's score that is not an integer within +-2^52 with "%.17g" (util.c d2string);
    // the later lines the shortest text that reads back (fpconv_dtoa).
    bool zsetScoresIn17Digits = false;
    // Valkey 9.1: a skiplist node holds its member after its levels (t_zset.c zslCreateNode).
    bool zsetNodesEmbedMembers = false;
    bool removalsPauseShrink = false; // ValkeyParams::removalsPauseShrink
    // A ZREMRANGEBY*'s table shrinks once, at its end (t_zset.c zremrangeGenericCommand): Redis 7.x resizes it
    // after the range, Valkey 8.0 pauses its dict's auto resize, 9.0 and later its hashtable's auto shrink;
    // the 8.1 trees' pause is not honoured (ValkeyParams::shrinkPauseHonoured).
    bool rangeRemovalsPauseShrink = true;

    bool dictTables() const { return tableKind != IndexKind::ValkeyHashtable; }
};

// The layout's rules, for a key of `shape`; none for a layout without a collection model.
std::optional<Rules> rulesOf(const LayoutModel& layout, const CollectionShape& shape, const AllocatorModel& allocator);

// A table as the index model leaves it: its struct, its buckets (the one in use after the rehash first, then
// the half being rehashed), and hashtable.c's child buckets. Returns the index in `parts` of its first
// bucket array: the parts from there are the ones a server's hash seed draws.
std::size_t addTableParts(std::vector<CollectionPart>& parts, const IndexTableModel& table,
    const AllocatorModel& allocator, const std::string& structName, std::uint64_t structBytes);

// A table made for `sizedFor` entries (hashtableExpand, dictExpand; 0: none), given the `converted` entries
// of the compact encoding it replaces with one add each, then the rest of `entries` one by one, each after
// `lookupsPerAdd` lookups (a rehash step each, the last the add's own), growing as the index model grows it.
inline IndexTableModel filledTable(IndexKind kind, std::uint64_t sizedFor, std::uint64_t entries,
    std::uint32_t lookupsPerAdd, std::uint64_t converted = 0, bool bucketRehashOnAccess = false) {
    IndexTableModel table(kind); // grown by inserts alone: no shrink ever starts
    table.setBucketRehashOnAccess(bucketRehashOnAccess);
    table.setFollowsRehashSpread(true);
    table.expand(sizedFor);
    for (std::uint64_t e = 0; e < entries; ++e) {
        for (std::uint32_t l = 1; e >= converted && l < lookupsPerAdd; ++l)
            table.lookup();
        table.insert();
    }
    return table;
}

// Members a table with no_value, keys_are_odd entries (Rules::setEntriesOnlyWhenShared) gives entries to: all
// but the one member of each occupied bucket (the chain's last: dict.c dictInsertAtPosition and
// rehashEntriesInBucketAtIndex keep it so), in both tables while it rehashes, the members spread by the
// dict's hash. `bucketRehashOnAccess`: an add rehashes its own old bucket first (Rules).
double membersWithEntries(const IndexTableModel& table, bool bucketRehashOnAccess);

// Listpack bytes of `entries` entries of `entryBytes` each.
inline std::uint64_t listpackBytes(std::uint64_t entries, std::uint64_t entryBytes) {
    return listpack::kHeaderBytes + listpack::kEndBytes + entries * entryBytes;
}

// A hash's table entry for one field and value, as the engine allocates it (one of each part): a dictEntry
// with the field's and the value's sds (dict tables), 8.1's hashTypeEntry and the value, or 9.0's entry.c
// entry with the value embedded where it fits (hash_layout.cpp).
// `fromArgv`: the field is a command's argument (HSET into a table), not one made from a listpack entry.
std::vector<CollectionPart> hashEntryParts(
    const Rules& rules, std::uint32_t fieldBytes, std::uint32_t valueBytes, bool fromArgv = true);

// A set's member in a table, as the engine allocates it: its sds of the smallest header (t_set.c
// setTypeAddAux: sdsdup or sdsnewlen; sdsfromlonglong for an intset's), with a dictEntry on Redis 7.0
// (the no_value entries of Redis 7.2 and Valkey 8.0 depend on the table: membersWithEntries).
std::vector<CollectionPart> setMemberParts(const Rules& rules, std::uint32_t memberBytes);

// A sorted set's member in its skiplist, as the engine allocates it: its node (each level's node with the
// chance zslRandomLevel gives it), the member's sds where the node does not embed it, and a dictEntry on the
// dict lines (zset_layout.cpp).
std::vector<CollectionPart> zsetMemberParts(const Rules& rules, std::uint32_t memberBytes);
// The name of a member's parts that are its skiplist node at each level, with the level's chance.
inline constexpr const char* kSkiplistNodePart = "skiplist node";
// A skiplist's own parts: struct zset, and the skiplist with its header node (the table's are the table's).
std::vector<CollectionPart> zsetSkiplistParts(const Rules& rules);

// Lists (list_layout.cpp): quicklist.c's structs, and quicklistNodeExceedsLimit.
inline constexpr std::uint64_t kQuicklistBytes = 40; // quicklist.h struct quicklist: 4 words and 36 bits of fields
inline constexpr std::uint64_t kQuicklistNodeBytes = 40; // quicklist.h struct quicklistNode: 4 words and 32 bits
bool listNodeExceedsLimit(std::int64_t fill, std::uint64_t bytes, std::uint64_t count);
// quicklistNodeLimit: the node's byte and element limits (a byte limit alone below 0; else both).
std::pair<std::uint64_t, std::uint64_t> listNodeLimits(std::int64_t fill);

// The key's own allocations, as the layout makes them for a string key whose value it never embeds.
std::vector<CollectionPart> keyPartsOf(
    const LayoutModel& layout, std::uint32_t keyBytes, bool hasTtl, const AllocatorModel& allocator);

// The four types (hash_layout.cpp, set_layout.cpp, zset_layout.cpp, list_layout.cpp): the key's encoding,
// why, and its collection's parts appended after the key's own.
Status describeHash(const Rules& rules, const CollectionShape& shape, const CollectionLimits& limits,
    const AllocatorModel& allocator, CollectionKeyLayout& out);
Status describeSet(const Rules& rules, const CollectionShape& shape, const CollectionLimits& limits,
    const AllocatorModel& allocator, CollectionKeyLayout& out);
Status describeSortedSet(const Rules& rules, const CollectionShape& shape, const CollectionLimits& limits,
    const AllocatorModel& allocator, CollectionKeyLayout& out);
Status describeList(const Rules& rules, const CollectionShape& shape, const CollectionLimits& limits,
    const AllocatorModel& allocator, CollectionKeyLayout& out);

} // namespace layoutlab::collection
