// SPDX-License-Identifier: MIT
#pragma once

// One jemalloc 5.3 arena as it lives through a trace: which pages it keeps active after deletes and
// overwrites, not only what its size classes round away.
//
// A small class ("bin") hands out regions from slabs of `slabPages` pages holding `regionsPerSlab`
// regions (the build's own table, from mallctl arenas.bin.<i>.* when linked, else sc.c's construction):
//
//     bin:  slabcur ──> [r0 r1 r2 ... r(n-1)]   the slab regions come from, first free region first
//           nonfull:    heap of slabs with a free region, oldest/lowest (sn, address) first
//           full:       slabs with none (an auto arena does not even list them)
//
// A slab is active from its first region to the free of its last: a slab with one live region keeps all
// its pages, which is why a random half of the keys deleted frees almost nothing. A large allocation is
// an extent of its usable size plus one page when the build is cache-oblivious (sz_large_pad), active
// until freed. Optionally a thread cache sits in front, as in a server's main thread: LIFO per class,
// filled in batches from the bin and flushed, oldest first, when full.
//
// Rules, each from jemalloc 5.3 (deps/jemalloc in every Valkey tree):
//  - a region: arena_slab_reg_alloc -> bitmap_sfu, the lowest free region of bin->slabcur;
//  - slabcur exhausted: arena_bin_refill_slabcur_no_fresh_slab takes the first of slabs_nonfull
//    (edata_heap ordered by edata_snad_comp: serial number, then address), else
//    arena_bin_refill_slabcur_with_fresh_slab makes a new slab (arena_slab_alloc);
//  - a free: arena_dalloc_bin_locked_step; a slab that becomes empty leaves the bin and its pages stop
//    being active (arena_dalloc_bin_locked_handle_newly_empty -> arena_slab_dalloc -> pa_dalloc); a full
//    slab that gains a free region goes back by arena_bin_lower_slab, which makes it slabcur when it is
//    older/lower than slabcur;
//  - pages for a slab or large extent: the extent allocator reuses freed (dirty) pages first: of the
//    free extents in page-size classes from the request's (sz_psz_quantize_ceil) up to 64 times it
//    (opt_lg_extent_max_active_fit 6), the lowest (serial number, address) one (eset.c eset_first_fit),
//    splitting off the pages it needs from its start (extent.c extent_split_interior); only then pages
//    never used. A freed extent joins its free neighbours only when it is large (extent_record: the dirty
//    cache delays coalescing, except for extents of SC_LARGE_MINCLASS or more). Serial numbers follow
//    the order address space was obtained, so one address order stands for both here. Not modelled: the
//    decay that purges dirty pages after dirty_decay_ms, which depends on time, not on the trace;
//  - large: arena_extent_alloc_large, esize = usize + sz_large_pad (sz.c sz_boot: PAGE when
//    opt_cache_oblivious, the default);
//  - thread cache: tcache.c tcache_ncached_max_compute (nregs << opt_lg_tcache_nslots_mul 1, clamped to
//    [opt_tcache_nslots_small_min 20, opt_tcache_nslots_small_max 200]; large classes up to
//    opt_tcache_max 32 KiB: opt_tcache_nslots_large 20), tcache_alloc_small_hard fills
//    ncached_max >> lg_fill_div (1) regions, tcache_dalloc_small/large flush down to
//    ncached_max >> opt_lg_tcache_flush_{small,large}_div (1) when full, the flush taking the entries
//    cached longest (cache_bin_init_ptr_array_for_flush);
//  - the thread cache's GC: every opt_tcache_gc_incr_bytes (64 KiB) of the thread's allocations, and again of
//    its deallocations (thread_event.c, the tcache_gc and tcache_gc_dalloc events; a realloc counts both, moved
//    or not: reallocated()), tcache_event visits the
//    next bin in turn (next_gc_bin, over every class up to tcache_max): with a low-water mark above 0 (the
//    fewest regions the bin held since its last visit) it flushes 3/4 of those, the longest cached first,
//    and halves the bin's fill (tcache_gc_small: lg_fill_div++; tcache_gc_large); a bin that was refilled
//    and ran empty doubles it back (lg_fill_div--, not below 1). The events count this model's allocations
//    only: the server's own (buffers, replies) shift them a little.

