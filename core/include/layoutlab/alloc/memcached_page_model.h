// SPDX-License-Identifier: MIT
#pragma once

// memcached 1.6's slab pages as they live through a trace: which 1 MiB pages each slab class holds, how
// many it has malloc'ed in all, and the pages its mover hands back to the global pool.
//
//     class 1:  [page][page][page]   used chunks + free chunks (a free list, any chunk of any page)
//     class 2:  [page]
//     ...
//     global page pool: [page]       pages the mover took from a class, for the next class that grows
//     total_malloced = pages ever malloc'ed (never given back to the OS)
//
// Rules, each from memcached 1.6 (slabs.c, slab_automove.c, items.c):
//  - a chunk: do_slabs_alloc takes one off the class's free list; with the list empty do_slabs_newslab
//    first gives the class a page, from the global pool (get_page_from_global_pool) or else malloc'ed
//    (memory_allocate; mem_malloced grows by the page), and splits it into free chunks
//    (split_slab_page_into_freelist). Which chunk is taken never changes a page count, so the model keeps
//    counts per class, not chunks;
//  - a free: do_slabs_free puts the chunk back on its class's free list; a page is never given back;
//  - an overwrite allocates the new item before the old one is unlinked and freed (items.c do_item_alloc,
//    then item_replace), as the replay's order of stored-then-freed has it;
//  - the page mover (slab_automove=1, the default): once a second the LRU maintainer thread runs
//    slab_automove_run (items.c lru_maintainer_thread; a run that gave a page to the global pool is followed
//    by the next at once, "be more aggressive"), which walks the classes from the smallest and, at the first
//    class holding more free
//    chunks than MIN_PAGES_FOR_RECLAIM (2.5) pages' worth whose last slab_automove_window (30) runs saw no
//    page added, moves one page of it to the global pool (slabs_reassign(src, 0)). The rebalancer copies
//    the page's live items into free chunks of the same class (slab_rebalance_move, slab_rebalance_alloc),
//    so the class keeps its used chunks and loses a page's worth of free ones. A run first marks a class's
//    window slot dirty when its total_pages grew since the run before, then sums the window: a class that
//    grew at run d gives nothing before run d + window (measured on Debian's 1.6.18: with a window of 3, a
//    class grown at the first run gave its page at the fourth). Classes after the one that moved a page are
//    not visited that run (the loop breaks): their window slots keep what they held;
//  - the memory limit (-m, settings.maxbytes; slabs.c mem_limit): do_slabs_newslab refuses a page once
//    mem_malloced + a page would pass it, unless the class has no page yet or the global pool has one
//    (tryAllocate; the eviction beside the replay, sim/memcached_eviction.h, then frees a chunk);
//  - the second rule, which needs items (a memory limit's eviction owns them: Options::owners): each run
//    records per class whether its COLD LRU evicted since the run before, its share of those evictions,
//    and its COLD tail's age (items.c fill_item_stats_automove). The class whose window-averaged age is the
//    oldest, of those holding more than MIN_PAGES_FOR_SOURCE (2) pages, gives its first page to the
//    youngest class that evicted in more than half the window's runs (or took more than a quarter of the
//    evictions), when that one evicted in this run and its age is under slab_automove_ratio (0.8) of the
//    oldest's, once a whole window has run. Such a move waits for the next second (it does not burst).
//  - with owners the model places chunks as slabs.c does: a class's free chunks are one LIFO list
//    (do_slabs_alloc takes its head, do_slabs_free pushes there; a new page's chunks are pushed in address
//    order, so its last chunk goes first), and a move takes the class's first page (slab_rebalance_start:
//    slab_list[0]). slab_rebalance_move walks that page: its free chunks leave the list, each live item
//    moves to the head of the free list outside the page (slab_rebalance_alloc; the owner links it again
//    as new: do_item_replace), or, with none left, is unlinked (slab_reassign_evictions_nomem). The page
//    then goes to the end of the destination's slab_list and is split into its free list
//    (slab_rebalance_finish), or to the global pool.

#include "layoutlab/alloc/memcached_slabs.h"
#include "layoutlab/expected.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace layoutlab {

