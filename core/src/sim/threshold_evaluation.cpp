// SPDX-License-Identifier: MIT
#include "threshold_evaluation.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

namespace layoutlab {

void setPerKeyFigures(ThresholdPoint& p) {
    p.internalFragmentationBytes = p.usableBytes - p.requestedBytes;
    if (p.keys > 0) {
        const double keys = static_cast<double>(p.keys);
        p.usableBytesPerKey = static_cast<double>(p.usableBytes) / keys;
        p.overheadBytesPerKey = (static_cast<double>(p.usableBytes) - static_cast<double>(p.payloadBytes)) / keys;
        p.allocationsPerKey = static_cast<double>(p.allocations) / keys;
        p.pointerBytesPerKey = static_cast<double>(p.pointerBytes) / keys;
        p.embeddedFraction = static_cast<double>(p.embeddedKeys) / keys;
    }
}

void addCollections(std::vector<ThresholdPoint>& points, const std::vector<CollectionUsage>& collections) {
    for (ThresholdPoint& p : points) {
        for (const CollectionUsage& c : collections) {
            p.keys += c.keys;
            p.payloadBytes += c.payloadBytes;
            p.requestedBytes += static_cast<std::uint64_t>(std::llround(c.requestedBytes));
            p.usableBytes += static_cast<std::uint64_t>(std::llround(c.usableBytes));
            p.allocations += static_cast<std::uint64_t>(std::llround(c.allocations));
        }
        setPerKeyFigures(p);
    }
}

namespace {

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
        setPerKeyFigures(p);
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
} // namespace

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

void addHeldSlabs(
    ThresholdPoint& point, const std::vector<HeldSlabs>& held, const std::vector<AllocatorClass>& allocatorClasses) {
    for (const HeldSlabs& h : held) {
        auto row = std::lower_bound(point.sizeClasses.begin(), point.sizeClasses.end(), h.classBytes,
            [](const SizeClassUsage& c, std::uint64_t bytes) { return c.classBytes < bytes; });
        if (row == point.sizeClasses.end() || row->classBytes != h.classBytes) {
            SizeClassUsage empty;
            empty.classBytes = h.classBytes;
            for (const auto& c : allocatorClasses)
                if (c.size == h.classBytes)
                    empty.regionsPerSlab = c.regionsPerSlab;
            row = point.sizeClasses.insert(row, empty);
        }
        row->heldSlabs = h.slabs;
        row->evictions = h.evictions;
    }
}

} // namespace layoutlab
