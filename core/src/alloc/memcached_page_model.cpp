// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/memcached_page_model.h"

#include <algorithm>
#include <cassert>
#include <fmt/format.h>

namespace layoutlab {

namespace {
// A burst of runs within one second ends when a run moves nothing; this bounds it (every class's pages).
constexpr std::size_t kMaxRunsASecond = std::size_t { 1 } << 32;
// slab_automove.c MIN_PAGES_FOR_SOURCE: a class gives a page to another only while it holds more.
constexpr std::uint64_t kMinPagesForSource = 2;
} // namespace

Status checkPageMoverWindow(std::uint32_t window) {
    if (window == 1 || window == 2)
        return usageError(
            fmt::format("memcached's slab_automove_window is 3 or more (0: no page mover), got {}", window),
            field::kPageMoverWindow);
    return Ok {};
}

MemcachedPageModel::MemcachedPageModel(const MemcachedSlabModel& slabs, Options options)
    : m_pageBytes(slabs.params().pageBytes)
    , m_options(options) {
    for (const MemcachedSlabClass& c : slabs.slabClasses()) {
        SlabClass& added = m_classes.emplace_back();
        added.chunkBytes = c.chunkBytes;
        added.perPage = std::max<std::uint32_t>(c.perSlab, 1);
    }
    m_window.assign(m_classes.size() * std::max<std::uint32_t>(options.moverWindow, 1), WindowSlot {});
}

void MemcachedPageModel::addPage(std::uint32_t classId) {
    // do_slabs_newslab: a page from the global pool first (get_page_from_global_pool: its last), else a new
    // one malloc'ed.
    SlabClass& c = m_classes[classId - 1];
    std::uint32_t page = 0;
    if (m_poolPages > 0) {
        --m_poolPages;
        if (placing()) {
            page = m_poolList.back();
            m_poolList.pop_back();
        }
    } else {
        ++m_mallocedPages;
        if (placing()) {
            page = static_cast<std::uint32_t>(m_pageTable.size());
            m_pageTable.emplace_back();
        }
    }
    ++c.pages;
    if (placing()) {
        c.slabList.push_back(page);
        splitIntoFreeList(page, classId);
    }
}

void MemcachedPageModel::splitIntoFreeList(std::uint32_t page, std::uint32_t classId) {
    // split_slab_page_into_freelist: do_slabs_free of each chunk in address order, each pushed at the head.
    SlabClass& c = m_classes[classId - 1];
    Page& p = m_pageTable[page];
    p.classId = classId;
    p.owners.assign(c.perPage, kFreeChunk);
    for (std::uint32_t i = 0; i < c.perPage; ++i)
        c.freeList.push_back({ page, i });
}

void MemcachedPageModel::allocate(std::uint32_t classId, std::uint32_t count) {
    assert(classId >= 1 && classId <= m_classes.size() && !placing());
    SlabClass& c = m_classes[classId - 1];
    for (std::uint32_t n = 0; n < count; ++n) {
        if (c.used == c.pages * c.perPage)
            addPage(classId);
        ++c.used;
    }
    m_allocatedBytes += c.chunkBytes * count;
    m_peakAllocatedBytes = std::max(m_peakAllocatedBytes, m_allocatedBytes);
}

bool MemcachedPageModel::mayAddPage(const SlabClass& c) const {
    // slabs.c do_slabs_newslab: `mem_limit && mem_malloced + len > mem_limit && p->slabs > 0 && g->slabs == 0`
    // fails; len is slab_page_size (slab_reassign is on by default).
    return m_options.memoryLimitBytes == 0 || (m_mallocedPages + 1) * m_pageBytes <= m_options.memoryLimitBytes
        || c.pages == 0 || m_poolPages > 0;
}

bool MemcachedPageModel::tryAllocate(std::uint32_t classId) {
    assert(classId >= 1 && classId <= m_classes.size() && !placing());
    SlabClass& c = m_classes[classId - 1];
    if (c.used == c.pages * c.perPage && !mayAddPage(c))
        return false;
    allocate(classId);
    return true;
}

std::optional<MemcachedChunk> MemcachedPageModel::tryPlace(std::uint32_t classId, std::uint32_t owner) {
    assert(classId >= 1 && classId <= m_classes.size() && placing());
    SlabClass& c = m_classes[classId - 1];
    if (c.freeList.empty()) {
        if (!mayAddPage(c))
            return std::nullopt;
        addPage(classId);
    }
    const MemcachedChunk chunk = c.freeList.back(); // do_slabs_alloc: the free list's head
    c.freeList.pop_back();
    m_pageTable[chunk.page].owners[chunk.index] = owner;
    ++c.used;
    m_allocatedBytes += c.chunkBytes;
    m_peakAllocatedBytes = std::max(m_peakAllocatedBytes, m_allocatedBytes);
    return chunk;
}

void MemcachedPageModel::releaseChunk(MemcachedChunk chunk) {
    Page& p = m_pageTable[chunk.page];
    assert(p.classId != 0 && p.owners[chunk.index] != kFreeChunk && "a chunk freed twice");
    SlabClass& c = m_classes[p.classId - 1];
    p.owners[chunk.index] = kFreeChunk;
    --c.used;
    m_allocatedBytes -= c.chunkBytes;
    // slab_rebalance_move marks a chunk of the page being moved done rather than freeing it.
    if (m_leavingPage != chunk.page)
        c.freeList.push_back(chunk); // do_slabs_free: at the head
}

void MemcachedPageModel::release(std::uint32_t classId, std::uint32_t count) {
    assert(classId >= 1 && classId <= m_classes.size() && !placing());
    SlabClass& c = m_classes[classId - 1];
    assert(c.used >= count && "a chunk freed twice");
    c.used -= count;
    m_allocatedBytes -= c.chunkBytes * count;
}

void MemcachedPageModel::movePage(std::uint32_t src, std::uint32_t dst, std::uint64_t nowSeconds) {
    SlabClass& from = m_classes[src - 1];
    --from.pages;
    ++m_pagesMoved;
    if (placing()) {
        // slab_rebalance_start: the first page of slab_list; slab_rebalance_move walks its chunks.
        const std::uint32_t page = from.slabList.front();
        m_leavingPage = page;
        std::erase_if(from.freeList, [page](const MemcachedChunk& chunk) { return chunk.page == page; });
        for (std::uint32_t i = 0; i < from.perPage; ++i) {
            const std::uint32_t owner = m_pageTable[page].owners[i];
            if (owner == kFreeChunk)
                continue;
            if (from.freeList.empty()) {
                ++m_lostToMoves;
                m_options.owners->lostToPageMove(owner); // releases its chunks, this one among them
                assert(m_pageTable[page].owners[i] == kFreeChunk && "the owner released its chunk");
                continue;
            }
            const MemcachedChunk to = from.freeList.back(); // slab_rebalance_alloc: the head, outside the page
            from.freeList.pop_back();
            m_pageTable[to.page].owners[to.index] = owner;
            m_pageTable[page].owners[i] = kFreeChunk;
            ++m_rescues;
            m_options.owners->rescued(owner, { page, i }, to, nowSeconds);
        }
        m_leavingPage.reset();
        from.slabList.erase(from.slabList.begin());
        if (dst == 0) {
            m_pageTable[page].classId = 0;
            m_pageTable[page].owners.clear();
            m_poolList.push_back(page);
        } else {
            m_classes[dst - 1].slabList.push_back(page);
            splitIntoFreeList(page, dst);
        }
    }
    // Without owners the page's live items move into free chunks of the class: a move to the pool (the only
    // one the counts make) needs more than 1.5 pages' worth free outside the page, and has them.
    if (dst == 0)
        ++m_poolPages;
    else
        ++m_classes[dst - 1].pages;
}

MemcachedPageModel::Move MemcachedPageModel::runMover(std::uint64_t nowSeconds) {
    const std::uint32_t window = m_options.moverWindow;
    ++m_runs; // a->window_cur++
    // fill_item_stats_automove(a->iam_after), fill_slab_stats_automove(a->sam_after): every class as the run
    // starts; they become the "before" of the next run (the memcpy after the loop).
    std::vector<std::uint64_t>& pagesAtStart = m_pagesAtRunStart;
    pagesAtStart.resize(m_classes.size());
    std::vector<MemcachedChunkOwners::ClassStats>& stats = m_statsAtRunStart;
    stats.resize(placing() ? m_classes.size() : 0);
    std::uint64_t evictedTotal = 0;
    for (std::size_t n = 0; n < m_classes.size(); ++n) {
        pagesAtStart[n] = m_classes[n].pages;
        if (placing()) {
            stats[n] = m_options.owners->itemStats(static_cast<std::uint32_t>(n + 1), nowSeconds);
            evictedTotal += stats[n].evicted - m_classes[n].evictedAtLastRun;
        }
    }
    std::optional<std::size_t> toPool;
    std::optional<std::size_t> oldest;
    std::optional<std::size_t> youngest;
    std::uint64_t oldestAge = 0;
    std::uint64_t youngestAge = UINT64_MAX;
    bool youngestEvicting = false;
    for (std::size_t n = 0; n < m_classes.size(); ++n) {
        const SlabClass& c = m_classes[n];
        WindowSlot* slots = &m_window[n * window];
        WindowSlot& current = slots[m_runs % window];
        current = WindowSlot {}; // memset(wd, 0, ...)
        if (placing()) {
            const std::uint64_t evicted = stats[n].evicted - c.evictedAtLastRun;
            if (evicted > 0) {
                current.evictedRatio = static_cast<float>(evicted) / static_cast<float>(evictedTotal);
                current.evictedSeen = true;
                current.dirty = true;
            }
            if (stats[n].outOfMemory > c.outOfMemoryAtLastRun)
                current.dirty = true;
            current.age = stats[n].age;
        }
        if (pagesAtStart[n] > c.pagesAtLastRun)
            current.dirty = true; // total_pages grew since the last run
        // window_sum, this run's record included: a class that grew at run d moves nothing before d + window.
        WindowSlot sum;
        unsigned dirty = 0;
        unsigned seen = 0;
        for (std::uint32_t w = 0; w < window; ++w) {
            sum.age += slots[w].age;
            sum.evictedRatio += slots[w].evictedRatio;
            dirty += slots[w].dirty;
            seen += slots[w].evictedSeen;
        }
        const std::uint64_t age = sum.age / window;
        if (c.overReclaimLine() && dirty == 0) {
            // slabs_reassign(n, SLAB_GLOBAL_PAGE_POOL); youngest and oldest forgotten.
            toPool = n;
            break;
        }
        if (age > oldestAge && c.pages > kMinPagesForSource) {
            oldest = n;
            oldestAge = age;
        }
        if (age < youngestAge && (seen > window / 2 || sum.evictedRatio / static_cast<float>(window) > 0.25f)) {
            youngest = n;
            youngestAge = age;
            youngestEvicting = current.evictedSeen;
        }
    }
    for (std::size_t n = 0; n < m_classes.size(); ++n) {
        m_classes[n].pagesAtLastRun = pagesAtStart[n];
        if (placing()) {
            m_classes[n].evictedAtLastRun = stats[n].evicted;
            m_classes[n].outOfMemoryAtLastRun = stats[n].outOfMemory;
        }
    }
    if (toPool) {
        movePage(static_cast<std::uint32_t>(*toPool + 1), 0, nowSeconds);
        return Move::ToPool;
    }
    // Only once the window has filled; the youngest must be evicting now, and young enough.
    if (youngest && oldest && m_runs > window && youngestEvicting
        && static_cast<double>(youngestAge) < static_cast<double>(oldestAge) * m_options.moverAgeRatio) {
        movePage(static_cast<std::uint32_t>(*oldest + 1), static_cast<std::uint32_t>(*youngest + 1), nowSeconds);
        return Move::ToClass;
    }
    return Move::None;
}

bool MemcachedPageModel::itemsChangedSinceLastRun(std::uint64_t nowSeconds) const {
    if (!placing())
        return false;
    for (std::size_t n = 0; n < m_classes.size(); ++n) {
        const auto stats = m_options.owners->itemStats(static_cast<std::uint32_t>(n + 1), nowSeconds);
        if (stats.evicted != m_classes[n].evictedAtLastRun || stats.outOfMemory != m_classes[n].outOfMemoryAtLastRun)
            return true;
    }
    return false;
}

void MemcachedPageModel::runSecond() {
    const std::uint64_t now = m_seconds++;
    // items.c lru_maintainer_thread: a run once a second, except that a run that gave a page to the global
    // pool ("be more aggressive") is followed by another at once, without waiting for the next second.
    for (std::size_t burst = 0; runMover(now) == Move::ToPool && burst < kMaxRunsASecond; ++burst) { }
}

void MemcachedPageModel::advanceTo(std::uint64_t nowSeconds) {
    if (m_options.moverWindow == 0)
        return;
    const std::uint64_t window = m_options.moverWindow;
    while (m_seconds < nowSeconds + 1) { // the runs at seconds 0 .. nowSeconds
        const bool anyOver
            = std::any_of(m_classes.begin(), m_classes.end(), [](const SlabClass& c) { return c.overReclaimLine(); });
        const bool marked = std::any_of(
            m_window.begin(), m_window.end(), [](const WindowSlot& w) { return w.evictedSeen || w.dirty; });
        const std::uint64_t left = nowSeconds + 1 - m_seconds;
        if (!anyOver && !marked && left > 2 * window && !itemsChangedSinceLastRun(m_seconds)) {
            // Nothing to move, no mark in the window, nothing evicted since the last run and nothing allocated
            // or evicted until the next request: the runs change nothing but the ages they record, so only the
            // last window's are run.
            m_runs += left - window;
            m_seconds += left - window;
            continue;
        }
        runSecond();
    }
}

void MemcachedPageModel::settle() {
    if (m_options.moverWindow == 0)
        return;
    // A class over the line gives its pages within a window's seconds of its last growth.
    while (std::any_of(m_classes.begin(), m_classes.end(), [](const SlabClass& c) { return c.overReclaimLine(); }))
        runSecond();
}

} // namespace layoutlab