// memcached.c refuses a slab_automove_window under 3 ("must be > 2"); 0 here is no page mover. An error naming
// the field (field::kPageMoverWindow) otherwise.
Status checkPageMoverWindow(std::uint32_t window);

// A chunk placed by the model: the page (numbered as pages are malloc'ed) and its place in that page.
struct MemcachedChunk {
    std::uint32_t page = 0;
    std::uint32_t index = 0;
    bool operator==(const MemcachedChunk&) const = default;
};

// The items in the chunks, as the page mover reads and moves them (a memory limit's eviction model).
class MemcachedChunkOwners {
public:
    // items.c fill_item_stats_automove: the class's COLD evictions and HOT outofmemory so far, and the age
    // of its COLD tail (0 when COLD is empty) at `nowSeconds` since the server started.
    struct ClassStats {
        std::uint64_t evicted = 0;
        std::uint64_t outOfMemory = 0;
        std::uint64_t age = 0;
    };
    virtual ~MemcachedChunkOwners() = default;
    virtual ClassStats itemStats(std::uint32_t classId, std::uint64_t nowSeconds) const = 0;
    // The item of `owner` was copied from `from`, on the page being moved, to `to`, and linked again.
    virtual void rescued(std::uint32_t owner, MemcachedChunk from, MemcachedChunk to, std::uint64_t nowSeconds) = 0;
    // No free chunk was left for it: the owner unlinks the item and releases its chunks.
    virtual void lostToPageMove(std::uint32_t owner) = 0;
};

class MemcachedPageModel {
public:
    struct Options {
        // settings.slab_automove_window (memcached.c: 30; -o slab_automove_window=N); 0: no page mover
        // (-o slab_automove=0, or a trace whose clock is not the server's).
        std::uint32_t moverWindow = 30;
        std::uint64_t memoryLimitBytes = 0; // -m (settings.maxbytes); 0: none
        // settings.slab_automove_ratio (memcached.c: 0.8; -o slab_automove_ratio=R).
        double moverAgeRatio = 0.8;
        // The items: chunks are placed (tryPlace, releaseChunk) and the second rule moves pages. None: counts
        // per class only (allocate, release), and only the first rule.
        MemcachedChunkOwners* owners = nullptr;
    };

    MemcachedPageModel(const MemcachedSlabModel& slabs, Options options);

    // A chunk of class `classId` (1-based, as slabs_clsid gives it), `count` times.
    void allocate(std::uint32_t classId, std::uint32_t count = 1);
    void release(std::uint32_t classId, std::uint32_t count = 1);
    // With owners: a chunk of `classId` for `owner`, as tryAllocate gives one (nullopt: refused).
    std::optional<MemcachedChunk> tryPlace(std::uint32_t classId, std::uint32_t owner);
    void releaseChunk(MemcachedChunk chunk);
    // One chunk of class `classId` as slabs_alloc gives it under the memory limit: false when the class has
    // no free chunk and may not have another page (do_slabs_newslab's mem_limit_reached).
    bool tryAllocate(std::uint32_t classId);
    // The trace's clock reached `nowSeconds` since the server started: the mover's runs of the seconds up to
    // it happen now (the first at second 0, when the server starts; then one a second, and a burst of them
    // while they move pages).
    void advanceTo(std::uint64_t nowSeconds);
    // The mover's runs until it moves nothing more, as a server left idle does (the server measured
    // a while after the load).
    void settle();

