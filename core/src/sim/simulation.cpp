// SPDX-License-Identifier: MIT
#include "layoutlab/sim/simulation.h"

#include "cache_evaluation.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/spec.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>
#include <map>

namespace layoutlab {

namespace {
constexpr std::size_t kBatchRequests = 4096;

constexpr std::size_t kMaxThresholds = 4096;

// Sums for one threshold, before they become a ThresholdPoint.
struct PointAccumulator {
    ThresholdPoint point;
    std::map<std::uint64_t, SizeClassUsage> classes;
    double lines = 0;
    double loads = 0;
    double getWeight = 0;

    void addClass(std::uint64_t requested, std::uint64_t usable, std::uint64_t count, std::uint64_t payload = 0) {
        auto& row = classes[usable];
        row.classBytes = usable;
        row.allocations += count;
        row.requestedBytes += requested * count;
        row.usableBytes += usable * count;
        row.payloadBytes += payload * count;
    }

    void addKeys(const KeyShape& shape, std::uint64_t count, const KeyLayout& kl, const AllocatorModel& alloc) {
        auto& p = point;
        if (!kl.stored) {
            p.unstorableKeys += count;
            return;
        }
        p.keys += count;
        p.payloadBytes += (std::uint64_t { shape.keyBytes } + shape.valueBytes) * count;
        p.pointerBytes += std::uint64_t { kl.pointerBytes } * count;
        p.embeddedKeys += kl.embedded() ? count : 0;
        for (std::size_t i = 0; i < kl.allocationCount; ++i) {
            const auto& a = kl.allocations[i];
            const std::uint64_t usable = alloc.usableSize(a.requestedBytes);
            const std::uint64_t n = std::uint64_t { a.count } * count;
            p.requestedBytes += a.requestedBytes * n;
            p.usableBytes += usable * n;
            p.allocations += n;
            addClass(a.requestedBytes, usable, n, a.payloadBytes);
        }
    }

    void merge(const PointAccumulator& other) {
        auto& p = point;
        const auto& o = other.point;
        p.keys += o.keys;
        p.unstorableKeys += o.unstorableKeys;
        p.payloadBytes += o.payloadBytes;
        p.pointerBytes += o.pointerBytes;
        p.embeddedKeys += o.embeddedKeys;
        p.requestedBytes += o.requestedBytes;
        p.usableBytes += o.usableBytes;
        p.allocations += o.allocations;
        for (const auto& [usable, row] : other.classes) {
            auto& mine = classes[usable];
            mine.classBytes = usable;
            mine.allocations += row.allocations;
            mine.requestedBytes += row.requestedBytes;
            mine.usableBytes += row.usableBytes;
            mine.payloadBytes += row.payloadBytes;
        }
        lines += other.lines;
        loads += other.loads;
        getWeight += other.getWeight;
    }

    void addGets(std::uint64_t count, const ShapeCost& cost) {
        if (!cost.layout.stored)
            return;
        const double w = static_cast<double>(count);
        lines += cost.linesTouched * w;
        loads += cost.layout.dependentLoads * w;
        getWeight += w;
    }

