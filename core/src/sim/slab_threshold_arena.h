// SPDX-License-Identifier: MIT
#pragma once

// One threshold's arena of SlabReplay (layoutlab/sim/slab_replay.h): the jemalloc arena model, the index
// tables' buckets, and what each key holds in it. Shared by the replay's string keys (slab_replay.cpp) and
// its collection keys (slab_collections.cpp).

#include "arena_layouts.h"
#include "layoutlab/sim/collection_census.h"
#include "layoutlab/sim/slab_index.h"
#include "layoutlab/sim/slab_replay.h"

#include <cassert>
#include <unordered_map>
#include <utility>

namespace layoutlab {

namespace slab_arena {
inline constexpr JemallocArenaModel::Handle kNoHandle { UINT32_MAX, UINT32_MAX };
inline constexpr std::uint32_t kInExpires = 1u << 31; // record flag: the key is in the expires index
inline constexpr std::uint32_t kLayoutMask = kInExpires - 1; // record: the id of the key's layout (0: none)
inline constexpr std::uint32_t kUnmade = UINT32_MAX; // ThresholdArena::layoutOfShape of a shape not met yet
// A class index in an ArenaLayout: 16 bits, as in SizeClassTable's own lookup (jemalloc has about 230).
inline std::uint16_t narrowClass(std::uint32_t classIndex) {
    assert(classIndex <= UINT16_MAX);
    return static_cast<std::uint16_t>(classIndex);
}
} // namespace slab_arena

// A collection key's regions (layoutlab/sim/collection_census.h).
using CollectionRegions = HeldRegions<JemallocArenaModel::Handle>;

struct SlabReplay::ThresholdArena {
    std::uint32_t threshold = 0;
    JemallocArenaModel arena;
    // Database 0's index tables; the others' (a trace that places keys in them: Op::Resize of kKeyDatabase) in
    // `otherDatabases` by database - 1, and each key's database from the first placed elsewhere on. The
    // replay keeps the same map (KeyspaceReplay::databaseOf), but each arena's player runs on its own thread
    // behind the replay and learns placements as events (KeyspaceObserver::placed), so it keeps its own.
    SlabIndex keys;
    SlabIndex expires;
    struct DatabaseIndexes {
        SlabIndex keys;
        SlabIndex expires;
    };
    IndexPolicy indexPolicy; // the engine's, for the tables of other databases
    std::vector<DatabaseIndexes> otherDatabases;
    std::vector<std::uint16_t> databaseOfKey;
    // Per key id, side by side so that a write touches one place: its record (the id of its layout |
    // kInExpires, in the first slot's classIndex) and `stride` handles, in its layout's order.
    std::uint32_t stride = 2;
    std::vector<JemallocArenaModel::Handle> slots;
    std::size_t keyIds = 0;
    // The key ids the trace says it has (its keyIdLimit, as the replay's key array holds them): the slots'
    // first growth takes them all, so that they are not doubled and copied (twice the memory at once, in
    // every player) as keys arrive.
    std::size_t keyIdHint = 0;
    // The distinct layouts keys have at this threshold, as the arena needs them (0: none), and each
    // shape's among them by the replay's shape id (SlabReplay::shapeIdOf; kUnmade: not made yet). Many
    // shapes share a layout (the same classes), so the few layouts a write reads stay in the host's
    // caches, and the shapes' ids are four bytes each: with a layout per shape, a trace's hundred
    // thousand shapes made two more misses a write.
    DistinctLayouts layouts;
    std::vector<std::uint32_t> layoutOfShape { 0 };
    // store()'s room for the old and the new layout's identities, kept from write to write.
    std::array<LayoutModel::AllocationIdentity, KeyLayout::kMaxAllocations> wasIdentities {};
    std::array<LayoutModel::AllocationIdentity, KeyLayout::kMaxAllocations> willIdentities {};
    // The collection keys (a string key's record is 0 then), and a change's room for the regions it frees.
    std::unordered_map<std::uint32_t, CollectionRegions> collections;
    std::vector<JemallocArenaModel::Handle> freeing;
    std::vector<JemallocArenaModel::Handle> nextHeld; // a change's room for the key's regions after it
    // The open collection command's argv array and argument objects, in the order they were made; the
    // arguments' classes at this threshold.
    std::vector<JemallocArenaModel::Handle> arguments;
    CollectionArguments argumentClasses;

    ThresholdArena(std::uint32_t t, const LayoutModel& layout, const JemallocModel& allocator,
        JemallocArenaModel::Options options, const IndexPolicy& policy, std::size_t hint)
        : threshold(t)
        , arena(allocator.table(), options)
        , keys(policy.kind, policy.params)
        , expires(policy.kind, policy.params)
        , indexPolicy(policy)
        , keyIdHint(hint)
        , argumentClasses(layout, allocator, t) { }

