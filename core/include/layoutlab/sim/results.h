// SPDX-License-Identifier: MIT
#pragma once

// Plain result structs: what a simulation reports per threshold. Byte counts are 64-bit integers and
// carry their unit in their name.

#include "layoutlab/trace/request.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace layoutlab {

struct SizeClassUsage {
    std::uint64_t classBytes = 0; // the allocator class (usable bytes)
    std::uint64_t allocations = 0;
    std::uint64_t requestedBytes = 0;
    std::uint64_t usableBytes = 0;
    std::uint64_t payloadBytes = 0; // key and value bytes in these allocations (requested - payload: headers)
    std::uint64_t regionsPerSlab = 0; // 0 for page-multiple extents and unslabbed allocators
    std::uint64_t slabs = 0; // slabs (pages for memcached) needed at minimum for these allocations
    // Slabs (memcached: pages) the slab model holds in this class at the end of the trace, live regions or
    // not (with the slab model only; 0 without it, and for large extents).
    std::uint64_t heldSlabs = 0;
    // memcached under a memory limit: items this class's LRU evicted (`stats items` evicted); 0 otherwise.
    std::uint64_t evictions = 0;

    auto operator<=>(const SizeClassUsage&) const = default;
};

// One slab class's slabs (memcached: pages) a model holds, and (memcached under a memory limit) the items its LRU
// evicted.
struct HeldSlabs {
    std::uint64_t classBytes = 0;
    std::uint64_t slabs = 0;
    std::uint64_t evictions = 0;
};

// What the allocator keeps for the keyspace, from the slab model (sim --slabs): jemalloc's stats.allocated
// and stats.active (INFO's allocator_allocated and allocator_active), at the end of the trace and at the
// trace's peak of each.
struct ArenaUsage {
    std::uint64_t allocatedBytes = 0;
    std::uint64_t activeBytes = 0;
    std::uint64_t peakAllocatedBytes = 0;
    std::uint64_t peakActiveBytes = 0;

    // active / allocated: 1 when every held page is full of live regions (0 when nothing is allocated).
    double fragRatio() const {
        return allocatedBytes ? static_cast<double>(activeBytes) / static_cast<double>(allocatedBytes) : 0.0;
    }
    double peakFragRatio() const {
        return peakAllocatedBytes ? static_cast<double>(peakActiveBytes) / static_cast<double>(peakAllocatedBytes)
                                  : 0.0;
    }
    auto operator<=>(const ArenaUsage&) const = default;
};

// What a memory budget did at one threshold (sim --maxmemory): the cache's figures over the trace, the
// keys it held at the end being the point's keys.
struct BudgetUsage {
    std::uint64_t maxmemoryBytes = 0;
    std::uint64_t getHits = 0;
    std::uint64_t getMisses = 0;
    std::uint64_t fills = 0; // SETs after GET misses (look-aside filling)
    std::uint64_t evictedKeys = 0;
    std::uint64_t refusedWrites = 0; // write commands answered OOM (noeviction, or nothing left to evict)
    std::uint64_t usedBytes = 0; // used_memory at the end of the trace, the server's base included

    double hitRatio() const {
        const std::uint64_t gets = getHits + getMisses;
        return gets ? static_cast<double>(getHits) / static_cast<double>(gets) : 0.0;
    }
    auto operator<=>(const BudgetUsage&) const = default;
};

