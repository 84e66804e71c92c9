// SPDX-License-Identifier: MIT
#pragma once

// The allocations of one key index, as an arena sees them: the bucket array (zcalloc of buckets x
// bucket bytes, replaced whole when the table is resized) and, for Valkey's hashtable, the child buckets
// a full bucket chains to. Which bucket overflows depends on the keys' hashes, so the buckets are kept
// with key ids in them, hashed as the reference engine hashes them (splitmix64 of the key id), and
// changed by the same rules (hashtable.c, as collectors/reference/reference_index.cpp does them):
//  - insert: the first free slot along the chain; a full last bucket moves its last entry into a new
//    child bucket, whose pointer takes the slot (bucketConvertToChained);
//  - delete: a hole in a chained bucket is filled from the chain's last bucket, which is freed once it
//    holds at most one entry, that entry moving into the slot its pointer had (fillBucketHole,
//    pruneLastBucket);
//  - resize: the new array is allocated, the old one's children and then the array freed, and every
//    entry inserted again in the old table's order.
// dict.c's tables (Redis, Valkey 8.0) have no child buckets: their entries are the keys' own allocations.

#include "layoutlab/alloc/jemalloc_arena_model.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/trace/random.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace layoutlab {

class SlabIndex {
public:
    SlabIndex(IndexKind kind, const IndexParams& params);

    void resize(JemallocArenaModel& arena, std::uint64_t buckets);
    void insert(JemallocArenaModel& arena, std::uint32_t keyId);
    void erase(JemallocArenaModel& arena, std::uint32_t keyId);

    // Fetches the top-level bucket an insert or erase of `keyId` starts at (a hint; always inlined, as
    // ShapeHistogram::prefetch).
    [[gnu::always_inline]] void prefetch(std::uint32_t keyId) const {
        if (!m_top.empty())
            __builtin_prefetch(&m_top[hashOf(keyId) & (m_buckets - 1)], 1);
    }
    // The hash of a key id, in this model and in the reference engine's index (splitmix64 of the id).
    static std::uint64_t hashOf(std::uint32_t keyId) {
        std::uint64_t state = keyId;
        return Random::splitmix64(state);
    }

private:
    // hashtable.c ENTRIES_PER_BUCKET: seven slots, the last one the child pointer once chained.
    static constexpr unsigned kEntriesPerBucket = 7;
    static constexpr std::uint32_t kNoChild = UINT32_MAX;
    struct Bucket {
        std::uint8_t presence = 0; // bit i: entries[i] holds a key
        bool chained = false;
        std::uint32_t child = kNoChild; // index in m_children
        std::uint32_t entries[kEntriesPerBucket] {};
        JemallocArenaModel::Handle allocation {}; // a child bucket's own allocation
        unsigned slots() const { return chained ? kEntriesPerBucket - 1 : kEntriesPerBucket; }
    };
    Bucket& at(std::uint32_t child) { return m_children[child]; }
    void insertInto(JemallocArenaModel& arena, std::uint32_t keyId);
    void fillHole(JemallocArenaModel& arena, Bucket& bucket, unsigned slot);
    std::uint32_t newChild(JemallocArenaModel& arena);
    void freeChild(JemallocArenaModel& arena, std::uint32_t child);

    IndexKind m_kind;
    IndexParams m_params;
    std::uint64_t m_buckets = 0;
    std::optional<JemallocArenaModel::Handle> m_table;
    std::vector<Bucket> m_top; // Valkey: the top-level buckets
    std::deque<Bucket> m_children; // a deque: a bucket stays where it is while children are added
    std::vector<std::uint32_t> m_unusedChildren;
};

} // namespace layoutlab
