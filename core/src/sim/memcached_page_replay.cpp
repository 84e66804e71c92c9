// SPDX-License-Identifier: MIT
#include "layoutlab/sim/memcached_page_replay.h"

#include "layoutlab/sim/memcached_items.h"

#include <algorithm>

namespace layoutlab {

struct MemcachedPageReplay::ThresholdPages {
    std::uint32_t threshold = 0;
    MemcachedPageModel pages;
    MemcachedItemTable items;
    std::vector<std::uint32_t> itemOf; // per key id: the id of its item (kNoItem: none)

    ThresholdPages(std::uint32_t t, const LayoutModel& layout, const MemcachedSlabModel& slabs,
        MemcachedPageModel::Options options)
        : threshold(t)
        , pages(slabs, options)
        , items(layout, slabs, t) {
        pages.advanceTo(0); // the mover's first run, as the server starts: before the trace's first request
    }

    void release(std::uint32_t keyId) {
        if (keyId >= itemOf.size() || itemOf[keyId] == MemcachedItemTable::kNoItem)
            return;
        for (const auto& [classId, count] : items.item(itemOf[keyId]).chunks)
            pages.release(classId, count);
        itemOf[keyId] = MemcachedItemTable::kNoItem;
    }
};

MemcachedPageReplay::MemcachedPageReplay(const LayoutModel& layout, const MemcachedSlabModel& slabs,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceReplay& replay, const SlabModelOptions& options)
    : m_slabs(&slabs)
    , m_replay(&replay) {
    for (std::uint32_t t : thresholds)
        m_thresholds.push_back(std::make_unique<ThresholdPages>(
            t, layout, slabs, MemcachedPageModel::Options { options.pageMoverWindow }));
}

MemcachedPageReplay::~MemcachedPageReplay() = default;

void MemcachedPageReplay::stored(std::uint32_t keyId, const KeyState& key, Op) {
    for (auto& t : m_thresholds) {
        const std::uint32_t id = t->items.itemOf(keyId, key, *m_replay);
        const MemcachedItem& item = t->items.item(id);
        if (keyId >= t->itemOf.size())
            t->itemOf.resize(
                std::max<std::size_t>(std::size_t { keyId } + 1, t->itemOf.size() * 2), MemcachedItemTable::kNoItem);
        // The new item first, then the old one freed; a refused item (no chunks) only unlinks the old one.
        for (const auto& [classId, count] : item.chunks)
            t->pages.allocate(classId, count);
        t->release(keyId);
        t->itemOf[keyId] = item.chunks.empty() ? MemcachedItemTable::kNoItem : id;
    }
}

void MemcachedPageReplay::removed(std::uint32_t keyId) {
    for (auto& t : m_thresholds)
        t->release(keyId);
}

void MemcachedPageReplay::clockAt(std::uint64_t nowSeconds) {
    for (auto& t : m_thresholds)
        t->pages.advanceTo(nowSeconds);
}

const MemcachedPageReplay::ThresholdPages* MemcachedPageReplay::pagesOf(std::uint32_t threshold) const {
    for (const auto& t : m_thresholds)
        if (t->threshold == threshold)
            return t.get();
    return nullptr;
}

std::optional<ArenaUsage> MemcachedPageReplay::usageAt(std::uint32_t threshold) const {
    const ThresholdPages* t = pagesOf(threshold);
    if (!t)
        return std::nullopt;
    const MemcachedPageModel& p = t->pages;
    return ArenaUsage { p.allocatedBytes(), p.activeBytes(), p.peakAllocatedBytes(), p.peakActiveBytes() };
}

std::vector<HeldSlabs> MemcachedPageReplay::heldSlabsAt(std::uint32_t threshold) const {
    std::vector<HeldSlabs> out;
    if (const ThresholdPages* t = pagesOf(threshold))
        for (const MemcachedSlabClass& c : m_slabs->slabClasses())
            if (const std::uint64_t pages = t->pages.pagesOf(c.id))
                out.push_back({ c.chunkBytes, pages });
    return out;
}

} // namespace layoutlab