    ThresholdPoint finish(std::uint32_t threshold, const std::vector<IndexFootprint>& indexes,
        const std::vector<AllocatorClass>& allocatorClasses) {
        ThresholdPoint p = point;
        p.threshold = threshold;
        for (const auto& index : indexes) {
            p.requestedBytes += index.requestedBytes;
            p.usableBytes += index.usableBytes;
            p.indexBytes += index.usableBytes;
            p.allocations += index.allocations;
            for (const auto& part : index.parts)
                if (part.fromAllocator)
                    addClass(part.requestedBytes, part.usableBytes, part.count);
        }
        p.internalFragmentationBytes = p.usableBytes - p.requestedBytes;
        if (p.keys > 0) {
            const double keys = static_cast<double>(p.keys);
            p.usableBytesPerKey = static_cast<double>(p.usableBytes) / keys;
            p.overheadBytesPerKey = (static_cast<double>(p.usableBytes) - static_cast<double>(p.payloadBytes)) / keys;
            p.allocationsPerKey = static_cast<double>(p.allocations) / keys;
            p.pointerBytesPerKey = static_cast<double>(p.pointerBytes) / keys;
            p.embeddedFraction = static_cast<double>(p.embeddedKeys) / keys;
        }
        if (getWeight > 0) {
            p.linesTouchedPerGet = lines / getWeight;
            p.dependentLoadsPerGet = loads / getWeight;
        }
        for (auto& [usable, row] : classes) {
            for (const auto& c : allocatorClasses)
                if (c.size == usable && c.regionsPerSlab > 0) {
                    row.regionsPerSlab = c.regionsPerSlab;
                    row.slabs = (row.allocations + c.regionsPerSlab - 1) / c.regionsPerSlab;
                }
            p.sizeClasses.push_back(row);
        }
        return p;
    }
};

// Evaluates every threshold from the shape histograms, at a cost that does not grow with the number
// of thresholds. A shape's layout changes at most once as the threshold grows (LayoutModel::describe),
// so each shape is either the same at every threshold (added once to `base`) or switches at one
// threshold index s, found by binary search: it contributes its low layout to the points below s and
// its high layout from s on. Point i is then base + sum(high[s], s <= i) + sum(low[s], s > i).
//
// Keys whose shape itself depends on the threshold (a stale expire field kept below some threshold,
// KeyState::expireAtSeconds) are few and counted apart: each is described at every threshold.
Expected<std::vector<ThresholdPoint>> evaluateThresholds(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const std::vector<ShapeHistogram::Entry>& keyspace,
    const std::vector<ShapeHistogram::Entry>& gets, const ThresholdShapeCounts& thresholdKeyspace,
    const ThresholdShapeCounts& thresholdGets, const std::vector<IndexFootprint>& indexes, std::stop_token stop) {
    const auto& layout = *config.layout;
    const auto& alloc = *config.allocator;
    const std::size_t count = thresholds.size();
    PointAccumulator base;
    std::vector<PointAccumulator> low(count);
    std::vector<PointAccumulator> high(count);
    std::vector<PointAccumulator> exact(count); // the threshold-dependent shapes, point by point
    auto shapeAt = [](std::uint64_t packed, std::uint32_t keptBelow, std::uint32_t threshold) {
        KeyShape shape = unpackShape(packed);
        shape.staleExpire = threshold < keptBelow;
        return shape;
    };
    for (const auto& [entry, keys] : thresholdKeyspace)
        for (std::size_t i = 0; i < count; ++i) {
            const KeyShape shape = shapeAt(entry.first, entry.second, thresholds[i]);
            exact[i].addKeys(shape, keys, layout.describe(shape, thresholds[i], alloc), alloc);
        }
    for (const auto& [entry, hits] : thresholdGets)
        for (std::size_t i = 0; i < count; ++i)
            exact[i].addGets(
                hits, costOf(layout, alloc, shapeAt(entry.first, entry.second, thresholds[i]), thresholds[i]));

    // The first threshold index at which the shape's layout is `target` (the highest one's).
    auto switchIndex = [&](const KeyShape& shape, const KeyLayout& target) {
        std::size_t lo = 0, hi = count - 1; // layout(thresholds[hi]) == target, layout(thresholds[0]) != target
        while (hi - lo > 1) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (layout.describe(shape, thresholds[mid], alloc) == target)
                hi = mid;
            else
                lo = mid;
        }
        return hi;
    };

    for (const auto& entry : keyspace) {
        const KeyShape shape = unpackShape(entry.shape);
        const KeyLayout first = layout.describe(shape, thresholds.front(), alloc);
        if (count == 1) {
            base.addKeys(shape, entry.count, first, alloc);
            continue;
        }
        const KeyLayout last = layout.describe(shape, thresholds.back(), alloc);
        if (first == last) {
            base.addKeys(shape, entry.count, first, alloc);
            continue;
        }
        const std::size_t s = switchIndex(shape, last);
        assert(layout.describe(shape, thresholds[s - 1], alloc) == first);
        low[s].addKeys(shape, entry.count, first, alloc);
        high[s].addKeys(shape, entry.count, last, alloc);
    }
    if (stop.stop_requested())
        return cancelledError();
    for (const auto& entry : gets) {
        const KeyShape shape = unpackShape(entry.shape);
        const ShapeCost first = costOf(layout, alloc, shape, thresholds.front());
        if (count == 1) {
            base.addGets(entry.count, first);
            continue;
        }
        const KeyLayout last = layout.describe(shape, thresholds.back(), alloc);
        if (first.layout == last) {
            base.addGets(entry.count, first);
            continue;
        }
        const std::size_t s = switchIndex(shape, last);
        low[s].addGets(entry.count, first);
        high[s].addGets(entry.count, costOf(layout, alloc, shape, thresholds.back()));
    }

    const auto allocatorClasses = alloc.classes();
    std::vector<ThresholdPoint> points;
    PointAccumulator highBelow; // sum of high[s] for s <= i
    for (std::size_t i = 0; i < count; ++i) {
        if (stop.stop_requested())
            return cancelledError();
        highBelow.merge(high[i]);
        PointAccumulator acc = base;
        acc.merge(highBelow);
        acc.merge(exact[i]);
        for (std::size_t s = i + 1; s < count; ++s)
            acc.merge(low[s]);
        points.push_back(acc.finish(thresholds[i], indexes, allocatorClasses));
    }
    return points;
}
} // namespace

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

