// SPDX-License-Identifier: MIT
#pragma once

#include "cache_keyspace.h"
#include "chain_walks.h"

#include "layoutlab/sim/cache_model.h"
#include "layoutlab/sim/simulation.h"

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <vector>

// The cache model's pass over one threshold (evaluateCache's workers): placing the keyspace
// (threshold_placement.cpp), then replaying the sampled GETs (cache_evaluation.cpp).
namespace layoutlab::cache_detail {

constexpr std::uint64_t kClassRegionSpacing = std::uint64_t { 1 } << 36; // each class's slabs in their own 64 GiB
constexpr std::uint64_t kIndexBase = std::uint64_t { 1 } << 46; // the keyspace index table, above every class
constexpr std::uint64_t kExpiresIndexBase = std::uint64_t { 1 } << 47; // the expires index table
// Valkey's child buckets, a line per (bucket, depth), between the keyspace table and the expires table.
constexpr std::uint64_t kChildBucketBase = (std::uint64_t { 1 } << 46) + (std::uint64_t { 1 } << 45);
// Every simulated address stays below 2^48 (CacheHierarchy::kMaxAddressBits).
constexpr std::size_t kPrefetchGets = 16; // how far ahead the replay prefetches the cache model's sets
constexpr std::size_t kPrefetchKeys = 8; // how far ahead placement prefetches a key's plan (twice: its start)
// A last level of more lines than this simulates a sample of its sets (CacheHierarchy::sampleLastLevel),
// about this many lines' worth: warming a 300 MiB LLC line by line for every threshold would cost more
// than the rest of a sweep, and the sampled sets' misses estimate the level's within a percent or so.
constexpr std::uint64_t kLastLevelLinesSimulated = std::uint64_t { 1 } << 17;

inline std::uint32_t lastLevelSampling(const CacheGeometry& geometry) {
    const std::uint64_t lines = geometry.levels.back().sizeBytes / kCacheLineBytes;
    return lines <= kLastLevelLinesSimulated
        ? 1
        : static_cast<std::uint32_t>(std::bit_floor(lines / kLastLevelLinesSimulated));
}

// Where an allocation class puts its regions.
struct ClassSlot {
    std::uint64_t usable = 0;
    std::uint64_t regionsPerSlab = 0; // 0: page-aligned extents (or heap chunks), one after another
    std::uint64_t slabBytes = 0;
    std::uint64_t baseOffset = 0;
    std::uint64_t stride = 0; // for extents and heap chunks
    std::uint64_t base = 0;

