// SPDX-License-Identifier: MIT
#include "layoutlab/sim/slab_index.h"

namespace layoutlab {

SlabIndex::SlabIndex(IndexKind kind, const IndexParams& params)
    : m_kind(kind)
    , m_params(params) { }

void SlabIndex::resize(JemallocArenaModel& arena, std::uint64_t buckets) {
    if (buckets == m_buckets)
        return;
    std::optional<JemallocArenaModel::Handle> table;
    if (buckets != 0)
        table = arena.allocate(buckets * m_params.bucketBytes);
    if (m_kind != IndexKind::ValkeyHashtable) {
        if (m_table)
            arena.release(*m_table);
        m_table = table;
        m_buckets = buckets;
        return;
    }
    // The entries in the old table's order; its children freed chain by chain, then the array.
    auto released = [&](const auto& child) { arena.release(child.extra); };
    std::vector<std::uint32_t> moved;
    for (std::uint64_t top = 0; top < m_chains.buckets(); ++top) {
        m_chains.forEachEntry(top, [&](std::uint32_t keyId) { moved.push_back(keyId); });
        m_chains.freeChildren(top, released);
    }
    if (m_table)
        arena.release(*m_table);
    m_table = table;
    m_buckets = buckets;
    m_chains.assign(buckets);
    // Each insert lands in a random bucket of a table far larger than the caches: fetch a few ahead.
    constexpr std::size_t kPrefetchDistance = 16;
    for (std::size_t i = 0; i < moved.size(); ++i) {
        if (i + kPrefetchDistance < moved.size())
            prefetch(moved[i + kPrefetchDistance]);
        insert(arena, moved[i]);
    }
}

void SlabIndex::insert(JemallocArenaModel& arena, std::uint32_t keyId) {
    if (m_kind != IndexKind::ValkeyHashtable || m_buckets == 0)
        return;
    // A child is one bucket's allocation.
    m_chains.insert(hashOf(keyId) & (m_buckets - 1), keyId,
        [&](auto& child) { child.extra = arena.allocate(m_params.bucketBytes); });
}

void SlabIndex::erase(JemallocArenaModel& arena, std::uint32_t keyId) {
    if (m_kind != IndexKind::ValkeyHashtable || m_buckets == 0)
        return;
    m_chains.erase(hashOf(keyId) & (m_buckets - 1), keyId, [&](const auto& child) { arena.release(child.extra); });
}

} // namespace layoutlab
