// SPDX-License-Identifier: MIT
#pragma once

// One collection key as it changes, command by command: what describeCollection (collection_layout.h) gives
// for a key of uniform entries made at once, kept up to date through each element a trace adds, replaces,
// removes or reads. The engine's decisions are taken where it takes them (t_hash.c hashTypeTryConversion
// before a command's elements, hashTypeSet for each; t_set.c setTypeCreate or setTypeMaybeConvert before a
// SADD's members, setTypeAddAux for each), on the elements' real lengths and integer classes, and a table
// grows, rehashes and shrinks through the index model as the engine's does. Built with a layout and its
// limits; a replay keeps a CollectionKeyState per live collection key.
//
// Modelled: hashes (hash_key_model.cpp), sets (set_key_model.cpp), sorted sets (zset_key_model.cpp) and
// lists pushed and popped at their ends (list_key_model.cpp).

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/expected.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/sim/index_table_model.h"
#include "layoutlab/trace/request.h"

#include <memory>
#include <vector>

namespace layoutlab {

namespace collection {
struct Rules;
}

// An element or value as a command gives it: its length, and its integer class where a listpack would store
// it as an integer.
struct ElementValue {
    std::uint32_t bytes = 0;
    IntegerClass integer = IntegerClass::None;
};

// A set member's place in the order the set's members were added (from 1; 0: not known), and how many
// members added after it the set still holds: what a removal frees depends on them (set_key_model.cpp).
struct MemberOrder {
    std::uint32_t place = 0;
    std::uint32_t younger = 0;
};

// How a snapshot holds a key (rdb.c rdbLoadObject): compact (a listpack or intset the loading server keeps as
// it is) or not; a compact set's intset width, as the integer class of that width; a list's quicklist node, the
// nodes after it.
struct SnapshotForm {
    bool compact = false;
    IntegerClass intsetWidth = IntegerClass::None;
    std::uint64_t nodesAfter = 0;
};

// A list node's entries' sizes from its head. Pops at the head only move where the first one is (a queue's
// LPOP is as cheap as its RPOP); the room they leave is taken back by pushes at the head, or dropped once it is
// half the array.
class EntrySizes {
public:
    std::size_t size() const { return m_sizes.size() - m_first; }
    std::uint32_t operator[](std::size_t i) const { return m_sizes[m_first + i]; }
    void set(std::size_t i, std::uint32_t bytes) { m_sizes[m_first + i] = bytes; }
    void insert(std::size_t i, std::uint32_t bytes) {
        if (i == 0 && m_first > 0)
            m_sizes[--m_first] = bytes;
        else
            m_sizes.insert(m_sizes.begin() + static_cast<std::ptrdiff_t>(m_first + i), bytes);
    }
    void erase(std::size_t i) {
        if (i == 0)
            return popFront();
        m_sizes.erase(m_sizes.begin() + static_cast<std::ptrdiff_t>(m_first + i));
    }
    void popFront() {
        if (++m_first == m_sizes.size()) {
            m_sizes.clear();
            m_first = 0;
        } else if (m_first >= 64 && 2 * m_first >= m_sizes.size()) {
            m_sizes.erase(m_sizes.begin(), m_sizes.begin() + static_cast<std::ptrdiff_t>(m_first));
            m_first = 0;
        }
    }
    void popBack() { m_sizes.pop_back(); }
    // The sizes [first, last) as a list of their own.
    EntrySizes slice(std::size_t first, std::size_t last) const {
        EntrySizes out;
        out.m_sizes.assign(m_sizes.begin() + static_cast<std::ptrdiff_t>(m_first + first),
            m_sizes.begin() + static_cast<std::ptrdiff_t>(m_first + last));
        return out;
    }
    // `other`'s sizes after these.
    void append(const EntrySizes& other) {
        m_sizes.insert(
            m_sizes.end(), other.m_sizes.begin() + static_cast<std::ptrdiff_t>(other.m_first), other.m_sizes.end());
    }
    std::uint64_t sum() const {
        std::uint64_t total = 0;
        for (std::size_t i = m_first; i < m_sizes.size(); ++i)
            total += m_sizes[i];
        return total;
    }

private:
    std::vector<std::uint32_t> m_sizes;
    std::size_t m_first = 0;
};

// A list's listpack (its only one, or a quicklist node's): its elements and bytes, and once the list has met a
// LINSERT, each element's entry bytes from its head (listpack.c: encoding, data and back length), which a
// node's split needs.
struct ListNode {
    std::uint32_t count = 0;
    std::uint64_t bytes = 0;
    EntrySizes entries;
};

// Allocations of one size: `bytes` requested, `count` of them (an expectation where the engine's layout is
// drawn at random: a rehash's old array by the chance it is still held, a skiplist node's levels).
struct SizedAllocations {
    std::uint64_t bytes = 0;
    double count = 0;
    bool operator==(const SizedAllocations&) const = default;
};

struct CollectionKeyState {
    CollectionKind kind = CollectionKind::Hash;
    // Whether the engine has made the value: a set is made by its first SADD, for its first member and its
    // count (t_set.c setTypeCreate); a hash is made empty (t_hash.c hashTypeLookupWriteOrCreate).
    bool made = false;
    bool table = false; // in the full encoding (a table, a sorted set's skiplist and table); else a compact one
    // A set's intset: its members' width in bytes (2, 4 or 8, which only grows: intset.c
    // intsetUpgradeAndAdd); 0 when not an intset.
    std::uint8_t intsetWidth = 0;
    std::uint64_t entries = 0;
    std::uint64_t payloadBytes = 0; // the elements' and values' lengths
    // Compact: the listpack's bytes, and each entry's lengths and integer classes (packed), which a
    // conversion needs (an intset's too).
    std::uint64_t listpackBytes = 0;
    std::vector<std::uint64_t> compactEntries;
    // Full: the table, and its entries' allocations.
    std::unique_ptr<IndexTableModel> index;
    // Doubles: where the engine's entry depends on how its field arrived (Rules::hashFieldsAsSent), a
    // removed one is each kind in proportion.
    double entryAllocations = 0;
    double entryRequestedBytes = 0;
    double entryUsableBytes = 0;
    // Of entryUsableBytes: the variance of what the engine draws at random for each entry (a sorted set's
    // skiplist node level: t_zset.c zslRandomLevel), the entries' draws being independent.
    double entryUsableVariance = 0;
    // The same allocations by their usable size, for the slab model (CollectionKeyModel::allocations).
    std::vector<SizedAllocations> entrySizes;
    double argvEntries = 0; // entries whose field came from a command's argument, not a conversion (expected)
    // A set's no_value dict (Redis 7.2, Valkey 8.0): entries left in buckets whose member held by the bucket
    // itself was removed (expected), in the old table's buckets not yet rehashed (its unmoved fraction then,
    // and its size, to follow the rehash).
    double strandedEntries = 0;
    double strandedUnmoved = 1;
    std::uint64_t strandedTable = 0;
    // A set's members added since it was made, and while its table keeps the order they came in (no rehash
    // since it was made, of orderBuckets buckets), the place in that count of the first it holds (-1: the
    // order is not known).
    std::uint64_t adds = 0;
    std::int64_t orderBase = -1;
    std::uint64_t orderBuckets = 0;
    // A list's listpacks from head to tail: one, when it is a listpack (table false), else its quicklist's
    // nodes (table true: the full encoding).
    std::vector<ListNode> nodes;
    // Whether the nodes' entry sizes are followed: from a list's first LINSERT on (list_key_model.cpp).
    bool listSizesKept = false;
    // A key being loaded from a snapshot (CollectionKeyModel::load): its elements still to come (a list's, of
    // its node), its form in the file, the longest element so far.
    std::uint64_t loadRemaining = 0;
    SnapshotForm loadForm;
    std::uint32_t loadLongest = 0;
    // The usable bytes of the reallocations the key's changes made in place, since it was made: a compact
    // allocation shrunk within its class, an intset resized within it. They move no region, but the allocator's
    // thread cache counts each toward its GC, as much allocated as freed (jemalloc.c do_rallocx:
    // thread_alloc_event, thread_dalloc_event), which the slab model follows (JemallocArenaModel::reallocated).
    std::uint64_t reallocatedBytes = 0;
    // A sorted set made as ZUNIONSTORE's result (CollectionKeyModel::unionCommand) into a table: its members
    // still to come, each added by one find-or-insert (a rehash step), not ZADD's find and add.
    std::uint64_t unionAddsLeft = 0;
};

// The collection's memory, the key's own allocations aside.
// A key's state as it is, its table's model included (a sweep's split gives each variant its own).
CollectionKeyState copyOf(const CollectionKeyState& key);

struct CollectionFootprint {
    double allocations = 0;
    double requestedBytes = 0;
    double usableBytes = 0;
    // Of usableBytes: the table's bucket arrays (the one being rehashed by the chance it is still held) and
    // child buckets, in expectation. How many a server holds is its hash seed's draw (where entries fall,
    // how a rehash's steps meet empty buckets), so a run measures one draw of it; the rest of a key's bytes
    // do not depend on the seed.
    double bucketArrayBytes = 0;
    // The variance of usableBytes over the engine's random draws of its entries' layout (a skiplist node's
    // level); 0 where the layout is not drawn. What a run measures is one draw: the expectation give or take
    // a few standard deviations.
    double usableBytesVariance = 0;
};

class CollectionKeyModel {
public:
    // An error naming the layout when it has no collection model, or the kind when it has no element-by-
    // element model.
    static Expected<CollectionKeyModel> create(const LayoutModel& layout, const AllocatorModel& allocator,
        const CollectionLimits& limits, CollectionKind kind);
    CollectionKeyModel(CollectionKeyModel&&) noexcept;
    CollectionKeyModel& operator=(CollectionKeyModel&&) noexcept;
    ~CollectionKeyModel();

