// SPDX-License-Identifier: MIT
#pragma once

// simulate(): replays a trace once, keeping the live keyspace (8-16 bytes per key id) and the index
// tables' sizes; then evaluates every requested threshold from the final keyspace's shape histogram
// and the histogram of shapes the trace's GETs hit. The cost of a sweep is one replay plus
// thresholds x distinct shapes, not thresholds x requests.

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/progress.h"
#include "layoutlab/sim/arena_replay.h"
#include "layoutlab/sim/cache_model.h"
#include "layoutlab/sim/eviction.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/limit_sweep.h"
#include "layoutlab/sim/results.h"
#include "layoutlab/trace/trace_reader.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>

namespace layoutlab {

// The cache model replays the sampled GETs through caches that hold what loading the keyspace left
// (warmKeyCount); the first 1/kCacheWarmupDivisor of them only warm it further (the reference engine's
// measured replays split the same way).
inline constexpr std::size_t kCacheWarmupDivisor = 10;

// What loading the keyspace leaves in the caches: the last live keys in key-id (insertion) order are read
// along their GET path before the sampled GETs, as many as take kWarmLastLevelMultiple times the last
// level's bytes (every key of a keyspace that fits). Older keys would have been evicted by those; the
// reference engine reads the same keys before its measured GETs. Returns how many keys to read.
inline constexpr double kWarmLastLevelMultiple = 2.0;

// How far the cache model's misses per GET can be trusted: within 2.2% of valgrind's simulator from
// 100,000 to 5,000,000 keys at L1 and LLC (docs/cache-model.md, "What the measurements show"), rounded up.
// The advice's ties and the stall prediction's uncertainty both state it.
inline constexpr double kMissesPerGetUncertainty = 0.03;
std::uint64_t warmKeyCount(std::uint64_t liveKeys, double bytesPerKey, std::uint64_t lastLevelBytes);

struct SimulationConfig {
    LayoutPtr layout;
    AllocatorPtr allocator;
    std::vector<std::uint32_t> thresholds; // empty: the layout's configured threshold (or none)
    // The cache model: when set, the last `cacheSampleGets` GET hits of the trace are replayed through it
    // for every threshold (the first tenth only warms the cache).
    std::optional<CacheGeometry> cache;
    std::uint32_t cacheSampleGets = 100000;
    // The regions of each size class (by usable size) the server's own objects hold when the trace begins:
    // the keys' allocations start after them. Where a key has two allocations in one class, this decides
    // which lines they share (docs/cache-model.md, "Where a class starts"). None by default: the model
    // cannot see a server's start-up objects in a trace.
    std::map<std::uint64_t, std::uint64_t> startRegions;
    // The slab model (sim/arena_replay.h): when set, every change to the keyspace is also played into a
    // model of the allocator's memory per threshold (a jemalloc arena, memcached's slab pages), and each
    // point gets what it holds (ThresholdPoint::arena, SizeClassUsage::heldSlabs).
    std::optional<SlabModelOptions> slabs;
    // With the slab model: how many times to sample the live keys and each threshold's allocated and
    // active bytes along the trace (SimulationResult::timeline; 0: none).
    std::uint32_t timelineSamples = 0;
    // A memory budget (sim/eviction.h): each threshold's keyspace is kept within it by its own replay,
    // evicting as the server would; each point gets what the cache achieved (ThresholdPoint::budget).
    std::optional<EvictionOptions> eviction;
    // With a budget: several maxmemory sizes, each threshold replayed at each (a miss-ratio curve); the
    // points are then by threshold, then by budget. Empty: the budget's own maxmemory only.
    std::vector<std::uint64_t> budgets;
    // Look-aside filling (KeyspaceReplay::setFillOnMiss): GET misses are followed by SETs, in batches of
    // this many requests (0: none; 1: right after each miss).
    std::uint32_t fillOnMiss = 0;
    // With a budget: replay a spatial sample of the keys, this share of them, under the same share of each
    // budget (sim/key_sample.h, SHARDS), two samples each, instead of every key (1). A miss-ratio curve of
    // many budgets then costs about 2 x rate x budgets replays.
    double budgetSampleRate = 1.0;
    // Opens the trace again from its start, where it can be (a file, not a pipe): a budgeted run that
    // tries one pass of stack distances (sim/stack_distance_curve.h) and finds the trace breaks their
    // conditions replays its budgets from a second reading. Without it the budgets are replayed at once.
    std::function<Expected<std::unique_ptr<TraceReader>>()> reopenTrace;
    // The collections' limits (the engines' defaults unless given: hash-max-listpack-entries, ...).
    CollectionLimits collectionLimits;
    // One of them at several values, in the same pass (sim/limit_sweep.h): SimulationResult::limitSweep.
    std::optional<LimitSweep> limitSweep;
    // The clock at the end, past the trace's last request (KeyspaceReplay::advanceClock): a drive measures
    // its server after waiting for the trace's TTLs to run out. None: the last request's time.
    std::optional<std::uint64_t> endClockMs;
    // Whether Valkey's cron grows a table the trace's clock shows at its limit for a cron period
    // (KeyspaceReplay::cronCheck). A drive that does not send on the trace's clock turns it off: its pauses
    // are not the server's.
    bool cronOnTraceClock = true;
};

// The most samples a timeline takes.
inline constexpr std::uint32_t kMaxTimelineSamples = 10000;

// Parses "40:41,24:7" (usable size : regions) into SimulationConfig::startRegions; the error names `field`.
Expected<std::map<std::uint64_t, std::uint64_t>> parseStartRegions(std::string_view text, const std::string& field);
// "40:41,24:7", as parseStartRegions reads it ("" for none).
std::string startRegionsText(const std::map<std::uint64_t, std::uint64_t>& startRegions);

Expected<SimulationResult> simulate(
    const SimulationConfig& config, TraceReader& trace, ProgressSink* progress = nullptr, std::stop_token stop = {});

// The replay's rule for stale expire fields when `layout` tracks them, for a run at `thresholds`; nullopt
// when it does not.
std::optional<StaleExpireRule> staleExpireRule(
    const LayoutModel& layout, const AllocatorModel& allocator, const std::vector<std::uint32_t>& thresholds);

// Whether `value` is within the layout's range for its threshold parameter; the error names `field`.
Status checkThreshold(std::uint64_t value, const ThresholdParam& param, const std::string& field);

// Parses "32:512:16" (first:last:step) or "64,128" into a sorted, de-duplicated list.
Expected<std::vector<std::uint32_t>> parseThresholds(
    std::string_view text, const ThresholdParam& param, const std::string& field = field::kThresholds);

// The metrics of one shape under one threshold (used by tests and `layoutlab layouts --explain`).
struct ShapeCost {
    KeyLayout layout;
    std::uint64_t requestedBytes = 0;
    std::uint64_t usableBytes = 0;
    double linesTouched = 0;
};
ShapeCost costOf(
    const LayoutModel& layout, const AllocatorModel& allocator, const KeyShape& shape, std::uint32_t threshold);

} // namespace layoutlab
