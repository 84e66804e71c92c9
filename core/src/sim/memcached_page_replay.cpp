// SPDX-License-Identifier: MIT
#include "layoutlab/sim/memcached_page_replay.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace layoutlab {

namespace {
// One item's chunks: (slab class id, chunks of it).
using ItemChunks = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
constexpr std::uint32_t kNoItem = 0;
} // namespace

struct MemcachedPageReplay::ThresholdPages {
    std::uint32_t threshold = 0;
    MemcachedPageModel pages;
    std::vector<std::uint32_t> itemOf; // per key id: the id of its item's chunks (kNoItem: none)
    std::vector<ItemChunks> items; // by id; items[0] is kNoItem's
    // Ids by packed shape (RawString keys: with their sds buffer): a key's chunks depend on nothing else.
    std::unordered_map<std::uint64_t, std::uint32_t> byShape;
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint32_t> byRawShape;

    ThresholdPages(std::uint32_t t, const MemcachedSlabModel& slabs, MemcachedPageModel::Options options)
        : threshold(t)
        , pages(slabs, options)
        , items(1) {
        pages.advanceTo(0); // the mover's first run, as the server starts: before the trace's first request
    }

    void release(std::uint32_t keyId) {
        if (keyId >= itemOf.size() || itemOf[keyId] == kNoItem)
            return;
        for (const auto& [classId, count] : items[itemOf[keyId]])
            pages.release(classId, count);
        itemOf[keyId] = kNoItem;
    }
};

MemcachedPageReplay::MemcachedPageReplay(const LayoutModel& layout, const MemcachedSlabModel& slabs,
    const std::vector<std::uint32_t>& thresholds, const KeyspaceReplay& replay, const SlabModelOptions& options)
    : m_layout(&layout)
    , m_slabs(&slabs)
    , m_replay(&replay) {
    for (std::uint32_t t : thresholds)
        m_thresholds.push_back(
            std::make_unique<ThresholdPages>(t, slabs, MemcachedPageModel::Options { options.pageMoverWindow }));
}

MemcachedPageReplay::~MemcachedPageReplay() = default;

void MemcachedPageReplay::stored(std::uint32_t keyId, const KeyState& key, Op) {
    for (auto& t : m_thresholds) {
        const std::uint64_t packed = key.shapeAt(t->threshold);
        const bool raw = key.kind() == ValueKind::RawString;
        const std::uint32_t sdsBytes = raw ? m_replay->sdsBytesOf(keyId) : 0;
        std::uint32_t* slot = nullptr;
        if (raw)
            slot = &t->byRawShape.try_emplace({ packed, sdsBytes }, kNoItem).first->second;
        else
            slot = &t->byShape.try_emplace(packed, kNoItem).first->second;
        if (*slot == kNoItem) {
            KeyShape shape = unpackShape(packed);
            shape.sdsBytes = sdsBytes;
            const KeyLayout layout = m_layout->describe(shape, t->threshold, *m_slabs);
            ItemChunks chunks;
            if (layout.stored)
                for (std::uint8_t i = 0; i < layout.allocationCount; ++i) {
                    const Allocation& a = layout.allocations[i];
                    // slabs_clsid: an item that reaches here fits a class (-I refused it otherwise).
                    if (const std::uint32_t classId = m_slabs->classId(a.requestedBytes))
                        chunks.emplace_back(classId, a.count);
                }
            *slot = static_cast<std::uint32_t>(t->items.size());
            t->items.push_back(std::move(chunks));
        }
        const std::uint32_t id = *slot;
        if (keyId >= t->itemOf.size())
            t->itemOf.resize(std::max<std::size_t>(std::size_t { keyId } + 1, t->itemOf.size() * 2), kNoItem);
        // The new item first, then the old one freed; a refused item (no chunks) only unlinks the old one.
        for (const auto& [classId, count] : t->items[id])
            t->pages.allocate(classId, count);
        t->release(keyId);
        t->itemOf[keyId] = t->items[id].empty() ? kNoItem : id;
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