    CollectionKind kind() const { return m_kind; }
    // A new key, before its first command (a hash is made empty and compact: t_hash.c createHashObject).
    CollectionKeyState created() const;
    // A copy of `source` as COPY makes it (the type's dup: collection_copy.cpp): the same encoding and bytes, a
    // table expanded for its count.
    CollectionKeyState duplicated(const CollectionKeyState& source) const;
    // A command's start: `elements` elements (a hash's field-value pairs, a SADD's or ZADD's members), its
    // longest argument `longest` bytes long (t_hash.c hashTypeTryConversion; a ZADD's longest member,
    // zsetTypeCreate), its first element of integer class `first` (t_set.c setTypeCreate) and `firstBytes`
    // long (Redis 7.0's zaddGenericCommand).
    void command(CollectionKeyState& key, std::uint64_t elements, std::uint32_t longest,
        IntegerClass first = IntegerClass::None, std::uint32_t firstBytes = 0) const;
    // A key read from a snapshot, before its `elements` (a list's quicklist node, before its elements), which
    // follow as add()s and are taken as the engine's loader takes them (rdb.c rdbLoadObject): the encoding the
    // file holds kept within the entries limit, a table expanded for all its elements at once.
    void load(CollectionKeyState& key, std::uint64_t elements, SnapshotForm form) const;
    // An element added (a set's member: `value` is empty; a list's: pushed at its head when `atHead`).
    void add(CollectionKeyState& key, ElementValue element, ElementValue value = {}, bool atHead = false) const;
    void update(CollectionKeyState& key, ElementValue element, ElementValue before, ElementValue after) const;
    // A list's element `index` places from its head removed (LREM).
    void removeAt(CollectionKeyState& key, std::uint64_t index, ElementValue element) const;
    // A list's element `index` places from its head replaced (LSET).
    void replaceAt(CollectionKeyState& key, std::uint64_t index, ElementValue before, ElementValue after) const;
    // A list's element inserted beside the pivot `pivot` places from its head: before it, or after it (LINSERT).
    void insertAt(CollectionKeyState& key, std::uint64_t pivot, bool before, ElementValue element) const;
    // A list's element `index` places from its head is `element` (a trace's Size: nothing changes but what
    // the model knows of it). A set's: a member of SINTERSTORE's result of integers, the first with `index` their
    // count, after which the result becomes an intset of them within the limit (request.h).
    void knownSize(CollectionKeyState& key, std::uint64_t index, ElementValue element) const;
    // An element removed: a hash's field with its value; a set's member with its place in the order of adds.
    // `atHead`: a list's end; another's, that more removals of its command follow. `byRange`: a sorted set's
    // member removed by a range command (request.h kRemovedByRange). `continuesCommand`: a list's pop after
    // another of the same command (LPOP with a count, LMPOP, LTRIM: one range deleted, its node reallocated
    // once).
    void remove(CollectionKeyState& key, ElementValue element, ElementValue value = {}, MemberOrder order = {},
        bool atHead = false, bool byRange = false, bool continuesCommand = false) const;
    // A sorted set made as ZUNIONSTORE's result (request.h): `elements` members, the longest `longest` bytes,
    // its largest source `largestSource` members.
    void unionCommand(
        CollectionKeyState& key, std::uint64_t elements, std::uint32_t longest, std::uint64_t largestSource) const;
    // A lookup; `randomDraw`: a member drawn at random instead (request.h kRandomDraw); `foundForInsert`: a
    // member the key already held, found by the add that looked for its place (kFoundForInsert: a SADD's, a
    // union's).
    void read(CollectionKeyState& key, bool randomDraw = false, bool foundForInsert = false) const;
    // Whether the key may hold `element` with `value`: a compact key's entries are known by their lengths
    // and classes, a table's and a list's only by their count.
    bool holds(const CollectionKeyState& key, ElementValue element, ElementValue value = {}) const;

