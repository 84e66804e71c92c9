// SPDX-License-Identifier: MIT
#pragma once

// Where the cache model puts a key in the index (its bucket), and the chain walks of Redis GETs: which
// other keys' entries a GET reads before its own.

#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/trace/random.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace layoutlab {

// A key's bucket: a mask for the power-of-two tables the engines keep (the same result as the modulo).
struct BucketIndex {
    explicit BucketIndex(std::uint64_t count)
        : buckets(std::max<std::uint64_t>(count, 1))
        , mask(std::has_single_bit(buckets) ? buckets - 1 : 0) { }
    std::uint64_t of(std::uint64_t hash) const { return mask || buckets == 1 ? (hash & mask) : hash % buckets; }
    std::uint64_t buckets;
    std::uint64_t mask;
};

inline std::uint64_t mix(std::uint64_t x) {
    return Random::splitmix64(x);
}

// A Redis GET's walk along dictEntry chains (dict.c dictFind): in its keyspace bucket, every entry ahead of
// the key is read and its key sds compared (dictSdsKeyCompare); and while any key has a TTL,
// expireIfNeeded looks every key up in db->expires too, walking that bucket's chain ahead of the key (all
// of it when the key has no TTL). Which keys share a bucket follows from the model's bucket of each key
// id; the order within a chain is a second hash of the id (insertion at the head and rehashing reorder
// real chains; a uniform order gives the same expected walk).
struct ChainVisit {
    std::uint32_t sampledSlot = 0; // the visited key, placed like a sampled key
    bool expires = false; // a visit in db->expires: its expires dictEntry and key sds; else its dictEntry and key sds
};

struct ChainWalks {
    std::vector<std::uint32_t> start; // per sampled slot of a GET, into visits (size: GET slots + 1)
    std::vector<ChainVisit> visits;
};

// Adds the keys the walks visit to the sampled keys (so placement gives them addresses) and lists each
// sampled key's visits. The first sampledIds.size() sampled keys on entry are the ones GETs read.
ChainWalks chainWalks(const std::vector<KeyState>& keys, const std::vector<std::uint32_t>& shapeOf,
    std::vector<std::uint32_t>& sampledSlot, std::vector<std::uint32_t>& sampledIds, const BucketIndex& buckets,
    const BucketIndex& expiresBuckets, bool walkExpires);

} // namespace layoutlab