    std::uint64_t address(std::uint64_t region) const {
        if (regionsPerSlab) {
            // Region counts stay far below 2^32: a 32-bit division.
            const auto r = static_cast<std::uint32_t>(region);
            const auto perSlab = static_cast<std::uint32_t>(regionsPerSlab);
            return base + std::uint64_t { r / perSlab } * slabBytes + baseOffset
                + std::uint64_t { r % perSlab } * usable;
        }
        return base + baseOffset + region * stride;
    }
};

// What a GET of a shape needs beyond its placement steps (one per stored allocation, beside the steps'
// read bytes).
struct RankPlan {
    bool stored = true;
    std::uint8_t indexLines = 0;
    std::uint8_t keyRead = kNoKeyRead; // Variant::keyRead
};

// One allocation of a shape, as the placement pass sees it.
// A shape's steps are its allocations, then its write's transients merged by class (count: how many), in
// one run so that placing a key reads one run of the array; the first step says how many of each.
struct PlacementStep {
    std::uint16_t slot = 0; // a class's: jemalloc has a few hundred, memcached's slabs at most 64
    std::uint16_t count = 1; // a chunked item's chunks: at most -I over the chunk size
    std::uint8_t made = 0; // the shape's step the engine makes in this one's place (KeyLayout::made)
    std::uint8_t steps = 0; // on a shape's first step: its allocations' steps
    std::uint8_t transients = 0; // on a shape's first step: the transient steps after them
};

// What a GET reads of a step's allocation: Allocation::readBytes and memcmpEnd.
struct StepRead {
    std::uint32_t bytes = 0;
    std::uint32_t memcmpEnd = 0;
};

// What a GET of one sampled key reads, resolved once its allocations are placed: the index lookups, then
// its reads (a run of readSteps), so the replay touches only this and the cache model.
struct SampledKey {
    std::uint32_t firstRead = 0;
    std::uint8_t reads = 0;
    std::uint8_t indexLines = 0;
    std::uint8_t childDepth = 0; // Valkey: the child buckets a lookup walks before the key's entry
    std::uint8_t keyRead = kNoKeyRead; // which of its reads holds the key (Variant::keyRead)
    bool stored = false;
};

// One read of a sampled key: `bytes` from each of `count` regions, `stride` apart (a chunked item's
// chunks were placed as consecutive regions of their class).
struct ReadStep {
    std::uint64_t address = 0;
    std::uint64_t stride = 0;
    std::uint32_t count = 1;
    std::uint32_t bytes = 0;
};

inline void touch(CacheHierarchy& cache, std::uint64_t address, std::uint64_t bytes, bool lastLevelOnly = false) {
    for (std::uint64_t line = address / kCacheLineBytes; line <= (address + bytes - 1) / kCacheLineBytes; ++line)
        if (lastLevelOnly)
            cache.accessLastLevel(line * kCacheLineBytes);
        else
            cache.access(line * kCacheLineBytes);
}

// One worker's evaluation of a threshold: plans per shape and a slot per allocation class, every live key
// placed in key-id order, then the sampled GETs replayed through its own cache hierarchy. Its buffers are
// reused from threshold to threshold (every field read is written for each threshold first).
class ThresholdPass {
public:
    ThresholdPass(const SimulationConfig& config, const SampleIndex& sample, const IndexLookups& index,
        const ShapeVariants& variants, const std::map<std::uint64_t, AllocatorClass>& classInfo)
        : m_alloc(*config.allocator)
        , m_sample(sample)
        , m_index(index)
        , m_variants(variants)
        , m_classInfo(classInfo)
        , m_startRegions(config.startRegions)
        , m_cache(*config.cache)
        , m_plans(sample.shapeByRank.size())
        , m_placementStart(sample.shapeByRank.size() + 1, 0)
        , m_slotOfClass(variants.classes)
        , m_lastLevelBytes(config.cache->levels.back().sizeBytes)
        , m_innerLevelBytes(
              config.cache->levels[config.cache->levels.size() >= 2 ? config.cache->levels.size() - 2 : 0].sizeBytes) {
        m_cache.sampleLastLevel(lastLevelSampling(*config.cache));
    }

    // The misses per GET at threshold index `t`, and the GETs counted.
    std::uint64_t run(std::size_t t, ThresholdPoint& point);

private:
    ClassSlot newSlot(std::uint64_t usable) const;

    // Each rank's placement steps, in rank order: what the pass over every key reads, packed (a few bytes
    // per shape) so that it stays in the host's cache; one slot per allocation class. A shape's steps are
    // its allocations, then its write's transients in the classes some key's allocation uses (the others
    // move nothing: most are the argv array's and the command name's, whose classes hold no keys).
    void buildPlans(std::size_t t);

    // The slot of a class a shape `s` uses, made the first time the pass meets the class.
    std::uint32_t slotOf(std::uint32_t classId, std::uint64_t usable, std::uint32_t s);

    // The key id from which the last `count` live keys run (what loading the keyspace leaves cached).
    std::size_t firstWarmKey(std::uint64_t count) const;

    // Places every live key in key-id order: each allocation takes its class's next region. Only the
    // sampled keys' reads are kept. Keys from `warmFrom` on are read along their GET path as they are
    // placed (index bucket, the expires bucket where a GET looks it up, each allocation's read bytes), as
    // loading them left them in the caches: through every level from `innerFrom` on, before it in the
    // last level alone.
    void placeKeys(std::size_t warmFrom, std::size_t innerFrom);

    // Keys come in id order but their shapes' plans at random: fetch the plans of the keys a few places
    // ahead, in two stages (a key's plan start, then what it points at), so that the pass does not wait on
    // the host's memory once per key for each of them. A key to be warmed also reads its index bucket, at
    // random: its set in the cache model is fetched too. Always inlined, like CacheHierarchy::prefetch.
    [[gnu::always_inline]] void prefetchPlacement(std::size_t id, std::size_t keys, std::size_t warmFrom) const;

