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

} // namespace layoutlab