    std::uint32_t databaseOf(std::uint32_t keyId) const {
        return keyId < databaseOfKey.size() ? databaseOfKey[keyId] : 0;
    }
    // The index tables of `database`, and of the key's database (prefetchFor reads them through a const arena).
    const SlabIndex& keysIn(std::uint32_t database) const {
        return database == 0 ? keys : otherDatabases[database - 1].keys;
    }
    const SlabIndex& expiresIn(std::uint32_t database) const {
        return database == 0 ? expires : otherDatabases[database - 1].expires;
    }
    SlabIndex& keysIn(std::uint32_t database) { return const_cast<SlabIndex&>(std::as_const(*this).keysIn(database)); }
    SlabIndex& expiresIn(std::uint32_t database) {
        return const_cast<SlabIndex&>(std::as_const(*this).expiresIn(database));
    }
    const SlabIndex& keysOf(std::uint32_t keyId) const { return keysIn(databaseOf(keyId)); }
    const SlabIndex& expiresOf(std::uint32_t keyId) const { return expiresIn(databaseOf(keyId)); }
    SlabIndex& keysOf(std::uint32_t keyId) { return keysIn(databaseOf(keyId)); }
    SlabIndex& expiresOf(std::uint32_t keyId) { return expiresIn(databaseOf(keyId)); }
    // The key kept in `database`'s tables from now on (KeyspaceObserver::placed).
    void place(std::uint32_t keyId, std::uint32_t database) {
        if (keyId >= databaseOfKey.size())
            databaseOfKey.resize(std::max<std::size_t>(std::size_t { keyId } + 1, keyIds));
        databaseOfKey[keyId] = static_cast<std::uint16_t>(database);
        holdDatabase(database);
    }
    // Tables for `database` (and those below it), empty until keys come.
    void holdDatabase(std::uint32_t database) {
        while (otherDatabases.size() < database)
            otherDatabases.push_back(
                { SlabIndex(indexPolicy.kind, indexPolicy.params), SlabIndex(indexPolicy.kind, indexPolicy.params) });
    }

    void reserve(std::uint32_t keyId, std::uint32_t needed) {
        if (needed > stride) {
            // Rare: a layout with more allocations than seen so far; every key's slots move once.
            std::vector<JemallocArenaModel::Handle> wider(keyIds * (needed + 1), slab_arena::kNoHandle);
            for (std::size_t k = 0; k < keyIds; ++k)
                std::copy_n(slots.begin() + static_cast<std::ptrdiff_t>(k * (stride + 1)), stride + 1,
                    wider.begin() + static_cast<std::ptrdiff_t>(k * (needed + 1)));
            slots = std::move(wider);
            stride = needed;
        }
        if (keyId >= keyIds) {
            const std::size_t size = std::max({ std::size_t { keyId } + 1, keyIds * 2, keyIdHint });
            slots.resize(size * (stride + 1), slab_arena::kNoHandle);
            for (std::size_t k = keyIds; k < size; ++k)
                slots[k * (stride + 1)].classIndex = 0;
            keyIds = size;
        }
    }
    std::uint32_t& record(std::uint32_t keyId) { return slots[std::size_t { keyId } * (stride + 1)].classIndex; }
    std::uint32_t recordOf(std::uint32_t keyId) const {
        return keyId < keyIds ? slots[std::size_t { keyId } * (stride + 1)].classIndex : 0;
    }
    JemallocArenaModel::Handle* of(std::uint32_t keyId) { return &slots[std::size_t { keyId } * (stride + 1) + 1]; }
    void prefetch(std::uint32_t keyId) const {
        if (keyId < keyIds)
            __builtin_prefetch(&slots[std::size_t { keyId } * (stride + 1)], 1);
    }
};

// One call of the replay's, as the arenas play it.
struct alignas(16) SlabReplay::Event {
    static constexpr std::uint8_t kRemove = 1; // removed(): else stored()
    static constexpr std::uint8_t kHasTtl = 2;
    static constexpr std::uint8_t kDependent = 4; // `shape` is the first of Log::dependentShapes' ids for it
    static constexpr std::uint8_t kByExpireCycle = 8; // with kRemove: an expire cycle's (SlabReplay::remove)
    static constexpr std::uint8_t kCollection = 16; // a collection key's: `shape` is its place in Log::census
    static constexpr std::uint8_t kNewCommand = 32; // with kCollection: the open command's arguments freed first
    static constexpr std::uint8_t kRename = 64; // a collection key's value moved from keyId to `shape`
    static constexpr std::uint8_t kPlace = 128; // the key kept in database `shape`'s tables (KeyspaceObserver::placed)
    std::uint32_t keyId = 0;
    std::uint32_t shape = 0; // the shape id at every threshold (stored())
    std::uint32_t indexSizes = 0; // into Log::indexSizes
    Op op = Op::Set;
    std::uint8_t flags = 0;
};

} // namespace layoutlab