struct ThresholdPoint {
    std::uint32_t threshold = 0; // 0 when the layout has none
    std::uint64_t keys = 0;
    std::uint64_t unstorableKeys = 0; // rejected by the engine (memcached: item larger than -I)
    std::uint64_t payloadBytes = 0; // key + value lengths
    std::uint64_t requestedBytes = 0; // asked of the allocator, index tables included
    std::uint64_t usableBytes = 0; // handed out by the allocator (what used_memory counts)
    std::uint64_t internalFragmentationBytes = 0; // usable - requested
    std::uint64_t indexBytes = 0; // usable bytes of the index tables
    std::uint64_t allocations = 0;
    std::uint64_t pointerBytes = 0;
    std::uint64_t embeddedKeys = 0;
    double overheadBytesPerKey = 0; // (usable - payload) / keys
    double usableBytesPerKey = 0;
    double allocationsPerKey = 0;
    double pointerBytesPerKey = 0;
    double embeddedFraction = 0;
    double linesTouchedPerGet = 0; // distinct 64-byte lines, index line(s) included
    double dependentLoadsPerGet = 0;
    // Cache-model misses per GET, one per cache level from L1 outward (empty without --cache).
    std::vector<double> missesPerGet;
    std::vector<SizeClassUsage> sizeClasses; // sorted by class
    std::optional<ArenaUsage> arena; // with the slab model only
    std::optional<BudgetUsage> budget; // with a memory budget only
};

// Collection keys (hashes; sets, sorted sets and lists to come) live at the end of the trace, by type and
// encoding. The string embed threshold leaves them alone: the same at every threshold, and counted in every
// point's keys and bytes (not in its size classes).
struct CollectionUsage {
    std::string type; // "hash", "set"
    std::string encoding; // OBJECT ENCODING's word: "listpack", "intset", "hashtable"
    std::uint64_t keys = 0;
    std::uint64_t entries = 0; // fields, members, elements
    std::uint64_t payloadBytes = 0; // key, element and value lengths
    // The keys' own allocations and their collections', in expectation where the engine draws at random.
    double allocations = 0;
    double requestedBytes = 0;
    double usableBytes = 0;
    // The cache lines lookups of the keys' elements read, summed over the elements (HGET, SISMEMBER, ZSCORE;
    // a list's LINDEX: CollectionKeyModel::lookupLines): what a compact encoding pays for its bytes.
    double lookupLines = 0;
    // Of usableBytes: the tables' bucket arrays and child buckets, in expectation, which a real server's
    // hash seed draws (CollectionFootprint::bucketArrayBytes).
    double bucketArrayBytes = 0;
    // The variance of usableBytes over the engine's random draws (a sorted set's skiplist node levels:
    // CollectionFootprint::usableBytesVariance); 0 where nothing is drawn.
    double usableBytesVariance = 0;

    double lookupLinesPerElement() const { return entries ? lookupLines / static_cast<double>(entries) : 0.0; }
    bool operator==(const CollectionUsage&) const = default;
};

struct TraceSummary {
    std::uint64_t requests = 0;
    std::array<std::uint64_t, kOpCount> requestsByOp {};
    std::uint64_t getHits = 0;
    std::uint64_t getMisses = 0;
    std::uint64_t expiredKeys = 0;
    std::uint64_t distinctKeys = 0; // key ids ever written
    std::uint64_t liveKeys = 0; // at the end
    std::uint64_t maxLiveKeys = 0;
    std::uint64_t ttlKeys = 0; // live keys with a TTL at the end
    std::uint64_t distinctShapes = 0;
    // APPEND, SETRANGE and INCR on keys the trace never wrote: modelled as absent (the command creates
    // them), which is wrong when the capture began with those keys already in the server.
    std::uint64_t unseenKeyRewrites = 0;
    // DELETEs of key ids the trace never wrote before (a capture that began with them in the server).
    std::uint64_t unwrittenKeyDeletes = 0;
    // Op::Rename halves that did not pair, or named a source the replay did not hold (none from the importers).
    std::uint64_t unmatchedRenames = 0;
    // With look-aside filling: SETs made after GET misses; misses of keys never written (nothing to fill).
    std::uint64_t fills = 0;
    std::uint64_t unfillableMisses = 0;
    // With a memory budget: keys evicted, and write commands refused (OOM).
    std::uint64_t evictedKeys = 0;
    std::uint64_t refusedWrites = 0;
    // Requests a server answers with WRONGTYPE: an element of a string key, a string command on a collection
    // key (nothing changes).
    std::uint64_t wrongTypeRequests = 0;
    std::uint64_t collectionKeys = 0; // live collection keys at the end

    bool operator==(const TraceSummary&) const = default;
};

