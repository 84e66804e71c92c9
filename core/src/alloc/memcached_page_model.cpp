// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/memcached_page_model.h"

#include <algorithm>
#include <cassert>

namespace layoutlab {

namespace {
// A burst of runs within one second ends when a run moves nothing; this bounds it (every class's pages).
constexpr std::size_t kMaxRunsASecond = std::size_t { 1 } << 32;
} // namespace

MemcachedPageModel::MemcachedPageModel(const MemcachedSlabModel& slabs, Options options)
    : m_pageBytes(slabs.params().pageBytes)
    , m_options(options) {
    for (const MemcachedSlabClass& c : slabs.slabClasses())
        m_classes.push_back({ c.chunkBytes, std::max<std::uint32_t>(c.perSlab, 1) });
    m_dirty.assign(m_classes.size() * std::max<std::uint32_t>(options.moverWindow, 1), 0);
}

void MemcachedPageModel::allocate(std::uint32_t classId, std::uint32_t count) {
    assert(classId >= 1 && classId <= m_classes.size());
    SlabClass& c = m_classes[classId - 1];
    for (std::uint32_t n = 0; n < count; ++n) {
        if (c.used == c.pages * c.perPage) {
            // do_slabs_newslab: a page from the global pool first, else a new one malloc'ed.
            if (m_poolPages > 0)
                --m_poolPages;
            else
                ++m_mallocedPages;
            ++c.pages;
        }
        ++c.used;
    }
    m_allocatedBytes += c.chunkBytes * count;
    m_peakAllocatedBytes = std::max(m_peakAllocatedBytes, m_allocatedBytes);
}

bool MemcachedPageModel::tryAllocate(std::uint32_t classId) {
    assert(classId >= 1 && classId <= m_classes.size());
    SlabClass& c = m_classes[classId - 1];
    // slabs.c do_slabs_newslab: `mem_limit && mem_malloced + len > mem_limit && p->slabs > 0 && g->slabs == 0`
    // fails; len is slab_page_size (slab_reassign is on by default).
    const bool full = c.used == c.pages * c.perPage;
    if (full && m_options.memoryLimitBytes != 0 && (m_mallocedPages + 1) * m_pageBytes > m_options.memoryLimitBytes
        && c.pages > 0 && m_poolPages == 0)
        return false;
    allocate(classId);
    return true;
}

void MemcachedPageModel::release(std::uint32_t classId, std::uint32_t count) {
    assert(classId >= 1 && classId <= m_classes.size());
    SlabClass& c = m_classes[classId - 1];
    assert(c.used >= count && "a chunk freed twice");
    c.used -= count;
    m_allocatedBytes -= c.chunkBytes * count;
}

bool MemcachedPageModel::runMover() {
    const std::uint32_t window = m_options.moverWindow;
    ++m_runs; // a->window_cur++
    // fill_slab_stats_automove(a->sam_after): every class's pages as the run starts; they become
    // sam_before for the next run (the memcpy after the loop), the page a move takes included.
    std::vector<std::uint64_t>& pagesAtStart = m_pagesAtRunStart;
    pagesAtStart.resize(m_classes.size());
    for (std::size_t n = 0; n < m_classes.size(); ++n)
        pagesAtStart[n] = m_classes[n].pages;
    bool moved = false;
    for (std::size_t n = 0; n < m_classes.size(); ++n) {
        SlabClass& c = m_classes[n];
        std::uint8_t* slots = &m_dirty[n * window];
        std::uint8_t& current = slots[m_runs % window];
        current = 0; // memset(wd, 0, ...)
        if (pagesAtStart[n] > c.pagesAtLastRun)
            current = 1; // total_pages grew since the last run: the window is dirty
        // window_sum, this run's mark included: a class that grew at run d moves nothing before d + window.
        const bool dirty = std::any_of(slots, slots + window, [](std::uint8_t d) { return d != 0; });
        if (c.overReclaimLine() && !dirty) {
            // slabs_reassign(n, SLAB_GLOBAL_PAGE_POOL): the page's live items move into free chunks of the
            // class (enough of them: more than 1.5 pages' worth are free outside the page).
            --c.pages;
            ++m_poolPages;
            ++m_pagesMoved;
            moved = true;
            break;
        }
    }
    for (std::size_t n = 0; n < m_classes.size(); ++n)
        m_classes[n].pagesAtLastRun = pagesAtStart[n];
    return moved;
}

void MemcachedPageModel::runSecond() {
    ++m_seconds;
    // items.c lru_maintainer_thread: a run once a second, except that a run that gave a page to the global
    // pool ("be more aggressive") is followed by another at once, without waiting for the next second.
    for (std::size_t burst = 0; runMover() && burst < kMaxRunsASecond; ++burst) { }
}

void MemcachedPageModel::advanceTo(std::uint64_t nowSeconds) {
    if (m_options.moverWindow == 0)
        return;
    while (m_seconds < nowSeconds + 1) { // the runs at seconds 0 .. nowSeconds
        const bool anyOver
            = std::any_of(m_classes.begin(), m_classes.end(), [](const SlabClass& c) { return c.overReclaimLine(); });
        if (!anyOver && nowSeconds + 1 - m_seconds > m_options.moverWindow) {
            // Nothing to move and nothing allocated until the next request: a window of runs clears every
            // mark, and the runs after it change nothing.
            std::fill(m_dirty.begin(), m_dirty.end(), 0);
            for (SlabClass& c : m_classes)
                c.pagesAtLastRun = c.pages;
            m_runs += nowSeconds + 1 - m_seconds;
            m_seconds = nowSeconds + 1;
            return;
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
