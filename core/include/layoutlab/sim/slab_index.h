// SPDX-License-Identifier: MIT
#pragma once

// The allocations of one key index, as an arena sees them: the bucket array (zcalloc of buckets x
// bucket bytes, replaced whole when the table is resized) and, for Valkey's hashtable, the child buckets
// a full bucket chains to. Which bucket overflows depends on the keys' hashes, so the buckets are kept
// with key ids in them (BucketChains, hashtable.c's rules), hashed as the reference engine hashes them
// (splitmix64 of the key id). A resize allocates the new array, frees the old one's children and then the
// array, and inserts every entry again in the old table's order. dict.c's tables (Redis, Valkey 8.0) have
// no child buckets: their entries are the keys' own allocations.

#include "layoutlab/alloc/jemalloc_arena_model.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/bucket_chains.h"
#include "layoutlab/trace/random.h"

#include <cstdint>
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
        if (m_chains.buckets() != 0)
            __builtin_prefetch(&m_chains.top(hashOf(keyId) & (m_buckets - 1)), 1);
    }
    // The hash of a key id, in this model and in the reference engine's index (splitmix64 of the id).
    static std::uint64_t hashOf(std::uint32_t keyId) {
        std::uint64_t state = keyId;
        return Random::splitmix64(state);
    }

private:
    IndexKind m_kind;
    IndexParams m_params;
    std::uint64_t m_buckets = 0;
    std::optional<JemallocArenaModel::Handle> m_table;
    BucketChains<JemallocArenaModel::Handle> m_chains; // Valkey: the buckets, each child's allocation with it
};

} // namespace layoutlab
