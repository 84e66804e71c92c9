// SPDX-License-Identifier: MIT
#include "layoutlab/sim/simulation.h"

#include "layoutlab/resources.h"

#include "budget_simulation.h"
#include "cache_evaluation.h"
#include "layoutlab/sim/collection_replay.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/spec.h"
#include "threshold_evaluation.h"
#include "timeline_sampler.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <fmt/format.h>
#include <future>
#include <map>

namespace layoutlab {

namespace {
constexpr std::size_t kBatchRequests = 4096;

constexpr std::size_t kMaxThresholds = 4096;

// What the slab model holds at every threshold now, with the replay's live keys.
TimelineSample timelineSample(const KeyspaceReplay& replay, ArenaReplay& slabs,
    const std::vector<std::uint32_t>& thresholds, std::uint64_t requests, std::uint64_t timeMs) {
    slabs.catchUp();
    TimelineSample s { requests, timeMs, replay.summary().liveKeys, {}, {} };
    for (std::uint32_t t : thresholds) {
        const auto usage = slabs.usageAt(t);
        s.allocatedBytes.push_back(usage ? usage->allocatedBytes : 0);
        s.activeBytes.push_back(usage ? usage->activeBytes : 0);
    }
    return s;
}

// Replays the whole trace into `replay` (and the slab model observing it), counting the requests in `done`;
// with `timelineSamples` (and a slab model), a batch is split where a sample falls inside it.
Status replayTrace(TraceReader& trace, KeyspaceReplay& replay, ArenaReplay* slabs,
    const std::vector<std::uint32_t>& thresholds, std::uint32_t timelineSamples, ProgressSink* progress,
    std::stop_token stop, std::uint64_t& done, std::vector<TimelineSample>& timeline) {
    const std::uint64_t total = trace.totalRequests();
    std::optional<TimelineSampler> sampler;
    if (slabs && timelineSamples > 0)
        sampler.emplace(timelineSamples, total);
    std::uint64_t lastTimeMs = 0;
    auto apply = [&](std::span<const Request> part) -> Status {
        if (part.empty())
            return Ok {};
        if (auto ok = replay.apply(part, done); !ok) {
            Error e = ok.error();
            e.file = trace.name();
            return e;
        }
        done += part.size();
        lastTimeMs = part.back().timeMs;
        return Ok {};
    };
    auto replayed = forEachBatch(trace, kBatchRequests, stop, [&](std::span<const Request> batch) -> Status {
        while (sampler && sampler->nextAt() < done + batch.size()) {
            const std::size_t head = sampler->nextAt() - done;
            if (auto ok = apply(batch.first(head)); !ok)
                return ok;
            batch = batch.subspan(head);
            sampler->take(timelineSample(replay, *slabs, thresholds, done, lastTimeMs));
        }
        if (auto ok = apply(batch); !ok)
            return ok;
        if (progress && (done / kBatchRequests) % 64 == 0)
            progress->progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
        return Ok {};
    });
    if (!replayed)
        return replayed;
    if (sampler) // the end's place; its figures are taken once the replay has finished
        timeline = sampler->finish(timelineSample(replay, *slabs, thresholds, done, lastTimeMs));
    return Ok {};
}

} // namespace

std::vector<IndexFootprint> indexFootprints(const KeyspaceReplay& replay, const AllocatorModel& allocator) {
    std::vector<IndexFootprint> indexes;
    for (const DatabaseTables& db : replay.databaseTables()) {
        indexes.push_back(db.keys.footprint(allocator));
        if (replay.hasExpiresTables() && db.expires.entries() > 0)
            indexes.push_back(db.expires.footprint(allocator));
    }
    return indexes;
}

Expected<std::vector<ThresholdPoint>> evaluateKeyspace(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceShapes& shapes,
    const std::vector<IndexFootprint>& indexes, SimulationResult& result, std::stop_token stop) {
    result.getWeightsFromTrace = !shapes.gets.empty() || !shapes.thresholdGets.empty();
    result.trace.distinctShapes = shapes.keyspace.size() + shapes.thresholdKeyspace.size();
    for (const auto& index : indexes) {
        result.indexRehashing = result.indexRehashing || index.rehashing;
        result.indexBuckets += index.buckets;
        result.indexChildBuckets += static_cast<double>(index.childBuckets);
    }
    if (!result.getWeightsFromTrace) // no GETs in the trace: every live key read once
        return evaluateThresholds(config, thresholds, shapes.keyspace, shapes.keyspace, shapes.thresholdKeyspace,
            shapes.thresholdKeyspace, indexes, stop);
    return evaluateThresholds(config, thresholds, shapes.keyspace, shapes.gets, shapes.thresholdKeyspace,
        shapes.thresholdGets, indexes, stop);
}

Expected<std::vector<ThresholdPoint>> evaluateReplay(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceReplay& replay, SimulationResult& result,
    std::stop_token stop) {
    const KeyspaceShapes shapes { replay.keyspaceShapes().sorted(), replay.getShapes().sorted(),
        replay.thresholdKeyspaceShapes().sorted(), replay.thresholdGetShapes().sorted() };
    result.indexDatabases = static_cast<std::uint32_t>(std::count_if(replay.databaseTables().begin(),
        replay.databaseTables().end(), [](const DatabaseTables& db) { return db.keys.buckets() != 0; }));
    result.indexDatabases = std::max<std::uint32_t>(result.indexDatabases, 1);
    return evaluateKeyspace(config, thresholds, shapes, indexFootprints(replay, *config.allocator), result, stop);
}

// The run's description, whatever the replays.
SimulationResult resultHeader(const SimulationConfig& config, const TraceReader& trace) {
    SimulationResult result;
    result.traceName = trace.name();
    result.layoutSpec = config.layout->spec();
    result.allocatorSpec = config.allocator->spec();
    if (const auto param = config.layout->threshold()) {
        result.thresholdName = param->name;
        result.configuredThreshold = param->value;
    }
    result.fillBatch = config.fillOnMiss;
    return result;
}

ShapeCost costOf(
    const LayoutModel& layout, const AllocatorModel& allocator, const KeyShape& shape, std::uint32_t threshold) {
    ShapeCost cost;
    cost.layout = layout.describe(shape, threshold, allocator);
    cost.linesTouched = cost.layout.indexLinesPerGet;
    for (std::size_t i = 0; i < cost.layout.allocationCount; ++i) {
        const auto& a = cost.layout.allocations[i];
        const std::uint64_t usable = allocator.usableSize(a.requestedBytes);
        cost.requestedBytes += a.requestedBytes * a.count;
        cost.usableBytes += usable * a.count;
        if (a.readBytes > 0)
            cost.linesTouched += a.count * expectedLinesTouched(a.readBytes, allocator.alignment(usable));
    }
    return cost;
}

std::uint64_t warmKeyCount(std::uint64_t liveKeys, double bytesPerKey, std::uint64_t lastLevelBytes) {
    if (bytesPerKey <= 0)
        return liveKeys;
    const double keys = std::ceil(kWarmLastLevelMultiple * static_cast<double>(lastLevelBytes) / bytesPerKey);
    return keys >= static_cast<double>(liveKeys) ? liveKeys : static_cast<std::uint64_t>(keys);
}

Status checkThreshold(std::uint64_t value, const ThresholdParam& param, const std::string& field) {
    if (value < param.min || value > param.max)
        return usageError(
            fmt::format("threshold {} is out of range [{}, {}] for {}", value, param.min, param.max, param.name),
            field);
    return Ok {};
}

Expected<std::vector<std::uint32_t>> parseThresholds(
    std::string_view text, const ThresholdParam& param, const std::string& field) {
    std::vector<std::uint32_t> out;
    auto check = [&](std::uint64_t value) { return checkThreshold(value, param, field); };
    if (text.find(':') != std::string_view::npos) {
        const auto parts = splitString(text, ':');
        if (parts.size() != 3)
            return usageError(fmt::format("'{}' is not FIRST:LAST:STEP", text), field);
        auto first = parseUnsigned(parts[0], field);
        auto last = parseUnsigned(parts[1], field);
        auto step = parseUnsigned(parts[2], field);
        if (!first || !last || !step)
            return usageError(fmt::format("'{}' is not FIRST:LAST:STEP with whole numbers", text), field);
        if (*step == 0 || *last < *first)
            return usageError(fmt::format("'{}' needs STEP > 0 and FIRST <= LAST", text), field);
        if ((*last - *first) / *step + 1 > kMaxThresholds)
            return usageError(fmt::format("'{}' gives more than {} thresholds", text, kMaxThresholds), field);
        for (std::uint64_t t = *first; t <= *last; t += *step) {
            if (auto ok = check(t); !ok)
                return ok.error();
            out.push_back(static_cast<std::uint32_t>(t));
        }
    } else {
        for (auto part : splitString(text, ',')) {
            auto value = parseUnsigned(part, field);
            if (!value)
                return usageError(fmt::format("'{}' is not a whole number", part), field);
            if (auto ok = check(*value); !ok)
                return ok.error();
            out.push_back(static_cast<std::uint32_t>(*value));
        }
    }
    if (out.empty() || out.size() > kMaxThresholds)
        return usageError(fmt::format("give between 1 and {} thresholds", kMaxThresholds), field);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::optional<StaleExpireRule> staleExpireRule(
    const LayoutModel& layout, const AllocatorModel& allocator, const std::vector<std::uint32_t>& thresholds) {
    if (!layout.tracksStaleExpire())
        return std::nullopt;
    return StaleExpireRule(layout, allocator, thresholds);
}

namespace {
// The swept limit's points, from the run's point at the layout's own threshold (else its first) before its
// collections are added.
LimitSweepResult sweptLimit(const SimulationConfig& config, const SimulationResult& result,
    const CollectionReplay& collections, const KeyspaceReplay& replay) {
    const ThresholdPoint* base = &result.points.front();
    for (const ThresholdPoint& p : result.points)
        if (p.threshold == result.configuredThreshold)
            base = &p;
    std::vector<std::vector<CollectionUsage>> usage;
    for (std::size_t v = 1; v < collections.variants(); ++v)
        usage.push_back(collections.usage(replay.keys(), v));
    return limitSweepResult(*config.limitSweep, config.collectionLimits, *base, usage);
}
} // namespace

Expected<SimulationResult> simulate(
    const SimulationConfig& config, TraceReader& trace, ProgressSink* progress, std::stop_token stop) {
    if (!config.layout || !config.allocator)
        return usageError("simulate() needs a layout and an allocator");
    if (auto ok = config.layout->checkAllocator(*config.allocator); !ok)
        return ok.error();
    const auto thresholdParam = config.layout->threshold();
    std::vector<std::uint32_t> thresholds = config.thresholds;
    if (!thresholdParam && !thresholds.empty())
        return usageError(
            fmt::format("layout '{}' has no embed threshold to vary", config.layout->spec()), field::kThresholds);
    if (thresholds.empty())
        thresholds.push_back(thresholdParam ? thresholdParam->value : 0);
    if (config.eviction)
        return simulateWithBudget(config, thresholds, trace, progress, stop);

    const IndexPolicy policy = config.layout->indexPolicy();
    // The buffer a value is first unshared into is decided at one threshold (StringRewriteRule): the run's
    // own, or in a sweep the layout's.
    const std::uint32_t stringThreshold
        = thresholds.size() == 1 ? thresholds.front() : (thresholdParam ? thresholdParam->value : 0);
    // Per-key state is allocated for every key id the trace may hold (the slab model's too, per threshold):
    // a trace that claims billions of keys is refused here with the figures, not left to exhaust the memory.
    const std::uint64_t stateBytes
        = sizeof(KeyState) + (config.slabs ? arenaStateBytesPerKey(*config.allocator) * thresholds.size() : 0);
    if (auto ok = checkMemory(std::min(trace.keyIdLimit(), KeyspaceReplay::kMaxKeyIds) * stateBytes,
            fmt::format("replaying {} key ids ({} bytes of state each{})", trace.keyIdLimit(), stateBytes,
                config.slabs ? fmt::format(", the slab model's at {} thresholds included", thresholds.size()) : ""));
        !ok) {
        Error e = ok.error();
        e.file = trace.name();
        return e;
    }
    KeyspaceReplay replay(policy, trace.keyIdLimit(), config.cache ? config.cacheSampleGets : 0,
        staleExpireRule(*config.layout, *config.allocator, thresholds),
        StringRewriteRule(*config.layout, *config.allocator, stringThreshold));
    replay.setFillOnMiss(config.fillOnMiss);
    replay.setCronOnClock(config.cronOnTraceClock);
    // The run's limits first, then each swept value's, all replayed in this pass.
    std::vector<CollectionLimits> limitSets { config.collectionLimits };
    if (config.limitSweep)
        for (const CollectionLimits& limits : limitVariants(config.collectionLimits, *config.limitSweep))
            limitSets.push_back(limits);
    CollectionReplay collections(*config.layout, *config.allocator, std::move(limitSets));
    replay.setCollections(&collections);
    std::unique_ptr<ArenaReplay> slabs;
    if (config.slabs) {
        auto made = makeArenaReplay(*config.layout, *config.allocator, thresholds, replay, *config.slabs);
        if (!made)
            return made.error();
        slabs = std::move(*made);
    }
    std::uint64_t done = 0;
    std::vector<TimelineSample> timeline;
    if (auto ok
        = replayTrace(trace, replay, slabs.get(), thresholds, config.timelineSamples, progress, stop, done, timeline);
        !ok)
        return ok.error();
    if (config.endClockMs)
        replay.advanceClock(*config.endClockMs);
    replay.finish();
    if (slabs)
        slabs->settled();

    SimulationResult result = resultHeader(config, trace);
    result.trace = replay.summary();
    auto points = evaluateReplay(config, thresholds, replay, result, stop);
    if (!points)
        return points.error();
    result.points = std::move(*points);
    result.collections = collections.usage(replay.keys());
    if (config.limitSweep)
        result.limitSweep = sweptLimit(config, result, collections, replay);
    addCollections(result.points, result.collections);
    if (!timeline.empty()) // the end's sample, once the index tables have settled
        timeline.back() = timelineSample(replay, *slabs, thresholds, done, timeline.back().timeMs);
    result.timeline = std::move(timeline);
    if (slabs) {
        result.slabTable = slabs->tableSource();
        result.slabThreadCache = config.slabs->threadCache;
        const auto allocatorClasses = config.allocator->classes();
        for (ThresholdPoint& p : result.points) {
            p.arena = slabs->usageAt(p.threshold);
            addHeldSlabs(p, slabs->heldSlabsAt(p.threshold), allocatorClasses);
        }
    }
    if (config.cache) {
        const auto keyspace = replay.keyspaceShapes().sorted();
        const auto thresholdKeyspace = replay.thresholdKeyspaceShapes().sorted();
        // Every live key's shape must be in the list the cache model places from.
        std::vector<ShapeHistogram::Entry> merged;
        if (!thresholdKeyspace.empty()) {
            ShapeHistogram all;
            for (const auto& e : keyspace)
                all.add(e.shape, e.count);
            for (const auto& e : thresholdKeyspace)
                all.add(e.shape.shape, e.count);
            merged = all.sorted();
        }
        // The cache model can take longer than the replay: a phase of its own, thresholds as its progress.
        if (progress)
            progress->phase("cache model");
        auto counted = evaluateCache(
            config, thresholds, replay, thresholdKeyspace.empty() ? keyspace : merged, result.points, progress, stop);
        if (!counted)
            return counted.error();
        result.cacheGeometry = config.cache->describe();
        result.cacheStartRegions = startRegionsText(config.startRegions);
        result.cacheSampledGets = *counted;
        if (*counted == 0) // no string key to read (a keyspace of collections only): no miss figures, not zeros
            for (ThresholdPoint& p : result.points)
                p.missesPerGet.clear();
    }
    if (progress)
        progress->progress(1.0, done);
    return result;
}

} // namespace layoutlab
