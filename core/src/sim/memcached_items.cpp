// SPDX-License-Identifier: MIT
#include "layoutlab/sim/memcached_items.h"

#include "layoutlab/sim/shape_histogram.h"

#include <algorithm>

namespace layoutlab {

MemcachedItemTable::MemcachedItemTable(
    const LayoutModel& layout, const MemcachedSlabModel& slabs, std::uint32_t threshold)
    : m_layout(&layout)
    , m_slabs(&slabs)
    , m_threshold(threshold)
    , m_items(1) { }

std::uint32_t MemcachedItemTable::itemOf(std::uint32_t keyId, const KeyState& key, const KeyspaceReplay& replay) {
    const std::uint64_t packed = key.shapeAt(m_threshold);
    const bool raw = key.kind() == ValueKind::RawString;
    const std::uint32_t sdsBytes = raw ? replay.sdsBytesOf(keyId) : 0;
    std::uint32_t* slot = raw ? &m_byRawShape.try_emplace({ packed, sdsBytes }, kNoItem).first->second
                              : &m_byShape.try_emplace(packed, kNoItem).first->second;
    if (*slot != kNoItem)
        return *slot;
    KeyShape shape = unpackShape(packed);
    shape.sdsBytes = sdsBytes;
    const KeyLayout layout = m_layout->describe(shape, m_threshold, *m_slabs);
    MemcachedItem item;
    if (layout.stored)
        for (std::uint8_t i = 0; i < layout.allocationCount; ++i) {
            const Allocation& a = layout.allocations[i];
            // slabs_clsid: an item that reaches here fits a class (-I refused it otherwise).
            if (const std::uint32_t classId = m_slabs->classId(a.requestedBytes)) {
                item.chunks.emplace_back(classId, a.count);
                item.totalBytes += a.requestedBytes * a.count;
            }
        }
    if (!item.chunks.empty())
        item.lruClass = m_slabs->classId(std::min<std::uint64_t>(item.totalBytes, m_slabs->params().chunkMaxBytes));
    *slot = static_cast<std::uint32_t>(m_items.size());
    m_items.push_back(std::move(item));
    return *slot;
}

} // namespace layoutlab