#include "layoutlab/alloc/size_class_table.h"

#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace layoutlab {

class JemallocArenaModel {
public:
    // A bin as a server holds it before the trace: `slabs` slabs (curslabs) holding `regions` live regions
    // (curregs) of `regionBytes` each, as MEMORY MALLOC-STATS lists them.
    struct StartBin {
        std::uint64_t regionBytes = 0;
        std::uint64_t regions = 0;
        std::uint64_t slabs = 0;
        // The thread caches' fills from the bin and flushes into it so far (nfills, nflushes): what the
        // bin's fill size has become (seed()).
        std::uint64_t fills = 0;
        std::uint64_t flushes = 0;
        bool operator==(const StartBin&) const = default;
    };
    struct Options {
        bool threadCache = false; // a server's main thread: yes; the reference engine's MALLOCX_TCACHE_NONE: no
        bool largePad = true; // opt_cache_oblivious: a large extent gets one more page
        // What the arena holds before the trace (none: empty). Its regions stay; their slabs' free regions
        // take the trace's first allocations of their class. The figures below count from it.
        std::vector<StartBin> startBins;
    };
    // What one allocation got: its class and, for a small class, the slab and region; for a large
    // one, the extent. Valid until released.
    struct Handle {
        std::uint32_t classIndex = 0;
        std::uint32_t slot = 0; // small: slab * regionsPerSlab + region; large: extent number

        bool operator==(const Handle&) const = default;
    };

    JemallocArenaModel(const SizeClassTable& table, Options options);

    // Fails only when the request is beyond every class (the caller checks that with usableSize first).
    Handle allocate(std::uint64_t requested) { return allocateClass(classOf(requested)); }
    // The same, by the class's index in the table (classOf), for callers that keep it.
    Handle allocateClass(std::uint32_t classIndex);
    std::uint32_t classOf(std::uint64_t requested) const {
        return static_cast<std::uint32_t>(m_table.classIndex(requested));
    }
    void release(Handle handle);
    // Reallocations that stayed where they were, of `usableBytes` in all: no region moves, but the thread's
    // allocated and deallocated bytes both grow by them (jemalloc.c do_rallocx: thread_alloc_event(usize),
    // thread_dalloc_event(old_usize), in place or not), which brings the thread cache's GC events sooner.
    void reallocated(std::uint64_t usableBytes) {
        countForGc(m_allocatedSinceGc, usableBytes);
        countForGc(m_deallocatedSinceGc, usableBytes);
    }

