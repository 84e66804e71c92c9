// SPDX-License-Identifier: MIT
#include "layoutlab/sim/simulation.h"

#include "layoutlab/resources.h"

#include "cache_evaluation.h"
#include "layoutlab/sim/keyspace_replay.h"
#include "layoutlab/sim/slab_replay.h"
#include "layoutlab/spec.h"

#include <algorithm>
#include <cassert>
#include <cmath>
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

    void merge(const PointAccumulator& other) { combine(other, 1); }
    // Takes back what merge(other) added (the interval sums of threshold-dependent shapes). Unsigned sums
    // wrap and come back: every removal follows the addition it undoes.
    void remove(const PointAccumulator& other) { combine(other, -1); }

    void combine(const PointAccumulator& other, int sign) {
        const auto s = static_cast<std::uint64_t>(static_cast<std::int64_t>(sign));
        auto& p = point;
        const auto& o = other.point;
        p.keys += s * o.keys;
        p.unstorableKeys += s * o.unstorableKeys;
        p.payloadBytes += s * o.payloadBytes;
        p.pointerBytes += s * o.pointerBytes;
        p.embeddedKeys += s * o.embeddedKeys;
        p.requestedBytes += s * o.requestedBytes;
        p.usableBytes += s * o.usableBytes;
        p.allocations += s * o.allocations;
        for (const auto& [usable, row] : other.classes) {
            auto& mine = classes[usable];
            mine.classBytes = usable;
            mine.allocations += s * row.allocations;
            mine.requestedBytes += s * row.requestedBytes;
            mine.usableBytes += s * row.usableBytes;
            mine.payloadBytes += s * row.payloadBytes;
        }
        lines += sign * other.lines;
        loads += sign * other.loads;
        getWeight += sign * other.getWeight;
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
            if (row.allocations == 0)
                continue; // a class only threshold-dependent shapes used, elsewhere
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
// KeyState::expireAtSeconds) are counted apart, by shape and bound, and added over intervals.
Expected<std::vector<ThresholdPoint>> evaluateThresholds(const SimulationConfig& config,
    const std::vector<std::uint32_t>& thresholds, const std::vector<ShapeHistogram::Entry>& keyspace,
    const std::vector<ShapeHistogram::Entry>& gets,
    const std::vector<ThresholdShapeHistogram::Entry>& thresholdKeyspace,
    const std::vector<ThresholdShapeHistogram::Entry>& thresholdGets, const std::vector<IndexFootprint>& indexes,
    std::stop_token stop) {
    const auto& layout = *config.layout;
    const auto& alloc = *config.allocator;
    const std::size_t count = thresholds.size();
    PointAccumulator base;
    std::vector<PointAccumulator> low(count);
    std::vector<PointAccumulator> high(count);
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

    // Keys whose shape depends on the threshold: a stale expire field kept at the run's thresholds below
    // a bound (KeyState::expireAtSeconds, one of the thresholds). Grouped by shape, a group's keys have
    // the field at point i when their bound is above thresholds[i]. Between the group's bounds and its
    // two layouts' switch points its contribution is constant: it is added over those intervals, as
    // from[a] += c and until[b] += c, with point i = ... + sum(from[<= i]) - sum(until[<= i]).
    std::vector<PointAccumulator> from(count + 1), until(count + 1);
    auto addGroups = [&](const std::vector<ThresholdShapeHistogram::Entry>& counts, auto&& add) {
        // Sorted by shape, buffer, then bound: each shape and buffer's entries are consecutive.
        for (std::size_t first = 0, last = 0; first < counts.size(); first = last) {
            const std::uint64_t packed = counts[first].shape.shape;
            const std::uint32_t sdsBytes = counts[first].shape.sdsBytes;
            std::map<std::size_t, std::uint64_t> byBound; // bound's threshold index -> keys
            for (last = first;
                 last < counts.size() && counts[last].shape.shape == packed && counts[last].shape.sdsBytes == sdsBytes;
                 ++last)
                byBound[static_cast<std::size_t>(
                    std::lower_bound(thresholds.begin(), thresholds.end(), counts[last].shape.bound)
                    - thresholds.begin())]
                    += counts[last].count;
            KeyShape stale = unpackShape(packed);
            stale.sdsBytes = sdsBytes;
            stale.staleExpire = true;
            KeyShape fresh = stale;
            fresh.staleExpire = false;
            // Where each shape's layout switches (count: never).
            auto switchOf = [&](const KeyShape& shape) {
                const KeyLayout atLast = layout.describe(shape, thresholds.back(), alloc);
                return layout.describe(shape, thresholds.front(), alloc) == atLast ? count : switchIndex(shape, atLast);
            };
            std::vector<std::size_t> cuts { 0, count, switchOf(stale), switchOf(fresh) };
            std::uint64_t total = 0;
            for (const auto& [bound, n] : byBound) {
                cuts.push_back(bound);
                total += n;
            }
            std::sort(cuts.begin(), cuts.end());
            cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
            for (std::size_t c = 0; c + 1 < cuts.size() && cuts[c] < count; ++c) {
                const std::size_t a = cuts[c], b = std::min(cuts[c + 1], count);
                std::uint64_t staleKeys = 0; // bounds above the interval: the field is kept there
                for (auto it = byBound.upper_bound(a); it != byBound.end(); ++it)
                    staleKeys += it->second;
                add(from[a], until[b], stale, staleKeys, thresholds[a]);
                add(from[a], until[b], fresh, total - staleKeys, thresholds[a]);
            }
        }
    };
    addGroups(thresholdKeyspace,
        [&](PointAccumulator& start, PointAccumulator& end, const KeyShape& shape, std::uint64_t n, std::uint32_t t) {
            if (n == 0)
                return;
            const KeyLayout kl = layout.describe(shape, t, alloc);
            start.addKeys(shape, n, kl, alloc);
            end.addKeys(shape, n, kl, alloc);
        });
    addGroups(thresholdGets,
        [&](PointAccumulator& start, PointAccumulator& end, const KeyShape& shape, std::uint64_t n, std::uint32_t t) {
            if (n == 0)
                return;
            const ShapeCost cost = costOf(layout, alloc, shape, t);
            start.addGets(n, cost);
            end.addGets(n, cost);
        });

    const auto allocatorClasses = alloc.classes();
    std::vector<ThresholdPoint> points;
    PointAccumulator highBelow; // sum of high[s] for s <= i
    PointAccumulator intervals; // sum of from[a] for a <= i, less until[b] for b <= i
    for (std::size_t i = 0; i < count; ++i) {
        if (stop.stop_requested())
            return cancelledError();
        highBelow.merge(high[i]);
        PointAccumulator acc = base;
        acc.merge(highBelow);
        intervals.merge(from[i]);
        intervals.remove(until[i]);
        acc.merge(intervals);
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

    const IndexPolicy policy = config.layout->indexPolicy();
    // The buffer a value is first unshared into is decided at one threshold (StringRewriteRule): the run's
    // own, or in a sweep the layout's.
    const std::uint32_t stringThreshold
        = thresholds.size() == 1 ? thresholds.front() : (thresholdParam ? thresholdParam->value : 0);
    // Per-key state is allocated for every key id the trace may hold (the slab model's too, per threshold):
    // a trace that claims billions of keys is refused here with the figures, not left to exhaust the memory.
    const std::uint64_t stateBytes
        = sizeof(KeyState) + (config.slabs ? SlabReplay::kStateBytesPerKey * thresholds.size() : 0);
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
    std::unique_ptr<SlabReplay> slabs;
    if (config.slabs) {
        auto made
            = SlabReplay::create(*config.layout, *config.allocator, thresholds, replay, config.slabs->threadCache);
        if (!made)
            return made.error();
        slabs = std::move(*made);
        replay.setObserver(slabs.get());
    }
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
    if (slabs)
        slabs->settled();

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
    const auto thresholdKeyspace = replay.thresholdKeyspaceShapes().sorted();
    auto thresholdGets = replay.thresholdGetShapes().sorted();
    result.getWeightsFromTrace = !gets.empty() || !thresholdGets.empty();
    if (!result.getWeightsFromTrace) { // no GETs in the trace: every live key read once
        gets = keyspace;
        thresholdGets = thresholdKeyspace;
    }
    result.trace.distinctShapes = keyspace.size() + thresholdKeyspace.size();

    std::vector<IndexFootprint> indexes;
    indexes.push_back(replay.keyspaceTable().footprint(*config.allocator));
    if (const auto* expires = replay.expiresTable(); expires && expires->entries() > 0)
        indexes.push_back(expires->footprint(*config.allocator));
    for (const auto& index : indexes) {
        result.indexRehashing = result.indexRehashing || index.rehashing;
        result.indexBuckets += index.buckets;
        result.indexChildBuckets += static_cast<double>(index.childBuckets);
    }
    auto points
        = evaluateThresholds(config, thresholds, keyspace, gets, thresholdKeyspace, thresholdGets, indexes, stop);
    if (!points)
        return points.error();
    result.points = std::move(*points);
    if (slabs) {
        result.slabTable = slabs->tableSource();
        result.slabThreadCache = config.slabs->threadCache;
        for (ThresholdPoint& p : result.points)
            p.arena = slabs->usageAt(p.threshold);
    }
    if (config.cache) {
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
    }
    if (progress)
        progress->progress(1.0, done);
    return result;
}

} // namespace layoutlab