    // OBJECT ENCODING's word for the key.
    std::string_view encoding(const CollectionKeyState& key) const;
    CollectionFootprint footprint(const CollectionKeyState& key) const;
    // The same memory allocation by allocation, by size (usable or requested: the same class), each size
    // once: what a model of the allocator's slabs holds for the key (sim/slab_replay.h). Its usable bytes
    // sum to footprint()'s.
    std::vector<SizedAllocations> allocations(const CollectionKeyState& key) const;
    // The longest element or value a compact key holds (0 for a table or a list): what a conversion that
    // weighs the elements already held against a length limit reads (t_set.c's maxelelen of an intset).
    std::uint32_t longestCompactElement(const CollectionKeyState& key) const;
    // The cache lines lookups of the key's elements read, summed over its elements (an expectation:
    // element_lookup.cpp): HGET, SISMEMBER and ZSCORE of each element, LINDEX of each index of a list.
    double lookupLines(const CollectionKeyState& key) const;
    // The key's own allocations (its keyspace entry, key, object header, expire entry), as the layout makes
    // them for a key of `keyBytes` with or without a TTL.
    std::vector<CollectionPart> keyParts(std::uint32_t keyBytes, bool hasTtl) const;

private:
    CollectionKeyModel() = default;
    // A table's own parts (its struct, buckets; a sorted set's skiplist), its entries aside.
    CollectionFootprint tableFootprint(const CollectionKeyState& key) const;
    // The same as parts; returns the index of the first bucket array among them (addTableParts).
    std::size_t tableParts(const CollectionKeyState& key, std::vector<CollectionPart>& parts) const;

    CollectionKind m_kind = CollectionKind::Hash;
    const LayoutModel* m_layout = nullptr;
    const AllocatorModel* m_allocator = nullptr;
    CollectionLimits m_limits;
    std::unique_ptr<collection::Rules> m_rules;
};

} // namespace layoutlab
