// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/allocator_model.h"

#include <numeric>

namespace layoutlab {

double expectedLinesTouched(std::uint64_t readBytes, const RegionAlignment& alignment) {
    if (readBytes == 0)
        return 0.0;
    // Offsets modulo the line repeat with period 64 / gcd(stride, 64); average over whole periods when
    // the region count allows it (it always does for jemalloc slabs, which have no tail), else over all.
    const std::uint64_t strideMod = alignment.stride % kCacheLineBytes;
    const std::uint64_t period = strideMod == 0 ? 1 : kCacheLineBytes / std::gcd(strideMod, kCacheLineBytes);
    const std::uint64_t count = alignment.regionCount == 0 ? 1 : alignment.regionCount;
    const std::uint64_t samples = count % period == 0 ? period : count;
    std::uint64_t lines = 0;
    for (std::uint64_t i = 0; i < samples; ++i) {
        const std::uint64_t offset = (alignment.baseOffset + i * strideMod) % kCacheLineBytes;
        lines += (offset + readBytes + kCacheLineBytes - 1) / kCacheLineBytes;
    }
    return static_cast<double>(lines) / static_cast<double>(samples);
}

} // namespace layoutlab
