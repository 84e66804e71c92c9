// SPDX-License-Identifier: MIT
#pragma once

// jemalloc's size classes as run-time data.
//
// jemalloc computes its classes at configure time (include/jemalloc/internal/sc.h, src/sc.c
// size_classes()): a few "tiny" classes below the quantum, then classes spaced by the quantum up to
// 4 x quantum, then groups of 2^lg_ngroup = 4 classes per doubling:
//
//     size = 2^lgBase + ndelta * 2^lgDelta,   lgDelta = lgBase - lg_ngroup,  ndelta = 1..4
//
//     quantum 16: 8 | 16 32 48 64 | 80 96 112 128 | 160 192 224 256 | 320 ...
//     quantum  8:     8 16 24 32  | 40 48 56 64   | 80 96 112 128   | 160 ...
//
// Classes below 2^(lg_page + lg_ngroup) are "small" and live in slabs: a slab is the least number of
// pages that holds a whole number of regions (src/sc.c slab_size()), regions back to back from the
// page-aligned slab start. Larger classes are page-multiple extents. Here the configure-time macros are
// fields of SizeClassParams, so 4 KiB and 64 KiB pages, or quantum 8 and 16, can be compared in one run.

#include <cstdint>
#include <string>
#include <vector>

namespace layoutlab {

struct SizeClassParams {
    int lgQuantum = 4; // LG_QUANTUM: 4 in Debian's libjemalloc2, 3 in Valkey/Redis deps/Makefile
    int lgPage = 12; // LG_PAGE: 12 (4 KiB); 14 and 16 on some aarch64 builds
    int lgTinyMin = 3; // SC_LG_TINY_MIN (sc.h): the smallest class is 8 bytes
    int lgNgroup = 2; // SC_LG_NGROUP (sc.h): four classes per doubling
    int lgPtrSize = 3; // LG_SIZEOF_PTR on 64-bit targets

    auto operator<=>(const SizeClassParams&) const = default;
};

struct SizeClass {
    int lgBase = 0;
    int lgDelta = 0;
    int ndelta = 0;
    std::uint64_t size = 0; // the usable size a request in this class gets
    bool isSlab = false; // small class (slab-allocated); otherwise a page-multiple large extent
    std::uint32_t slabPages = 0; // pages per slab (small classes only)
    std::uint32_t regionsPerSlab = 0; // regions per slab (small classes only)

    auto operator<=>(const SizeClass&) const = default;
};

class SizeClassTable {
public:
    // jemalloc's construction for these parameters, up to classes of 2^maxLgSize bytes.
    static SizeClassTable fromParams(const SizeClassParams& params, int maxLgSize = 40);
    // An explicit class list (read from a linked jemalloc); classes must be strictly increasing.
    static SizeClassTable fromClasses(std::vector<SizeClass> classes, int lgPage);

    const std::vector<SizeClass>& classes() const { return m_classes; }
    int lgPage() const { return m_lgPage; }
    std::uint64_t largestSmallClass() const;
    std::uint64_t largestClass() const { return m_classes.empty() ? 0 : m_classes.back().size; }

    // Index of the smallest class holding `requested` bytes (requests of 0 get the smallest class,
    // as jemalloc's malloc(0) does). Returns classes().size() when the request is beyond every class.
    std::size_t classIndex(std::uint64_t requested) const;
    std::uint64_t usableSize(std::uint64_t requested) const;

private:
    std::size_t classIndexBySearch(std::uint64_t requested) const;

    std::vector<SizeClass> m_classes;
    int m_lgPage = 12;
    int m_lgNgroup = 2; // SC_LG_NGROUP
    bool m_uniformGroups = false; // every class above the lookup table follows the four-per-doubling rule
    // Fast path, like jemalloc's sz_size2index_tab: one entry per 8 bytes up to kLookupMaxBytes.
    static constexpr std::uint64_t kLookupMaxBytes = 4096; // sc.c sc_data_init(): lg_max_lookup = 12
    std::vector<std::uint16_t> m_lookup;
};

// The number of whole pages jemalloc gives a slab of this region size (src/sc.c slab_size()).
std::uint32_t jemallocSlabPages(int lgPage, std::uint64_t regionSize);

} // namespace layoutlab
