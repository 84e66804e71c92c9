// SPDX-License-Identifier: MIT
#include "layoutlab/sim/results.h"

namespace layoutlab {

std::size_t leanestPoint(const std::vector<ThresholdPoint>& points) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < points.size(); ++i) {
        const ThresholdPoint& p = points[i];
        const ThresholdPoint& b = points[best];
        const bool fewerLines = p.linesTouchedPerGet < b.linesTouchedPerGet - 1e-9;
        const bool sameLines = !fewerLines && p.linesTouchedPerGet <= b.linesTouchedPerGet + 1e-9;
        if (p.usableBytes < b.usableBytes
            || (p.usableBytes == b.usableBytes && (fewerLines || (sameLines && p.threshold < b.threshold))))
            best = i;
    }
    return best;
}

const ThresholdPoint* shippedPoint(const std::vector<ThresholdPoint>& points, std::optional<std::uint32_t> configured) {
    if (points.empty())
        return nullptr;
    if (!configured)
        return &points.front();
    for (const auto& p : points)
        if (p.threshold == *configured)
            return &p;
    return nullptr;
}

const ThresholdPoint* shippedPoint(const SimulationResult& result) {
    return shippedPoint(result.points,
        result.thresholdName.empty() ? std::nullopt : std::optional<std::uint32_t>(result.configuredThreshold));
}

} // namespace layoutlab
