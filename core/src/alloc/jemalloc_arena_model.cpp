// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/jemalloc_arena_model.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <optional>

namespace layoutlab {

namespace {
// tcache.c: opt_tcache_nslots_small_min, opt_tcache_nslots_small_max, opt_lg_tcache_nslots_mul,
// opt_tcache_nslots_large, opt_tcache_max (32 KiB), opt_lg_tcache_flush_small_div and _large_div, and the
// fill divisor every bin starts with (tcache_init: lg_fill_div[i] = 1).
constexpr std::uint32_t kCacheSlotsSmallMin = 20;
constexpr std::uint32_t kCacheSlotsSmallMax = 200;
constexpr unsigned kLgCacheSlotsMul = 1;
constexpr std::uint32_t kCacheSlotsLarge = 20;
constexpr std::uint64_t kCacheMaxBytes = 32768;
constexpr unsigned kLgFlushDiv = 1;
constexpr std::uint64_t kGcIncrementBytes = 65536; // tcache.c opt_tcache_gc_incr_bytes

// tcache_ncached_max_compute(): twice the slab's regions, within [min, max], even.
std::uint32_t smallCacheSlots(std::uint32_t regionsPerSlab) {
    const std::uint32_t candidate = regionsPerSlab << kLgCacheSlotsMul;
    const std::uint32_t slots = std::clamp(candidate, kCacheSlotsSmallMin, kCacheSlotsSmallMax);
    return slots % 2 == 0 ? slots : slots + 1;
}
} // namespace

JemallocArenaModel::JemallocArenaModel(const SizeClassTable& table, Options options)
    : m_table(table)
    , m_options(options) {
    for (const SizeClass& c : classes()) {
        if (!c.isSlab)
            break;
        Bin bin;
        bin.regionsPerSlab = std::max<std::uint32_t>(c.regionsPerSlab, 1);
        bin.slabPages = std::max<std::uint32_t>(c.slabPages, 1);
        bin.bitmapWords = (bin.regionsPerSlab + 63) / 64;
        m_bins.push_back(std::move(bin));
    }
    for (const SizeClass& c : classes()) {
        if (c.size % (std::uint64_t { 1 } << m_table.lgPage()) == 0)
            m_pageClasses.push_back(c.size);
        if (!c.isSlab && m_largeMinBytes == 0)
            m_largeMinBytes = c.size;
    }
    m_cache.resize(classes().size());
    if (options.threadCache)
        for (std::size_t i = 0; i < classes().size(); ++i) {
            if (i < m_bins.size())
                m_cache[i].capacity = smallCacheSlots(m_bins[i].regionsPerSlab);
            else if (classes()[i].size <= kCacheMaxBytes)
                m_cache[i].capacity = kCacheSlotsLarge;
            if (classes()[i].size <= kCacheMaxBytes)
                m_cachedClasses = static_cast<std::uint32_t>(i + 1); // nhbins = sz_size2index(tcache_maxclass) + 1
        }
    for (const StartBin& start : options.startBins)
        seed(start);
    m_startAllocatedBytes = m_allocatedBytes;
    m_startActivePages = m_activePages;
    m_peakAllocatedBytes = m_allocatedBytes;
    m_peakActivePages = m_activePages;
}

void JemallocArenaModel::seed(const StartBin& start) {
    // The bin of that region size, if this table has one (another build's bins are left out).
    std::uint32_t index = 0;
    while (index < m_bins.size() && classes()[index].size != start.regionBytes)
        ++index;
    if (index == m_bins.size() || start.slabs == 0)
        return;
    // The fill size the thread cache's GC has left the bin at, from its counters: each GC flush halves it
    // (tcache.c tcache_gc_small: lg_fill_div + 1), and a GC visit after a refill doubles it again
    // (tcache_gc_event_handler, where bin_refilled), which the first fill, made at the default, cannot. On a
    // server whose cache a drive has drained (drainThreadCache), most bins were flushed a few times and
    // filled once: a fill of an eighth or a sixteenth of the bin's slots, where a fresh thread's is half.
    if (CacheBin& cache = m_cache[index]; cache.capacity != 0) {
        const std::uint64_t doublings = start.fills > 0 ? start.fills - 1 : 0;
        for (std::uint64_t halvings = start.flushes > doublings ? start.flushes - doublings : 0;
             halvings > 0 && (cache.capacity >> (cache.lgFillDiv + 1)) >= 1; --halvings)
            ++cache.lgFillDiv;
    }
    Bin& bin = m_bins[index];
    // Its slabs made, the regions spread evenly over them (a slab holds one at least: an empty one would have
    // left the bin); the last one is slabcur, the others non-full where they have room. Where the free
    // regions lie does not change how many new slabs the trace needs (every free region of a bin is taken
    // before a fresh slab, arena_bin_malloc_no_fresh_slab), and the start's regions are never freed.
    const std::uint64_t regions
        = std::clamp<std::uint64_t>(start.regions, start.slabs, start.slabs * bin.regionsPerSlab);
    for (std::uint64_t n = 0; n < start.slabs; ++n) {
        const std::uint32_t slab = newSlab(bin);
        const std::uint64_t here = regions / start.slabs + (n < regions % start.slabs ? 1 : 0);
        bin.current = slab;
        for (std::uint64_t r = 0; r < here; ++r)
            binAllocate(index);
        if (bin.slabs[slab].nfree > 0 && n + 1 < start.slabs) {
            bin.nonfull.insert({ bin.slabs[slab].firstPage, slab });
            bin.slabs[slab].inNonfull = true;
        }
    }
}

void JemallocArenaModel::countForGc(std::uint64_t& sinceEvent, std::uint64_t bytes) {
    if (m_cachedClasses == 0)
        return;
    sinceEvent += bytes;
    if (sinceEvent >= kGcIncrementBytes) {
        sinceEvent = 0; // the next event's wait counts from this one
        gcEvent();
    }
}

void JemallocArenaModel::gcEvent() {
    // tcache.c tcache_event: one bin, in turn.
    const std::uint32_t index = m_nextGcBin;
    CacheBin& cache = m_cache[index];
    const bool small = index < m_bins.size();
    if (cache.capacity != 0) {
        if (cache.lowWater > 0) {
            // tcache_gc_small / tcache_gc_large: flush 3/4 of the regions below the low-water mark.
            flushOldest(index, cache.lowWater - (cache.lowWater >> 2));
            if (small && (cache.capacity >> (cache.lgFillDiv + 1)) >= 1)
                ++cache.lgFillDiv;
        } else if (small && cache.refilled) {
            if (cache.lgFillDiv > 1)
                --cache.lgFillDiv;
            cache.refilled = false;
        }
        cache.lowWater = cache.stack.size(); // cache_bin_low_water_set
    }
    m_nextGcBin = (m_nextGcBin + 1) % m_cachedClasses;
}

void JemallocArenaModel::flushOldest(std::uint32_t classIndex, std::size_t count) {
    CacheBin& cache = m_cache[classIndex];
    count = std::min(count, cache.stack.size());
    for (std::size_t n = 0; n < count; ++n) {
        if (classIndex < m_bins.size())
            binRelease(cache.stack[n]);
        else
            largeRelease(cache.stack[n]);
    }
    cache.stack.erase(cache.stack.begin(), cache.stack.begin() + static_cast<std::ptrdiff_t>(count));
}

JemallocArenaModel::Handle JemallocArenaModel::allocateClass(std::uint32_t index) {
    assert(index < classes().size());
    CacheBin& cache = m_cache[index];
    Handle h;
    if (cache.capacity == 0) {
        h = index < m_bins.size() ? binAllocate(index) : largeAllocate(index);
    } else if (cache.stack.empty() && index >= m_bins.size()) {
        h = largeAllocate(index); // tcache_alloc_large: a miss goes to the arena, one extent
        cache.lowWater = 0;
    } else {
        if (cache.stack.empty()) {
            // tcache_alloc_small_hard -> arena_cache_bin_fill_small: a batch, popped in the order filled.
            const std::uint32_t fill = std::max<std::uint32_t>(cache.capacity >> cache.lgFillDiv, 1);
            for (std::uint32_t n = 0; n < fill; ++n)
                cache.stack.push_back(binAllocate(index));
            std::reverse(cache.stack.begin(), cache.stack.end());
            cache.refilled = true;
            cache.lowWater = 0; // it ran empty
        }
        h = cache.stack.back();
        cache.stack.pop_back();
        cache.lowWater = std::min(cache.lowWater, cache.stack.size());
    }
    countForGc(m_allocatedSinceGc, classes()[index].size);
    return h;
}

void JemallocArenaModel::release(Handle handle) {
    CacheBin& cache = m_cache[handle.classIndex];
    if (cache.capacity != 0) {
        // tcache_bin_flush_small/large: down to ncached_max >> flush_div, the longest cached first.
        if (cache.stack.size() >= cache.capacity)
            flushOldest(handle.classIndex, cache.stack.size() - (cache.capacity >> kLgFlushDiv));
        cache.stack.push_back(handle);
    } else if (handle.classIndex < m_bins.size()) {
        binRelease(handle);
    } else {
        largeRelease(handle);
    }
    countForGc(m_deallocatedSinceGc, classes()[handle.classIndex].size);
}

JemallocArenaModel::Handle JemallocArenaModel::binAllocate(std::uint32_t classIndex) {
    Bin& bin = m_bins[classIndex];
    // arena_bin_malloc_no_fresh_slab -> arena_bin_refill_slabcur_no_fresh_slab: a full slabcur goes to
    // the full slabs, the first non-full slab takes its place; none: a fresh slab.
    if (bin.current < 0 || bin.slabs[static_cast<std::size_t>(bin.current)].nfree == 0) {
        if (!bin.nonfull.empty()) {
            const auto first = bin.nonfull.begin();
            bin.current = first->second;
            bin.slabs[first->second].inNonfull = false;
            bin.nonfull.erase(first);
        } else {
            bin.current = newSlab(bin);
        }
    }
    const auto slab = static_cast<std::uint32_t>(bin.current);
    Slab& s = bin.slabs[slab];
    // bitmap_sfu: the lowest free region.
    std::uint64_t* words = &bin.freeBits[std::size_t { slab } * bin.bitmapWords];
    std::uint32_t region = 0;
    for (std::uint32_t w = 0; w < bin.bitmapWords; ++w)
        if (words[w] != 0) {
            const auto bit = static_cast<std::uint32_t>(std::countr_zero(words[w]));
            words[w] &= words[w] - 1;
            region = w * 64 + bit;
            break;
        }
    --s.nfree;
    m_allocatedBytes += classes()[classIndex].size;
    notePeak();
    return { classIndex, slab * bin.regionsPerSlab + region };
}

void JemallocArenaModel::binRelease(Handle handle) {
    Bin& bin = m_bins[handle.classIndex];
    const std::uint32_t slab = handle.slot / bin.regionsPerSlab;
    const std::uint32_t region = handle.slot % bin.regionsPerSlab;
    Slab& s = bin.slabs[slab];
    std::uint64_t& word = bin.freeBits[std::size_t { slab } * bin.bitmapWords + region / 64];
    assert((word & (std::uint64_t { 1 } << (region % 64))) == 0 && "a region freed twice");
    word |= std::uint64_t { 1 } << (region % 64);
    ++s.nfree;
    m_allocatedBytes -= classes()[handle.classIndex].size;
    const bool isCurrent = bin.current == static_cast<std::int64_t>(slab);
    if (s.nfree == bin.regionsPerSlab) {
        // arena_dalloc_bin_locked_handle_newly_empty: out of the bin (arena_dissociate_bin_slab), pages
        // back to the extent allocator (arena_slab_dalloc).
        if (isCurrent)
            bin.current = -1;
        else if (s.inNonfull)
            bin.nonfull.erase({ s.firstPage, slab });
        s.inNonfull = false;
        givePages(s.firstPage, bin.slabPages);
        bin.unusedSlabs.push_back(slab);
    } else if (s.nfree == 1 && !isCurrent) {
        // arena_dalloc_bin_locked_handle_newly_nonempty -> arena_bin_lower_slab.
        lowerSlab(bin, slab);
    }
}

void JemallocArenaModel::lowerSlab(Bin& bin, std::uint32_t slab) {
    Slab& s = bin.slabs[slab];
    if (bin.current >= 0) {
        const auto current = static_cast<std::uint32_t>(bin.current);
        Slab& c = bin.slabs[current];
        if (c.firstPage > s.firstPage) { // edata_snad_comp(slabcur, slab) > 0: the older slab is slabcur
            if (c.nfree > 0) {
                bin.nonfull.insert({ c.firstPage, current });
                c.inNonfull = true;
            }
            bin.current = slab;
            return;
        }
    }
    bin.nonfull.insert({ s.firstPage, slab });
    s.inNonfull = true;
}

std::uint32_t JemallocArenaModel::newSlab(Bin& bin) {
    std::uint32_t slab;
    if (!bin.unusedSlabs.empty()) {
        slab = bin.unusedSlabs.back();
        bin.unusedSlabs.pop_back();
    } else {
        slab = static_cast<std::uint32_t>(bin.slabs.size());
        bin.slabs.emplace_back();
        bin.freeBits.resize(bin.freeBits.size() + bin.bitmapWords);
    }
    Slab& s = bin.slabs[slab];
    s.firstPage = takePages(bin.slabPages);
    s.nfree = bin.regionsPerSlab;
    s.inNonfull = false;
    // bitmap_init(..., fill = false): every region free.
    std::uint64_t* words = &bin.freeBits[std::size_t { slab } * bin.bitmapWords];
    for (std::uint32_t w = 0; w < bin.bitmapWords; ++w) {
        const std::uint32_t bits = std::min<std::uint32_t>(64, bin.regionsPerSlab - w * 64);
        words[w] = bits == 64 ? ~std::uint64_t { 0 } : (std::uint64_t { 1 } << bits) - 1;
    }
    return slab;
}

JemallocArenaModel::Handle JemallocArenaModel::largeAllocate(std::uint32_t classIndex) {
    const std::uint64_t pageBytes = std::uint64_t { 1 } << m_table.lgPage();
    const std::uint64_t usable = classes()[classIndex].size;
    const std::uint64_t pages = (usable + pageBytes - 1) / pageBytes + (m_options.largePad ? 1 : 0);
    std::uint32_t extent;
    if (!m_unusedLarge.empty()) {
        extent = m_unusedLarge.back();
        m_unusedLarge.pop_back();
    } else {
        extent = static_cast<std::uint32_t>(m_large.size());
        m_large.emplace_back();
    }
    m_large[extent] = { takePages(pages), pages };
    m_allocatedBytes += usable;
    notePeak();
    return { classIndex, extent };
}

void JemallocArenaModel::largeRelease(Handle handle) {
    const Large large = m_large[handle.slot];
    m_allocatedBytes -= classes()[handle.classIndex].size;
    givePages(large.firstPage, large.pages);
    m_unusedLarge.push_back(handle.slot);
}

// sz_psz_quantize_floor / _ceil, as the page-size class index (sz_psz2ind) of the result: an extent of
// `pages` pages is kept in its floor class, and a request searches from its ceil class.
std::uint32_t JemallocArenaModel::pageClassOf(std::uint64_t pages, bool ceil) const {
    const std::uint64_t pageBytes = std::uint64_t { 1 } << m_table.lgPage();
    const std::uint64_t pad = m_options.largePad ? pageBytes : 0;
    const std::uint64_t size = pages << m_table.lgPage();
    auto index = [this](std::uint64_t bytes) {
        return static_cast<std::uint32_t>(
            std::lower_bound(m_pageClasses.begin(), m_pageClasses.end(), bytes) - m_pageClasses.begin());
    };
    auto sizeOf
        = [this](std::uint32_t i) { return i < m_pageClasses.size() ? m_pageClasses[i] : m_pageClasses.back() * 2; };
    const std::uint32_t p = index(size - pad + 1);
    std::uint64_t quantized = p == 0 ? size : sizeOf(p - 1) + pad;
    if (ceil && quantized < size)
        quantized = sizeOf(index(quantized - pad + 1)) + pad;
    return index(quantized);
}

void JemallocArenaModel::insertFree(std::uint64_t firstPage, std::uint64_t pages) {
    m_freePages.emplace(firstPage, pages);
    m_freeByClass[pageClassOf(pages, false)].insert(firstPage);
}

void JemallocArenaModel::eraseFree(std::uint64_t firstPage, std::uint64_t pages) {
    m_freePages.erase(firstPage);
    const auto cls = m_freeByClass.find(pageClassOf(pages, false));
    cls->second.erase(firstPage);
    if (cls->second.empty())
        m_freeByClass.erase(cls);
}

std::uint64_t JemallocArenaModel::takePages(std::uint64_t pages) {
    m_activePages += pages;
    // eset_first_fit: the lowest extent of the classes from the request's ceil class, up to 64 times the
    // request (opt_lg_extent_max_active_fit); its first pages are used, the rest stays free.
    constexpr unsigned kLgMaxFit = 6;
    const std::uint64_t size = pages << m_table.lgPage();
    std::optional<std::uint64_t> best;
    for (auto it = m_freeByClass.lower_bound(pageClassOf(pages, true)); it != m_freeByClass.end(); ++it) {
        if (it->first < m_pageClasses.size() && (m_pageClasses[it->first] >> kLgMaxFit) > size)
            break;
        if (!best || *it->second.begin() < *best)
            best = *it->second.begin();
    }
    if (best) {
        const std::uint64_t have = m_freePages.at(*best);
        eraseFree(*best, have);
        if (have > pages)
            insertFree(*best + pages, have - pages);
        return *best;
    }
    const std::uint64_t first = m_topPage;
    m_topPage += pages;
    return first;
}

void JemallocArenaModel::givePages(std::uint64_t firstPage, std::uint64_t pages) {
    m_activePages -= pages;
    // extent_record: only a large extent joins its free neighbours at once (extent_try_coalesce_large).
    if ((pages << m_table.lgPage()) >= m_largeMinBytes) {
        auto next = m_freePages.lower_bound(firstPage);
        if (next != m_freePages.end() && next->first == firstPage + pages) {
            const auto [at, length] = *next;
            eraseFree(at, length);
            pages += length;
        }
        next = m_freePages.lower_bound(firstPage);
        if (next != m_freePages.begin()) {
            const auto [at, length] = *std::prev(next);
            if (at + length == firstPage) {
                eraseFree(at, length);
                firstPage = at;
                pages += length;
            }
        }
    }
    insertFree(firstPage, pages);
}

void JemallocArenaModel::notePeak() {
    m_peakAllocatedBytes = std::max(m_peakAllocatedBytes, m_allocatedBytes);
    m_peakActivePages = std::max(m_peakActivePages, m_activePages);
}

} // namespace layoutlab
