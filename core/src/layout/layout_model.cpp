// SPDX-License-Identifier: MIT
#include "layoutlab/layout/layout_model.h"

#include <algorithm>

namespace layoutlab {

std::uint32_t firstEmbeddingThreshold(
    const LayoutModel& layout, const KeyShape& shape, const AllocatorModel& allocator) {
    const auto param = layout.threshold();
    if (!param)
        return layout.describe(shape, 0, allocator).embedded() ? 0 : LayoutModel::kNoThresholdBound;
    auto embedded = [&](std::uint32_t t) { return layout.describe(shape, t, allocator).embedded(); };
    if (!embedded(param->max))
        return LayoutModel::kNoThresholdBound;
    if (embedded(param->min))
        return 0; // embedded wherever a threshold may be asked
    // The LayoutModel contract: a shape's layout changes at most once as the threshold grows.
    std::uint32_t lo = param->min, hi = param->max; // !embedded(lo), embedded(hi)
    while (hi - lo > 1) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        (embedded(mid) ? hi : lo) = mid;
    }
    return hi;
}

std::uint32_t LayoutModel::staleExpireKeptBelow(
    const KeyShape& before, const KeyShape& after, Op op, const AllocatorModel& allocator) const {
    return std::min(firstEmbeddingThreshold(*this, before, allocator), staleExpireNewValueBound(after, op));
}

} // namespace layoutlab