// The keyspace and the allocator's memory at one point of the trace (sim --timeline, with the slab
// model): after `requests` requests, the last at `timeMs`.
struct TimelineSample {
    std::uint64_t requests = 0;
    std::uint64_t timeMs = 0;
    std::uint64_t liveKeys = 0;
    // Per threshold, in the order of SimulationResult::points.
    std::vector<std::uint64_t> allocatedBytes;
    std::vector<std::uint64_t> activeBytes;

    auto operator<=>(const TimelineSample&) const = default;
};

// One value of a collection limit swept in the run's pass (SimulationConfig::limitSweep, sim/limit_sweep.h): the
// run's point with the collection keys as that value leaves them.
struct LimitPoint {
    std::int64_t value = 0;
    ThresholdPoint point;
    std::vector<CollectionUsage> collections;
};
struct LimitSweepResult {
    std::string name; // the limit, in the engine's words
    std::int64_t runValue = 0; // the run's own value of it
    std::uint32_t threshold = 0; // the threshold of the point the values change
    std::vector<LimitPoint> points;
};

struct SimulationResult {
    std::string traceName;
    std::string layoutSpec;
    std::string allocatorSpec;
    std::string thresholdName; // empty when the layout has none
    std::uint32_t configuredThreshold = 0; // the layout's own value
    bool getWeightsFromTrace = false; // per-GET metrics weighted by the trace's GET hits (else: every key once)
    bool indexRehashing = false;
    std::uint64_t indexBuckets = 0;
    // The databases whose key tables hold buckets (a trace that places keys in several: one pair of tables each).
    std::uint32_t indexDatabases = 1;
    double indexChildBuckets = 0;
    TraceSummary trace;
    std::string cacheGeometry; // "48K:12,2M:16,300M:20" when the cache model ran
    std::string cacheStartRegions; // SimulationConfig::startRegions as "40:41", when given
    std::uint64_t cacheSampledGets = 0; // GETs replayed through the cache model per threshold (after warm-up)
    // The slab model's size-class table: "linked" (read from this program's jemalloc by mallctl) or
    // "emulated" (sc.c's construction); empty when the slab model did not run.
    std::string slabTable;
    bool slabThreadCache = false; // the slab model put a thread cache in front of the arena
    // With a memory budget: the policy, its settings and the server's own memory, as "allkeys-lru, 5 samples"
    // (empty without one); and the fill batch of look-aside filling (0: none).
    std::string budgetPolicy;
    std::uint64_t budgetBaseBytes = 0;
    // A budget replayed over a spatial sample of the keys (SimulationConfig::budgetSampleRate; 1: every key):
    // the keys the two samples held in all, and half the largest difference in hit ratio between them.
    double budgetSampleRate = 1.0;
    std::uint64_t budgetSampledKeys = 0;
    double budgetSamplingError = 0;
    // How the budgets were computed: "a replay per budget", "stack distances" (every budget from one pass,
    // sim/stack_distance_curve.h), or a replay per budget with why stack distances did not apply.
    std::string budgetMethod;
    std::uint32_t fillBatch = 0;
    std::vector<ThresholdPoint> points;
    // Collection keys by type and encoding (counted in every point).
    std::vector<CollectionUsage> collections;
    // With a timeline asked for: samples at even steps of the trace's requests, the last at its end.
    std::vector<TimelineSample> timeline;
    // With a collection limit swept: each value's point.
    std::optional<LimitSweepResult> limitSweep;
};

// The index of the point that uses the least memory (usable bytes); ties go to fewer lines touched per
// GET, then the lower threshold. This is the sweep's "best threshold" everywhere (reports, GUI). Empty
// `points`: 0.
std::size_t leanestPoint(const std::vector<ThresholdPoint>& points);

// The point at the setting the layout's engine ships with: its configured threshold, or for a layout
// without one its one point. Null when the run did not evaluate it (a sweep that skipped it, a `sim` at
// another threshold).
const ThresholdPoint* shippedPoint(const std::vector<ThresholdPoint>& points, std::optional<std::uint32_t> configured);
const ThresholdPoint* shippedPoint(const SimulationResult& result);

} // namespace layoutlab
