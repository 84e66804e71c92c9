// SPDX-License-Identifier: MIT
#include "layoutlab/sim/slab_index.h"

#include <bit>

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
    std::vector<std::uint32_t> moved;
    for (Bucket& top : m_top) {
        for (Bucket* b = &top;;) {
            for (unsigned s = 0; s < b->slots(); ++s)
                if (b->presence & (1u << s))
                    moved.push_back(b->entries[s]);
            if (!b->chained)
                break;
            b = &at(b->child);
        }
        for (std::uint32_t child = top.chained ? top.child : kNoChild; child != kNoChild;) {
            const std::uint32_t next = at(child).chained ? at(child).child : kNoChild;
            freeChild(arena, child);
            child = next;
        }
    }
    if (m_table)
        arena.release(*m_table);
    m_table = table;
    m_buckets = buckets;
    m_top.assign(buckets, Bucket {});
    // Each insert lands in a random bucket of a table far larger than the caches: fetch a few ahead.
    constexpr std::size_t kPrefetchDistance = 16;
    for (std::size_t i = 0; i < moved.size(); ++i) {
        if (i + kPrefetchDistance < moved.size())
            prefetch(moved[i + kPrefetchDistance]);
        insertInto(arena, moved[i]);
    }
}

void SlabIndex::insert(JemallocArenaModel& arena, std::uint32_t keyId) {
    if (m_kind == IndexKind::ValkeyHashtable && m_buckets != 0)
        insertInto(arena, keyId);
}

void SlabIndex::insertInto(JemallocArenaModel& arena, std::uint32_t keyId) {
    Bucket* b = &m_top[hashOf(keyId) & (m_buckets - 1)];
    for (;;) {
        for (unsigned s = 0; s < b->slots(); ++s)
            if (!(b->presence & (1u << s))) {
                b->presence |= static_cast<std::uint8_t>(1u << s);
                b->entries[s] = keyId;
                return;
            }
        if (b->chained) {
            b = &at(b->child);
            continue;
        }
        // bucketConvertToChained: the last entry moves into the new child, the slot becomes its pointer.
        const std::uint32_t child = newChild(arena);
        const unsigned last = kEntriesPerBucket - 1;
        Bucket& c = at(child);
        c.presence = 1;
        c.entries[0] = b->entries[last];
        b->presence = static_cast<std::uint8_t>(b->presence & ~(1u << last));
        b->chained = true;
        b->child = child;
        b = &c;
    }
}

void SlabIndex::erase(JemallocArenaModel& arena, std::uint32_t keyId) {
    if (m_kind != IndexKind::ValkeyHashtable || m_buckets == 0)
        return;
    for (Bucket* b = &m_top[hashOf(keyId) & (m_buckets - 1)];;) {
        for (unsigned s = 0; s < b->slots(); ++s)
            if ((b->presence & (1u << s)) && b->entries[s] == keyId) {
                b->presence = static_cast<std::uint8_t>(b->presence & ~(1u << s));
                if (b->chained)
                    fillHole(arena, *b, s);
                return;
            }
        if (!b->chained)
            return;
        b = &at(b->child);
    }
}

void SlabIndex::fillHole(JemallocArenaModel& arena, Bucket& bucket, unsigned slot) {
    Bucket* beforeLast = &bucket;
    Bucket* last = &at(bucket.child);
    while (last->chained) {
        beforeLast = last;
        last = &at(last->child);
    }
    auto move = [](Bucket& to, unsigned toSlot, Bucket& from, unsigned fromSlot) {
        to.entries[toSlot] = from.entries[fromSlot];
        to.presence = static_cast<std::uint8_t>(to.presence | (1u << toSlot));
        from.presence = static_cast<std::uint8_t>(from.presence & ~(1u << fromSlot));
    };
    if (last->presence != 0)
        move(bucket, slot, *last, static_cast<unsigned>(std::countr_zero(last->presence)));
    if (std::popcount(last->presence) <= 1) {
        const std::uint32_t freed = beforeLast->child;
        beforeLast->chained = false;
        beforeLast->child = kNoChild;
        if (last->presence != 0)
            move(*beforeLast, kEntriesPerBucket - 1, *last, static_cast<unsigned>(std::countr_zero(last->presence)));
        freeChild(arena, freed);
    }
}

std::uint32_t SlabIndex::newChild(JemallocArenaModel& arena) {
    std::uint32_t child;
    if (!m_unusedChildren.empty()) {
        child = m_unusedChildren.back();
        m_unusedChildren.pop_back();
    } else {
        child = static_cast<std::uint32_t>(m_children.size());
        m_children.emplace_back();
    }
    at(child).allocation = arena.allocate(m_params.bucketBytes); // a child is one bucket
    return child;
}

void SlabIndex::freeChild(JemallocArenaModel& arena, std::uint32_t child) {
    arena.release(at(child).allocation);
    at(child) = Bucket {};
    m_unusedChildren.push_back(child);
}

} // namespace layoutlab
