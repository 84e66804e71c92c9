// SPDX-License-Identifier: MIT
#include "layoutlab/report/advice.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// The level names of --json: l1, l2 (with three levels), llc (the last).
std::string missName(std::size_t level, std::size_t levels) {
    if (level + 1 == levels)
        return "llc_misses_per_get";
    return fmt::format("l{}_misses_per_get", level + 1);
}

// value / best - 1, or 0 when the best is 0 (then every point that is also 0 costs nothing, and others
// cost their value: a fraction of one miss or line).
double excess(double value, double best) {
    return best > 0 ? value / best - 1.0 : value;
}
} // namespace

Status checkWeights(const AdviceWeights& weights) {
    if (weights.memory < 0 || weights.misses < 0 || (weights.memory == 0 && weights.misses == 0))
        return usageError("the weights must be non-negative and not both zero", field::kWeights);
    return Ok {};
}

std::size_t Advice::ties() const {
    return static_cast<std::size_t>(
        std::count_if(points.begin(), points.end(), [](const AdvicePoint& p) { return p.tiesWithAdvised; }));
}

namespace {
// Whether `a` and `b` differ by less than `fraction` of the larger, or than `floor`.
bool within(double a, double b, double fraction, double floor = 0) {
    return std::abs(a - b) <= std::max(fraction * std::max(std::abs(a), std::abs(b)), floor) + 1e-12;
}

// Marks the points tied with the cheapest; the shipped threshold among them is advised.
void settleTies(Advice& advice, const SimulationResult& result) {
    const auto& c = advice.points[advice.cheapest];
    const bool lines = advice.accessMetric == "lines_touched_per_get";
    const double missFraction = lines ? advice.uncertainty.linesPerGet : advice.uncertainty.missesPerGet;
    for (auto& p : advice.points)
        p.tiesWithAdvised = within(p.bytesPerKey, c.bytesPerKey, advice.uncertainty.bytesPerKey)
            && within(p.missesPerGet, c.missesPerGet, missFraction, lines ? 0.0 : advice.uncertainty.missesPerGetFloor);
    advice.chosen = advice.cheapest;
    const ThresholdPoint* shipped = result.thresholdName.empty() ? nullptr : shippedPoint(result);
    if (!shipped)
        return;
    const auto i = static_cast<std::size_t>(shipped - result.points.data()); // advice.points follow result.points
    advice.shippedThreshold = shipped->threshold;
    if (advice.points[i].tiesWithAdvised)
        advice.chosen = i;
}
} // namespace

Expected<Advice> advise(
    const SimulationResult& result, const AdviceWeights& weights, const ModelUncertainty& uncertainty) {
    if (result.points.empty())
        return usageError("nothing to advise: the sweep has no points");
    if (auto ok = checkWeights(weights); !ok)
        return ok.error();
    const std::size_t levels = result.points.front().missesPerGet.size();
    Advice advice;
    advice.uncertainty = uncertainty;
    std::optional<std::size_t> level;
    if (levels > 0) {
        level = weights.missLevel.value_or(levels - 1);
        if (*level >= levels)
            return usageError(fmt::format("the cache model has {} levels; there is no level {}", levels, *level + 1),
                field::kMissLevel);
        advice.accessMetric = missName(*level, levels);
    } else if (weights.missLevel) {
        return usageError("a cache level's misses need the cache model", field::kMissLevel);
    } else {
        advice.accessMetric = "lines_touched_per_get";
    }
    // With the slab model the memory axis is what the allocator keeps: every point has it, or none.
    const bool active = std::all_of(
        result.points.begin(), result.points.end(), [](const ThresholdPoint& p) { return p.arena.has_value(); });
    if (active) {
        advice.memoryMetric = "active_bytes_per_key";
        advice.uncertainty.bytesPerKey = uncertainty.activeBytesPerKey;
    }
    for (const auto& p : result.points) {
        AdvicePoint a;
        a.threshold = p.threshold;
        a.usableBytesPerKey = p.usableBytesPerKey;
        a.bytesPerKey = active && p.keys ? static_cast<double>(p.arena->activeBytes) / static_cast<double>(p.keys)
                                         : p.usableBytesPerKey;
        a.missesPerGet = level ? p.missesPerGet[*level] : p.linesTouchedPerGet;
        const auto& points = advice.points;
        if (!points.empty() && a.missesPerGet < points[advice.fewestMisses].missesPerGet)
            advice.fewestMisses = points.size();
        advice.points.push_back(a);
    }
    advice.leanestByUsable = leanestPoint(result.points); // the sweep's own best threshold
    advice.leanest = advice.leanestByUsable;
    if (active) // the fewest active bytes per key; ties as leanestPoint's: fewer lines per GET, the lower threshold
        for (std::size_t i = 0; i < advice.points.size(); ++i) {
            const auto &a = advice.points[i], &l = advice.points[advice.leanest];
            const double lines = result.points[i].linesTouchedPerGet,
                         leanLines = result.points[advice.leanest].linesTouchedPerGet;
            if (a.bytesPerKey < l.bytesPerKey
                || (a.bytesPerKey == l.bytesPerKey
                    && (lines < leanLines || (lines == leanLines && a.threshold < l.threshold))))
                advice.leanest = i;
        }
    const double fewestBytes = advice.points[advice.leanest].bytesPerKey;
    const double fewestMisses = advice.points[advice.fewestMisses].missesPerGet;
    for (std::size_t i = 0; i < advice.points.size(); ++i) {
        auto& a = advice.points[i];
        a.memoryCost = excess(a.bytesPerKey, fewestBytes);
        a.missCost = excess(a.missesPerGet, fewestMisses);
        a.cost = weights.memory * a.memoryCost + weights.misses * a.missCost;
        const auto& c = advice.points[advice.cheapest];
        if (a.cost < c.cost - 1e-12
            || (a.cost <= c.cost + 1e-12
                && (a.bytesPerKey < c.bytesPerKey || (a.bytesPerKey == c.bytesPerKey && a.threshold < c.threshold))))
            advice.cheapest = i;
    }
    settleTies(advice, result);
    return advice;
}

} // namespace layoutlab
