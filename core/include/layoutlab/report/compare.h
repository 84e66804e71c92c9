// SPDX-License-Identifier: MIT
#pragma once

// Two runs' points side by side: matched by threshold, so that a metric can be differenced point by
// point (`layoutlab-gui`'s Compare view; runs without a threshold match on their single point).

#include "layoutlab/sim/results.h"

#include <optional>

namespace layoutlab {

struct PointPair {
    std::uint32_t threshold = 0;
    const ThresholdPoint* a = nullptr; // null when run A has no point at this threshold
    const ThresholdPoint* b = nullptr;
};

// The union of both runs' thresholds in increasing order, each with the point of each run there.
std::vector<PointPair> pairByThreshold(const std::vector<ThresholdPoint>& a, const std::vector<ThresholdPoint>& b);

// (b - a) / a, or nothing when a is 0.
std::optional<double> relativeChange(double a, double b);

} // namespace layoutlab
