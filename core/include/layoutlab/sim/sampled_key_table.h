// SPDX-License-Identifier: MIT
#pragma once

// The keys of a server's table as its eviction samples them. evict.c evictionPoolPopulate does not draw
// keys uniformly: it walks the table from a random place and takes the keys it meets in table order, and
// when the pool's candidates tie (an LRU clock that has not ticked since they were touched), only the
// first key of a walk can enter the pool. Which key is first follows the table's layout, so the
// eviction's choice does too:
//  - Redis 7.0 dict.c: chained buckets, a new entry at the head of its chain (dictAddRaw: "Insert the
//    element in top"); dictGetSomeKeys starts at a random bucket and takes each non-empty bucket's chain
//    from its head, jumping elsewhere after a run of empty buckets;
//  - Valkey 8.1+ hashtable.c: chains of 7-position buckets (BucketChains, the rules the slab model's index
//    follows too); hashtableSampleEntries scans from a random cursor (hashtableScan: one bucket chain per step, its
//    positions in order, then the reversed-bits increment of the cursor), keeping the first `count`
//    entries and replacing random ones beyond (reservoir sampling, sampleEntriesScanFn).
// The engine hashes key names with a seeded siphash; here a key id's hash is splitmix64 of it and the
// run's seed, which spreads keys over buckets as evenly. The table's size is the replay's index model's
// (IndexTableModel::heldBuckets); a resize rebuilds it at once, in the order incremental rehashing moves
// entries (bucket by bucket, each chain in order).

#include "layoutlab/layout/layout_model.h"
#include "layoutlab/sim/bucket_chains.h"
#include "layoutlab/trace/random.h"

#include <cstdint>
#include <span>
#include <vector>

namespace layoutlab {

class SampledKeyTable {
public:
    SampledKeyTable(IndexKind kind, std::uint64_t seed);
    // Bytes per key id at most, for the memory check before a run: dict.c's next link (4) and its share of
    // the bucket heads (4 per bucket, at most two buckets a key after a shrinking fill); hashtable.c's
    // 36-byte buckets hold 3.5 keys or more at the fill it grows at.
    static constexpr std::uint64_t kBytesPerKey = 12;

    // The table's size in top-level buckets (0: empty); rebuilds the table when it changes.
    void resize(std::uint64_t buckets);
    void insert(std::uint32_t keyId);
    void erase(std::uint32_t keyId);
    std::uint64_t size() const { return m_entries; }
    // Up to out.size() distinct keys, in the order the engine's sampling returns them.
    std::size_t sample(Random& random, std::span<std::uint32_t> out);
    // One key as the random policies draw it (kNone when empty), no more uniform than the engine's draw:
    //  - dict.c dictGetRandomKey: a random bucket until a non-empty one, then a random entry of its chain,
    //    so a key in a chain of n is drawn 1/n as often as one alone in its bucket;
    //  - hashtable.c hashtableRandomEntry: hashtableSampleEntries of WEAK_RANDOM_SAMPLE_SIZE entries
    //    (ENTRIES_PER_BUCKET, 7) from a random cursor, and a random one of them.
    // A key that keeps its name keeps its bucket, so the keys in crowded buckets outlive the others: under
    // allkeys-random the keys a server keeps are the longer-lived, larger ones.
    std::uint32_t randomKey(Random& random);
    static constexpr std::uint32_t kNone = UINT32_MAX;

private:
    struct NoExtra { };

    std::uint64_t bucketOf(std::uint32_t keyId) const;
    // dict.c dictGetSomeKeys.
    std::size_t sampleDict(Random& random, std::span<std::uint32_t> out) const;
    // hashtable.c hashtableSampleEntries.
    std::size_t sampleHashtable(Random& random, std::span<std::uint32_t> out) const;

    bool m_dict;
    std::uint64_t m_seed;
    std::uint64_t m_buckets = 0;
    std::uint64_t m_entries = 0;
    // dict.c: each bucket's chain head and each key id's next (kNone ends a chain).
    std::vector<std::uint32_t> m_heads;
    std::vector<std::uint32_t> m_next;
    BucketChains<NoExtra> m_chains; // hashtable.c's buckets
};

} // namespace layoutlab