    // One write of a key whose steps run from `first` to `end`: its command's transients hold their regions (freed ones
    // first, as the allocator hands them out again, then the class's next), the key's allocations take theirs in the
    // order the engine makes them, written to `regions` by step, and the transients' regions are free again after. A
    // class's freed regions stay on a stack (m_freeRegions): a write that needs no more of them than are free takes and
    // frees the same ones, so only a write that needs more changes it, and only the key's allocations see the free
    // regions below the transients' own.
    void placeWrite(
        std::uint32_t first, std::uint32_t end, std::array<std::uint64_t, KeyLayout::kMaxAllocations>& regions);

    // The first of `count` regions of slot `slot`: a freed one when one will do, else the class's next.
    std::uint64_t takeRegions(std::uint32_t slot, std::uint32_t count);

    // The index lines a GET of key `id` looks up first: its bucket and the child buckets before its entry,
    // and the expires bucket when the engine looks there.
    void touchIndex(std::uint64_t id, std::uint8_t indexLines, std::uint8_t childDepth);

    // A keyspace bucket, then its first `childDepth` child buckets (hashtable.c: bucketConvertToChained).
    void touchBucket(std::uint64_t bucket, std::uint8_t childDepth, bool lastLevelOnly = false) {
        touch(m_cache, kIndexBase + bucket * m_index.slotBytes, m_index.slotBytes, lastLevelOnly);
        for (std::uint64_t d = 1; d <= childDepth; ++d)
            touch(m_cache, kChildBucketBase + (bucket * kMaxChildDepth + d - 1) * kCacheLineBytes, kCacheLineBytes,
                lastLevelOnly);
    }

    // `bytes` of each of `count` consecutive regions of `slot` from region `first`.
    void touchRegions(const ClassSlot& slot, std::uint64_t first, std::uint32_t count, const StepRead& read);

    // Chain walks: a visited key's dictEntry is its first read, its expires dictEntry (when it has one) its
    // last; of the allocation holding its key, the compare reads the length header.
    void visit(const ChainVisit& v);

    // The outer levels' tag arrays are far larger than the host's caches: fetch the sets a GET a few places
    // ahead will look up while this one is replayed (always inlined, like CacheHierarchy::prefetch).
    [[gnu::always_inline]] void prefetchGet(std::size_t i);

    // One GET: the index bucket, chain walks and the expires lookup where the engine makes them, then the
    // bytes it reads of each allocation.
    void replayGet(std::uint32_t slot, std::uint64_t id);

    // Replays the sampled GETs through the caches placement warmed; the first tenth only warms them
    // further. Returns the GETs counted.
    std::uint64_t replay();

    const AllocatorModel& m_alloc;
    const SampleIndex& m_sample;
    const IndexLookups& m_index;
    const ShapeVariants& m_variants;
    const std::map<std::uint64_t, AllocatorClass>& m_classInfo;
    const std::map<std::uint64_t, std::uint64_t>& m_startRegions; // SimulationConfig::startRegions
    CacheHierarchy m_cache;
    std::vector<RankPlan> m_plans; // by shape rank
    std::vector<std::uint32_t> m_placementStart; // by shape rank, into m_placementSteps
    std::vector<PlacementStep> m_placementSteps;
    std::vector<StepRead> m_stepReads; // beside m_placementSteps: what a GET reads of each
    std::vector<std::uint64_t> m_nextRegion; // by slot: the first region never handed out
    // By slot, kMaxTransients each: transients' freed regions, the last freed on top (m_freeCount of them).
    std::vector<std::uint64_t> m_freeRegions;
    std::vector<std::uint32_t> m_freeCount;
    std::vector<std::uint32_t> m_slotOfClass; // class id -> this threshold's slot
    std::vector<ClassSlot> m_slots;
    std::vector<std::uint32_t> m_firstShapeOfSlot;
    std::vector<SampledKey> m_sampled;
    std::vector<ReadStep> m_readSteps;
    std::uint64_t m_lastLevelBytes;
    std::uint64_t m_innerLevelBytes; // the next-to-last level's
    bool m_warmLastLevelOnly = false; // the key being warmed reaches the last level alone
};

} // namespace layoutlab::cache_detail
