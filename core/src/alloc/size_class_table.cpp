// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/size_class_table.h"

#include <algorithm>
#include <cassert>

namespace layoutlab {

std::uint32_t jemallocSlabPages(int lgPage, std::uint64_t regionSize) {
    // src/sc.c slab_size(): the least common multiple of the page and the region size, in pages.
    const std::uint64_t page = std::uint64_t { 1 } << lgPage;
    std::uint64_t slab = page;
    while (slab % regionSize != 0)
        slab += page;
    return static_cast<std::uint32_t>(slab / page);
}

namespace {

SizeClass makeClass(const SizeClassParams& p, int lgBase, int lgDelta, int ndelta) {
    SizeClass c;
    c.lgBase = lgBase;
    c.lgDelta = lgDelta;
    c.ndelta = ndelta;
    c.size = (std::uint64_t { 1 } << lgBase) + (static_cast<std::uint64_t>(ndelta) << lgDelta);
    // src/sc.c size_class(): small ("bin") classes are those below 2^(lg_page + lg_ngroup).
    c.isSlab = c.size < (std::uint64_t { 1 } << (p.lgPage + p.lgNgroup));
    if (c.isSlab) {
        c.slabPages = jemallocSlabPages(p.lgPage, c.size);
        c.regionsPerSlab = static_cast<std::uint32_t>((std::uint64_t { c.slabPages } << p.lgPage) / c.size);
    }
    return c;
}

} // namespace

SizeClassTable SizeClassTable::fromParams(const SizeClassParams& p, int maxLgSize) {
    // A transcription of src/sc.c size_classes(), stopping at classes of 2^maxLgSize bytes.
    std::vector<SizeClass> out;
    const int ngroup = 1 << p.lgNgroup;
    int lgBase = p.lgTinyMin;
    int lgDelta = lgBase;
    int ndelta = 0;
    int ntiny = 0;
    // Tiny classes, below the quantum.
    while (lgBase < p.lgQuantum) {
        out.push_back(makeClass(p, lgBase, lgDelta, ndelta));
        ++ntiny;
        lgDelta = lgBase;
        ++lgBase;
    }
    // First non-tiny (pseudo) group: the first class has the unusual encoding of sc.h.
    if (ntiny != 0) {
        --lgBase;
        ndelta = 1;
        out.push_back(makeClass(p, lgBase, lgDelta, ndelta));
        ++lgBase;
        ++lgDelta;
    }
    while (ndelta < ngroup) {
        out.push_back(makeClass(p, lgBase, lgDelta, ndelta));
        ++ndelta;
    }
    // All remaining groups: four classes per doubling.
    lgBase += p.lgNgroup;
    const int ptrBits = (1 << p.lgPtrSize) * 8;
    while (lgBase < ptrBits - 1 && lgBase < maxLgSize) {
        const int ndeltaLimit = lgBase == ptrBits - 2 ? ngroup - 1 : ngroup;
        for (ndelta = 1; ndelta <= ndeltaLimit; ++ndelta)
            out.push_back(makeClass(p, lgBase, lgDelta, ndelta));
        ++lgBase;
        ++lgDelta;
    }
    return fromClasses(std::move(out), p.lgPage);
}

SizeClassTable SizeClassTable::fromClasses(std::vector<SizeClass> classes, int lgPage) {
    SizeClassTable t;
    t.m_classes = std::move(classes);
    t.m_lgPage = lgPage;
    const std::size_t entries = kLookupMaxBytes / 8 + 1;
    t.m_lookup.resize(entries);
    for (std::size_t i = 0; i < entries; ++i)
        t.m_lookup[i] = static_cast<std::uint16_t>(t.classIndexBySearch(i * 8));
    // The closed form above the lookup table holds when every class above it is 2^lg + k * 2^(lg - 2);
    // check it rather than assume it (a linked library is read, not constructed).
    t.m_uniformGroups = !t.m_classes.empty();
    for (const auto& c : t.m_classes) {
        if (c.size <= kLookupMaxBytes)
            continue;
        const int lg = 63 - __builtin_clzll(c.size - 1);
        const std::uint64_t delta = std::uint64_t { 1 } << (lg - t.m_lgNgroup);
        if (c.size % delta != 0)
            t.m_uniformGroups = false;
    }
    return t;
}

std::uint64_t SizeClassTable::largestSmallClass() const {
    std::uint64_t largest = 0;
    for (const auto& c : m_classes)
        if (c.isSlab)
            largest = c.size;
    return largest;
}

std::size_t SizeClassTable::classIndexBySearch(std::uint64_t requested) const {
    const auto it = std::lower_bound(m_classes.begin(), m_classes.end(), requested,
        [](const SizeClass& c, std::uint64_t size) { return c.size < size; });
    return static_cast<std::size_t>(it - m_classes.begin());
}

std::size_t SizeClassTable::classIndex(std::uint64_t requested) const {
    if (requested <= kLookupMaxBytes) {
        // Requests round up to the lookup granule (8 bytes, the smallest class): sz_size2index_lookup.
        const std::size_t index = m_lookup[(requested + 7) >> 3];
        assert(index == classIndexBySearch(requested));
        return index;
    }
    return classIndexBySearch(requested);
}

std::uint64_t SizeClassTable::usableSize(std::uint64_t requested) const {
    if (requested > kLookupMaxBytes && m_uniformGroups) {
        // sz_s2u_compute(): above the lookup table, a request in (2^lg, 2^(lg+1)] rounds up to a multiple
        // of 2^(lg - lg_ngroup), because every group has four equally spaced classes.
        if (requested > m_classes.back().size)
            return 0;
        const int lg = 63 - __builtin_clzll(requested - 1);
        const std::uint64_t delta = std::uint64_t { 1 } << (lg - m_lgNgroup);
        const std::uint64_t usable = (requested + delta - 1) & ~(delta - 1);
        assert(usable == m_classes[classIndexBySearch(requested)].size);
        return usable;
    }
    const auto index = classIndex(requested);
    return index < m_classes.size() ? m_classes[index].size : 0;
}

} // namespace layoutlab
