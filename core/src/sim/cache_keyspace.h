// SPDX-License-Identifier: MIT
#pragma once

// What the cache evaluation (cache_evaluation.cpp) knows of the keyspace before it places it, the same at
// every threshold: the sampled GETs and the keys they read, where the index puts each key (its bucket,
// Redis's chain walks, Valkey's child buckets), and each shape's layout at the sweep's ends.

#include "chain_walks.h"

#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/simulation.h"

#include <cstdint>
#include <vector>

namespace layoutlab::cache_detail {

inline constexpr std::uint64_t kMaxChildDepth = 32; // Valkey child buckets a lookup is followed down

// The sampled GETs and the keys they read. Shapes are ranked by how many keys have them: the placement
// pass looks a plan up for every key, and with the common shapes' plans first those lookups stay in the
// host's cache. Ranking only renames shapes; slots are still created in keyspace order, so addresses do
// not change.
struct SampleIndex {
    std::vector<std::uint32_t> sample; // key ids, one per GET replayed
    std::vector<std::uint32_t> shapeByRank;
    std::vector<std::uint32_t> shapeOf; // each live key's shape rank (UINT32_MAX: not live)
    std::vector<std::uint32_t> sampledSlot; // each key's place among sampledIds (UINT32_MAX: not read)
    std::vector<std::uint32_t> sampledIds; // the keys read, GETs' first, then the keys chain walks visit
    std::vector<std::uint32_t> sampleSlots; // each GET's sampled slot (UINT32_MAX: deleted before the end)
};

// The GETs to replay (the trace's last GET hits, or every live key once when it has none), every live key's
// shape rank, and the keys the GETs read.
SampleIndex indexSample(
    const SimulationConfig& config, const KeyspaceReplay& replay, const std::vector<ShapeHistogram::Entry>& keyspace);

// Which of its bucket's chain holds the entry `place` (0-based, in insertion order) of a bucket of `total`
// entries: a bucket that never overflowed holds all of them; a chained one gives its last slot to the child
// pointer, so each bucket but the last of a chain holds one fewer (hashtable.c bucketConvertToChained: "a
// chain of c children holds 6c + 7 entries").
std::uint8_t childBucketOf(std::uint32_t place, std::uint32_t total, std::uint32_t entries);

// Valkey: the child bucket each live key's entry is in, from every bucket's entries at the end and each
// key's place among them in key-id (insertion) order (rehashing keeps that order: each new bucket takes
// one old bucket's entries). The same at every threshold.
std::vector<std::uint8_t> childDepths(
    const std::vector<std::uint32_t>& shapeOf, const BucketIndex& buckets, std::uint32_t entries);

// The index tables at the end of the trace, as a GET looks them up.
struct IndexLookups {
    std::uint64_t slotBytes; // a Valkey bucket is one 64-byte line
    // Valkey's hashtable (hashtable.c): a bucket holds this many entries, then chains a child bucket;
    // 0 for indexes without child buckets.
    std::uint32_t bucketEntries;
    BucketIndex buckets;
    BucketIndex expiresBuckets;
    bool lookupExpiresAlways; // Redis: the expires lookup of every GET while any key has a TTL
    ChainWalks walks; // Redis: the chains a GET walks
    std::vector<std::uint8_t> childDepth; // Valkey: per key id, the child bucket its entry is in
};

// Adds the keys chain walks visit to `sample` (placement gives them addresses too).
IndexLookups indexLookups(const SimulationConfig& config, const KeyspaceReplay& replay, SampleIndex& sample);

// One allocation of a shape's layout, its usable size named by a dense class id.
struct VariantAllocation {
    std::uint64_t usable = 0;
    std::uint32_t count = 1;
    std::uint32_t readBytes = 0;
    std::uint32_t classId = 0; // dense over every usable size any variant uses
    std::uint32_t memcmpEnd = 0; // Allocation::memcmpEnd
    std::uint8_t made = 0; // the variant's allocation the engine makes in this one's place (KeyLayout::made)
};

// The regions of one class a write holds while its command runs (KeyLayout::transients, merged by class in
// the order their classes first appear: a write takes a class's regions together).
struct VariantTransient {
    std::uint64_t usable = 0;
    std::uint32_t classId = 0;
    std::uint32_t count = 1;
};

inline constexpr std::uint8_t kNoKeyRead = 0xff;

struct Variant {
    std::uint32_t first = 0; // into ShapeVariants::allocations
    std::uint32_t firstTransient = 0; // into ShapeVariants::transients
    std::uint8_t allocations = 0;
    std::uint8_t transients = 0; // classes (VariantTransient), not regions
    std::uint8_t indexLines = 0;
    bool stored = true;
    // Among the allocations a GET reads (readBytes > 0), in order, the one holding the key (a chain walk
    // compares it); kNoKeyRead when none does.
    std::uint8_t keyRead = kNoKeyRead;
};

// Each shape's layout at the sweep's lowest and highest threshold, and the first threshold that uses the
// second (the LayoutModel contract: a layout changes at most once as the threshold grows). The workers
// then build every threshold's plans without describing a shape again.
struct ShapeVariants {
    std::vector<VariantAllocation> allocations;
    std::vector<VariantTransient> transients;
    std::vector<Variant> low, high; // by rank (SampleIndex::shapeByRank), as the placement pass reads them
    std::vector<std::uint32_t> switchAt; // thresholds.size(): never
    std::size_t classes = 0;
    // By threshold index, then class id: whether some shape's stored allocation is of the class there. A
    // transient of a class no key uses moves no key's region, so the placement pass leaves it out.
    std::vector<bool> keysUseClass;

    const Variant& at(std::size_t rank, std::size_t threshold) const {
        return threshold >= switchAt[rank] ? high[rank] : low[rank];
    }
    bool keysUse(std::size_t threshold, std::uint32_t classId) const {
        return keysUseClass[threshold * classes + classId];
    }
};

// Describes the keyspace's shapes in rank order (`shapeByRank`: keyspace indexes), so that each threshold's
// pass over them reads the variants in sequence.
ShapeVariants describeVariants(const LayoutModel& layout, const AllocatorModel& alloc,
    const std::vector<ShapeHistogram::Entry>& keyspace, const std::vector<std::uint32_t>& shapeByRank,
    const std::vector<std::uint32_t>& thresholds);

} // namespace layoutlab::cache_detail