Expected<std::vector<std::uint32_t>> parseThresholds(std::string_view text, const ThresholdParam& param) {
    std::vector<std::uint32_t> out;
    auto check = [&](std::uint64_t value) -> Status {
        if (value < param.min || value > param.max)
            return usageError(
                fmt::format("threshold {} is out of range [{}, {}] for {}", value, param.min, param.max, param.name),
                "--thresholds");
        return Ok {};
    };
    if (text.find(':') != std::string_view::npos) {
        const auto parts = splitString(text, ':');
        if (parts.size() != 3)
            return usageError(fmt::format("'{}' is not FIRST:LAST:STEP", text), "--thresholds");
        auto first = parseUnsigned(parts[0], "--thresholds");
        auto last = parseUnsigned(parts[1], "--thresholds");
        auto step = parseUnsigned(parts[2], "--thresholds");
        if (!first || !last || !step)
            return usageError(fmt::format("'{}' is not FIRST:LAST:STEP with whole numbers", text), "--thresholds");
        if (*step == 0 || *last < *first)
            return usageError(fmt::format("'{}' needs STEP > 0 and FIRST <= LAST", text), "--thresholds");
        if ((*last - *first) / *step + 1 > kMaxThresholds)
            return usageError(fmt::format("'{}' gives more than {} thresholds", text, kMaxThresholds), "--thresholds");
        for (std::uint64_t t = *first; t <= *last; t += *step) {
            if (auto ok = check(t); !ok)
                return ok.error();
            out.push_back(static_cast<std::uint32_t>(t));
        }
    } else {
        for (auto part : splitString(text, ',')) {
            auto value = parseUnsigned(part, "--thresholds");
            if (!value)
                return usageError(fmt::format("'{}' in --thresholds is not a whole number", part), "--thresholds");
            if (auto ok = check(*value); !ok)
                return ok.error();
            out.push_back(static_cast<std::uint32_t>(*value));
        }
    }
    if (out.empty() || out.size() > kMaxThresholds)
        return usageError("--thresholds needs between 1 and 4096 values", "--thresholds");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::optional<StaleExpireRule> staleExpireRule(const LayoutModel& layout, const AllocatorModel& allocator) {
    if (!layout.tracksStaleExpire())
        return std::nullopt;
    return StaleExpireRule { &layout, &allocator };
}

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
            fmt::format("layout '{}' has no embed threshold to vary", config.layout->spec()), "--thresholds");
    if (thresholds.empty())
        thresholds.push_back(thresholdParam ? thresholdParam->value : 0);

    const IndexPolicy policy = config.layout->indexPolicy();
    KeyspaceReplay replay(policy, trace.keyIdLimit(), config.cache ? config.cacheSampleGets : 0,
        staleExpireRule(*config.layout, *config.allocator));
    std::uint64_t done = 0;
    const std::uint64_t total = trace.totalRequests();
    auto replayed = forEachBatch(trace, kBatchRequests, stop, [&](std::span<const Request> batch) -> Status {
        if (auto ok = replay.apply(batch, done); !ok) {
            Error e = ok.error();
            e.file = trace.name();
            return e;
        }
        done += batch.size();
        if (progress && (done / kBatchRequests) % 64 == 0)
            progress->progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
        return Ok {};
    });
    if (!replayed)
        return replayed.error();
    replay.finish();

    SimulationResult result;
    result.traceName = trace.name();
    result.layoutSpec = config.layout->spec();
    result.allocatorSpec = config.allocator->spec();
    if (thresholdParam) {
        result.thresholdName = thresholdParam->name;
        result.configuredThreshold = thresholdParam->value;
    }
    result.trace = replay.summary();
    const auto keyspace = replay.keyspaceShapes().sorted();
    auto gets = replay.getShapes().sorted();
    auto thresholdGets = replay.thresholdGetShapes();
    result.getWeightsFromTrace = !gets.empty() || !thresholdGets.empty();
    if (!result.getWeightsFromTrace) { // no GETs in the trace: every live key read once
        gets = keyspace;
        thresholdGets = replay.thresholdKeyspaceShapes();
    }
    result.trace.distinctShapes = keyspace.size() + replay.thresholdKeyspaceShapes().size();

    std::vector<IndexFootprint> indexes;
    indexes.push_back(replay.keyspaceTable().footprint(*config.allocator));
    if (const auto* expires = replay.expiresTable(); expires && expires->entries() > 0)
        indexes.push_back(expires->footprint(*config.allocator));
    for (const auto& index : indexes) {
        result.indexRehashing = result.indexRehashing || index.rehashing;
        result.indexBuckets += index.buckets;
        result.indexChildBuckets += static_cast<double>(index.childBuckets);
    }
    auto points = evaluateThresholds(
        config, thresholds, keyspace, gets, replay.thresholdKeyspaceShapes(), thresholdGets, indexes, stop);
    if (!points)
        return points.error();
    result.points = std::move(*points);
    if (config.cache) {
        // Every live key's shape must be in the list the cache model places from.
        auto placed = keyspace;
        if (!replay.thresholdKeyspaceShapes().empty()) {
            ShapeHistogram all;
            for (const auto& e : keyspace)
                all.add(e.shape, e.count);
            for (const auto& [entry, keys] : replay.thresholdKeyspaceShapes())
                all.add(entry.first, keys);
            placed = all.sorted();
        }
        auto counted = evaluateCache(config, thresholds, replay, placed, result.points, stop);
        if (!counted)
            return counted.error();
        result.cacheGeometry = config.cache->describe();
        result.cacheSampledGets = *counted;
    }
    if (progress)
        progress->progress(1.0, done);
    return result;
}

} // namespace layoutlab