    // stats.allocated: usable bytes handed out of the bins and large extents (regions in the thread
    // cache included, as jemalloc counts them), beyond the start bins'.
    std::uint64_t allocatedBytes() const { return m_allocatedBytes - m_startAllocatedBytes; }
    // stats.active: pages of slabs with a live or cached region, and of large extents, beyond the start
    // bins' slabs.
    std::uint64_t activeBytes() const { return (m_activePages - m_startActivePages) << m_table.lgPage(); }
    std::uint64_t peakAllocatedBytes() const { return m_peakAllocatedBytes - m_startAllocatedBytes; }
    std::uint64_t peakActiveBytes() const { return (m_peakActivePages - m_startActivePages) << m_table.lgPage(); }
    // The small classes (bins), and the slabs bin `bin` holds now (with a live or cached region).
    std::uint32_t binCount() const { return static_cast<std::uint32_t>(m_bins.size()); }
    std::uint64_t slabsHeld(std::uint32_t bin) const {
        return m_bins[bin].slabs.size() - m_bins[bin].unusedSlabs.size();
    }

private:
    struct Slab {
        std::uint64_t firstPage = 0; // its address, in pages
        std::uint32_t nfree = 0;
        bool inNonfull = false;
    };
    struct Bin {
        std::uint32_t regionsPerSlab = 0;
        std::uint32_t slabPages = 0;
        std::uint32_t bitmapWords = 0;
        std::vector<Slab> slabs;
        std::vector<std::uint64_t> freeBits; // per slab, bitmapWords words: a set bit is a free region
        std::vector<std::uint32_t> unusedSlabs; // numbers of slabs given back, for the next new slab
        std::int64_t current = -1; // slabcur
        std::set<std::pair<std::uint64_t, std::uint32_t>> nonfull; // (first page, slab number)
    };
    struct Large {
        std::uint64_t firstPage = 0;
        std::uint64_t pages = 0;
    };
    struct CacheBin {
        std::uint32_t capacity = 0; // ncached_max (0: not cached)
        std::vector<Handle> stack; // back = the most recently cached
        std::size_t lowWater = 0; // the fewest regions held since the GC last visited
        unsigned lgFillDiv = 1; // tcache_slow->lg_fill_div: a fill takes capacity >> lgFillDiv
        bool refilled = false; // tcache_slow->bin_refilled
    };

    // The thread's allocated or deallocated bytes grew by `bytes`: the GC's event when they pass its wait.
    void countForGc(std::uint64_t& sinceEvent, std::uint64_t bytes);
    void gcEvent();
    // Gives the `count` longest-cached regions of `bin` back to the arena.
    void flushOldest(std::uint32_t classIndex, std::size_t count);
    Handle binAllocate(std::uint32_t classIndex);
    void binRelease(Handle handle);
    Handle largeAllocate(std::uint32_t classIndex);
    void largeRelease(Handle handle);
    std::uint32_t newSlab(Bin& bin);
    void lowerSlab(Bin& bin, std::uint32_t slab);
    std::uint64_t takePages(std::uint64_t pages);
    void givePages(std::uint64_t firstPage, std::uint64_t pages);
    void notePeak();

    const std::vector<SizeClass>& classes() const { return m_table.classes(); }

    SizeClassTable m_table;
    Options m_options;
    std::vector<Bin> m_bins; // one per small class
    std::vector<CacheBin> m_cache; // one per class (thread cache)
    std::uint32_t m_cachedClasses = 0; // nhbins: the classes up to tcache_max
    std::uint32_t m_nextGcBin = 0;
    std::uint64_t m_allocatedSinceGc = 0;
    std::uint64_t m_deallocatedSinceGc = 0;
    std::vector<Large> m_large;
    std::vector<std::uint32_t> m_unusedLarge;
    std::uint32_t pageClassOf(std::uint64_t pages, bool ceil) const;
    void insertFree(std::uint64_t firstPage, std::uint64_t pages);
    void eraseFree(std::uint64_t firstPage, std::uint64_t pages);

    std::map<std::uint64_t, std::uint64_t> m_freePages; // first page -> pages
    std::map<std::uint32_t, std::set<std::uint64_t>> m_freeByClass; // page-size class -> first pages
    std::vector<std::uint64_t> m_pageClasses; // sz_pind2sz: the classes that are page multiples, in bytes
    std::uint64_t m_largeMinBytes = 0; // SC_LARGE_MINCLASS
    std::uint64_t m_topPage = 0; // pages never handed out start here
    std::uint64_t m_allocatedBytes = 0;
    std::uint64_t m_activePages = 0;
    std::uint64_t m_peakAllocatedBytes = 0;
    std::uint64_t m_peakActivePages = 0;
    std::uint64_t m_startAllocatedBytes = 0; // the start bins'
    std::uint64_t m_startActivePages = 0;
    void seed(const StartBin& start);
};

} // namespace layoutlab