    // Used chunks times their size (memcached's slab-chunk bytes), and total_malloced (pages malloc'ed).
    std::uint64_t allocatedBytes() const { return m_allocatedBytes; }
    std::uint64_t activeBytes() const { return m_mallocedPages * m_pageBytes; }
    std::uint64_t peakAllocatedBytes() const { return m_peakAllocatedBytes; }
    std::uint64_t peakActiveBytes() const { return m_mallocedPages * m_pageBytes; } // it never shrinks
    std::uint64_t pagesOf(std::uint32_t classId) const { return m_classes.at(classId - 1).pages; }
    std::uint64_t usedChunksOf(std::uint32_t classId) const { return m_classes.at(classId - 1).used; }
    std::uint64_t globalPoolPages() const { return m_poolPages; }
    std::uint64_t mallocedPages() const { return m_mallocedPages; }
    std::uint64_t pagesMoved() const { return m_pagesMoved; } // the `slabs_moved` stat
    std::uint64_t rescues() const { return m_rescues; } // slab_reassign_rescues
    std::uint64_t lostToMoves() const { return m_lostToMoves; } // slab_reassign_evictions_nomem
    std::size_t classCount() const { return m_classes.size(); }

private:
    struct SlabClass {
        std::uint64_t chunkBytes = 0;
        std::uint64_t perPage = 0;
        std::uint64_t pages = 0;
        std::uint64_t used = 0;
        std::uint64_t pagesAtLastRun = 0; // sam_before[n].total_pages
        std::uint64_t evictedAtLastRun = 0; // iam_before[n].evicted
        std::uint64_t outOfMemoryAtLastRun = 0; // iam_before[n].outofmemory
        // With owners: slab_list (page numbers, oldest first) and the free list (its head at the back).
        std::vector<std::uint32_t> slabList;
        std::vector<MemcachedChunk> freeList;
        std::uint64_t free() const { return pages * perPage - used; }
        // free_chunks > chunks_per_page * MIN_PAGES_FOR_RECLAIM, in integers (2.5 = 5 / 2).
        bool overReclaimLine() const { return 2 * free() > 5 * perPage; }
    };
    // slab_automove.c struct window_data: one run's record of one class.
    struct WindowSlot {
        std::uint64_t age = 0;
        float evictedRatio = 0;
        bool dirty = false;
        bool evictedSeen = false;
    };
    struct Page {
        std::uint32_t classId = 0; // 0: the global pool
        std::vector<std::uint32_t> owners; // per chunk: its owner, or kFreeChunk
    };
    static constexpr std::uint32_t kFreeChunk = UINT32_MAX;
    enum class Move { None, ToPool, ToClass };

    // One slab_automove_run at `nowSeconds`, and the move it asks for.
    Move runMover(std::uint64_t nowSeconds);
    // The runs of the next second.
    void runSecond();
    // do_slabs_newslab's page for `c`: from the global pool, else malloc'ed.
    void addPage(std::uint32_t classId);
    // Whether `c` may have another page under the memory limit (do_slabs_newslab).
    bool mayAddPage(const SlabClass& c) const;
    // Whether the items' counts a run reads changed since the last run (a run must record them).
    bool itemsChangedSinceLastRun(std::uint64_t nowSeconds) const;
    // slabs_reassign(src, dst) carried out at once (dst 0: the global pool).
    void movePage(std::uint32_t src, std::uint32_t dst, std::uint64_t nowSeconds);
    void splitIntoFreeList(std::uint32_t page, std::uint32_t classId);
    bool placing() const { return m_options.owners != nullptr; }

    std::vector<SlabClass> m_classes;
    std::uint64_t m_pageBytes;
    Options m_options;
    std::vector<std::uint64_t> m_pagesAtRunStart; // a run's scratch
    std::vector<MemcachedChunkOwners::ClassStats> m_statsAtRunStart; // a run's scratch, with owners
    std::vector<WindowSlot> m_window; // window_data[class * window + slot]
    std::uint64_t m_runs = 0; // window_cur: runs so far
    std::uint64_t m_seconds = 0; // the seconds whose runs have happened
    std::uint64_t m_poolPages = 0;
    std::uint64_t m_mallocedPages = 0;
    std::uint64_t m_pagesMoved = 0;
    std::uint64_t m_rescues = 0;
    std::uint64_t m_lostToMoves = 0;
    std::uint64_t m_allocatedBytes = 0;
    std::uint64_t m_peakAllocatedBytes = 0;
    // With owners: every page malloc'ed, the global pool's (taken from the back), and the page being moved.
    std::vector<Page> m_pageTable;
    std::vector<std::uint32_t> m_poolList;
    std::optional<std::uint32_t> m_leavingPage;
};

} // namespace layoutlab
