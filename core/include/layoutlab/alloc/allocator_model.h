// SPDX-License-Identifier: MIT
#pragma once

// An allocator model maps a requested size to what the allocator really hands out, and says where a
// region of that size sits relative to 64-byte cache lines (which decides how many lines a read of it
// touches).

#include "layoutlab/expected.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace layoutlab {

// Where the regions of one size class start, modulo the cache line: region i begins at
// baseOffset + i * stride, for i in [0, regionCount). A large, page-aligned extent is {0, 0, 1}.
struct RegionAlignment {
    std::uint64_t baseOffset = 0;
    std::uint64_t stride = 0;
    std::uint32_t regionCount = 1;

    auto operator<=>(const RegionAlignment&) const = default;
};

// One class of the allocator, as listed by `layoutlab allocators --classes`.
struct AllocatorClass {
    std::uint64_t size = 0; // usable bytes
    std::uint32_t regionsPerSlab = 0; // regions per slab or slab page (0 for page-multiple extents)
    std::uint64_t slabBytes = 0; // bytes per slab or page (0 for extents)
};

class AllocatorModel {
public:
    virtual ~AllocatorModel() = default;

    // Canonical specification, e.g. "jemalloc:quantum=8,page=4096": parsing it gives this model back.
    virtual std::string spec() const = 0;
    virtual std::string description() const = 0;

    // Usable size of an allocation of `requested` bytes; 0 if the allocator cannot satisfy it.
    virtual std::uint64_t usableSize(std::uint64_t requested) const = 0;
    // Bytes the allocation really occupies (usable size plus any per-chunk header, e.g. glibc's 8 bytes).
    virtual std::uint64_t footprintBytes(std::uint64_t requested) const { return usableSize(requested); }
    virtual RegionAlignment alignment(std::uint64_t usable) const = 0;
    virtual std::vector<AllocatorClass> classes() const = 0;
};

using AllocatorPtr = std::shared_ptr<const AllocatorModel>;

// Expected number of distinct 64-byte cache lines spanned by reading `readBytes` bytes from the start
// of a region, averaged over the region's possible offsets.
double expectedLinesTouched(std::uint64_t readBytes, const RegionAlignment& alignment);

inline constexpr std::uint64_t kCacheLineBytes = 64;

} // namespace layoutlab
