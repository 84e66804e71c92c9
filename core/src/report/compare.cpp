// SPDX-License-Identifier: MIT
#include "layoutlab/report/compare.h"

#include <map>

namespace layoutlab {

std::vector<PointPair> pairByThreshold(const std::vector<ThresholdPoint>& a, const std::vector<ThresholdPoint>& b) {
    std::map<std::uint32_t, PointPair> byThreshold;
    for (const auto& p : a) {
        auto& pair = byThreshold[p.threshold];
        pair.threshold = p.threshold;
        pair.a = &p;
    }
    for (const auto& p : b) {
        auto& pair = byThreshold[p.threshold];
        pair.threshold = p.threshold;
        pair.b = &p;
    }
    std::vector<PointPair> out;
    out.reserve(byThreshold.size());
    for (const auto& [threshold, pair] : byThreshold)
        out.push_back(pair);
    return out;
}

std::optional<double> relativeChange(double a, double b) {
    if (a == 0)
        return std::nullopt;
    return (b - a) / a;
}

} // namespace layoutlab
