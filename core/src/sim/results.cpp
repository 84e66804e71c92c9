// SPDX-License-Identifier: MIT
#include "layoutlab/sim/results.h"

#include <tuple>

namespace layoutlab {

std::size_t leanestPoint(const std::vector<ThresholdPoint>& points) {
    auto rank = [](const ThresholdPoint& p) {
        const double lastLevelMisses = p.missesPerGet.empty() ? 0.0 : p.missesPerGet.back();
        return std::make_tuple(p.usableBytesPerKey, lastLevelMisses, p.linesTouchedPerGet, p.threshold);
    };
    std::size_t best = 0;
    for (std::size_t i = 1; i < points.size(); ++i)
        if (rank(points[i]) < rank(points[best]))
            best = i;
    return best;
}

} // namespace layoutlab
