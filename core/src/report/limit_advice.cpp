// SPDX-License-Identifier: MIT
#include "layoutlab/report/limit_advice.h"

#include "layoutlab/layout/collection_layout.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace layoutlab {

std::string limitType(std::string_view limit) {
    return std::string(limit.substr(0, limit.find('-')));
}

std::string_view lookupCommand(std::string_view type) {
    return type == "hash" ? "HGET" : type == "set" ? "SISMEMBER" : type == "zset" ? "ZSCORE" : "LINDEX";
}

double lookupLinesPerElement(const std::vector<CollectionUsage>& collections, std::string_view type) {
    double lines = 0, entries = 0;
    for (const CollectionUsage& c : collections)
        if (c.type == type) {
            lines += c.lookupLines;
            entries += static_cast<double>(c.entries);
        }
    return entries > 0 ? lines / entries : 0.0;
}

namespace {
double excess(double value, double best) {
    return best > 0 ? value / best - 1.0 : value;
}
} // namespace

Expected<LimitAdvice> adviseLimit(
    const LimitSweepResult& sweep, const AdviceWeights& weights, double bytesPerKeyUncertainty) {
    if (sweep.points.empty())
        return usageError("nothing to advise: the sweep has no values", field::kLimitSweep);
    if (auto ok = checkWeights(weights); !ok)
        return ok.error();
    LimitAdvice advice;
    advice.limit = sweep.name;
    advice.type = limitType(sweep.name);
    advice.lookup = lookupCommand(advice.type);
    advice.runValue = sweep.runValue;
    advice.defaultValue = collectionLimit(CollectionLimits {}, sweep.name);
    advice.bytesPerKeyUncertainty = bytesPerKeyUncertainty;
    const bool any = std::any_of(sweep.points.front().collections.begin(), sweep.points.front().collections.end(),
        [&](const CollectionUsage& c) { return c.type == advice.type && c.entries > 0; });
    if (!any)
        return usageError(fmt::format("the trace holds no {} keys with elements at its end: {} changes nothing in it",
                              advice.type, sweep.name),
            field::kLimitSweep);
    for (const LimitPoint& p : sweep.points) {
        LimitAdvicePoint a;
        a.value = p.value;
        a.bytesPerKey = p.point.usableBytesPerKey;
        a.lookupLines = lookupLinesPerElement(p.collections, advice.type);
        advice.points.push_back(a);
    }
    auto& points = advice.points;
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (points[i].bytesPerKey < points[advice.leanest].bytesPerKey)
            advice.leanest = i;
        if (points[i].lookupLines < points[advice.fewestLines].lookupLines)
            advice.fewestLines = i;
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
        auto& a = points[i];
        a.memoryCost = excess(a.bytesPerKey, points[advice.leanest].bytesPerKey);
        a.lookupCost = excess(a.lookupLines, points[advice.fewestLines].lookupLines);
        a.cost = weights.memory * a.memoryCost + weights.misses * a.lookupCost;
        const auto& c = points[advice.cheapest];
        if (a.cost < c.cost - 1e-12 || (a.cost <= c.cost + 1e-12 && a.bytesPerKey < c.bytesPerKey))
            advice.cheapest = i;
    }
    // Ties: bytes within the uncertainty, lines the same (the model's lines follow from the layout alone).
    const auto& c = points[advice.cheapest];
    advice.chosen = advice.cheapest;
    for (std::size_t i = 0; i < points.size(); ++i) {
        auto& a = points[i];
        a.tiesWithAdvised = std::abs(a.bytesPerKey - c.bytesPerKey)
                <= bytesPerKeyUncertainty * std::max(a.bytesPerKey, c.bytesPerKey) + 1e-12
            && std::abs(a.lookupLines - c.lookupLines) <= 1e-9 * std::max(1.0, c.lookupLines);
        if (a.tiesWithAdvised && a.value == advice.defaultValue)
            advice.chosen = i;
    }
    return advice;
}

} // namespace layoutlab
