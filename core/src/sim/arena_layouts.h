// SPDX-License-Identifier: MIT
#pragma once

// What SlabReplay's arenas keep of each layout a key can have (one cache line), the table of the distinct
// ones, and the copy of a key's handles a write starts with: the records one arena's play reads on every
// write, kept apart from the replay's flow (slab_replay.cpp).

#include "layoutlab/alloc/jemalloc_arena_model.h"
#include "layoutlab/layout/layout_model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>
#include <xxhash.h>

namespace layoutlab {

// What the arena needs of a key's layout, in one cache line (a write reads its old and its new one): its
// allocations' classes (in the layout's order) and the order they are made in, and the command's
// transients' classes. With what the engine's rewrite rules ask of it (LayoutModel::keptPurposes): its
// encoding, its allocations' purposes (and which never stay: `unmatchable`, LayoutModel::kUnmatchable),
// and whether each kind of rewrite brings its value unembedded.
struct alignas(64) ArenaLayout {
    bool stored = true;
    std::uint8_t count = 0;
    std::uint8_t transientCount = 0;
    Encoding encoding = Encoding::Raw;
    std::uint8_t unembeddedByRule = 0; // bit ruleIndex(op): the new value arrives unembedded
    std::uint8_t unmatchable = 0; // bit n: allocation n is never kept (a run of chunks)
    // The key's name among the transients, as createStringObject makes it (KeyLayout::keyArgumentAt).
    std::uint8_t keyArgumentAt = 0;
    std::uint8_t keyArgumentCount = 0;
    std::array<std::uint8_t, KeyLayout::kMaxAllocations> made {};
    std::array<Purpose, KeyLayout::kMaxAllocations> purposes {};
    std::array<std::uint16_t, KeyLayout::kMaxAllocations> classes {};
    std::array<std::uint16_t, KeyLayout::kMaxTransients> transients {};

    // The identities LayoutModel::keepMatching compares, written into `out` (the first `count`): a fresh
    // array would be zeroed whole on every write (GCC's `rep stos`, a fifth of store()'s time).
    std::span<const LayoutModel::AllocationIdentity> identities(
        std::array<LayoutModel::AllocationIdentity, KeyLayout::kMaxAllocations>& out) const {
        for (std::uint8_t n = 0; n < count; ++n)
            out[n] = { purposes[n], (unmatchable >> n) & 1u ? LayoutModel::kUnmatchable : classes[n] };
        return std::span(out.data(), count);
    }
};
static_assert(sizeof(ArenaLayout) == 64, "a layout stays in one cache line");
static_assert(std::is_trivially_copyable_v<ArenaLayout>, "DistinctLayouts compares a layout's bytes");

// The distinct layouts of one arena, each with its id: an open-addressed table of ids over the layouts'
// bytes, small enough to stay in the host's caches where a node-based map's lookups each missed (a
// sweep's arenas meet a hundred thousand shapes each). The caller zeroes a layout whole, padding included,
// before filling it in.
class DistinctLayouts {
public:
    DistinctLayouts() { m_layouts.push_back(ArenaLayout {}); } // 0: no layout, never matched
    const ArenaLayout& operator[](std::uint32_t id) const { return m_layouts[id]; }
    std::uint32_t idOf(const ArenaLayout& layout) {
        if ((m_layouts.size() + 1) * 2 > m_slots.size())
            grow();
        for (std::size_t slot = hashOf(layout);; ++slot) {
            std::uint32_t& id = m_slots[slot & (m_slots.size() - 1)];
            if (id == 0) {
                id = static_cast<std::uint32_t>(m_layouts.size());
                m_layouts.push_back(layout);
                return id;
            }
            if (std::memcmp(&m_layouts[id], &layout, sizeof layout) == 0)
                return id;
        }
    }

private:
    static std::size_t hashOf(const ArenaLayout& layout) { return XXH3_64bits(&layout, sizeof layout); }
    void grow() {
        m_slots.assign(std::max<std::size_t>(64, m_slots.size() * 2), 0);
        for (std::uint32_t id = 1; id < m_layouts.size(); ++id)
            for (std::size_t slot = hashOf(m_layouts[id]);; ++slot)
                if (std::uint32_t& free = m_slots[slot & (m_slots.size() - 1)]; free == 0) {
                    free = id;
                    break;
                }
    }
    std::vector<ArenaLayout> m_layouts;
    std::vector<std::uint32_t> m_slots; // a power of two, at most half full; 0: empty
};
static_assert(KeyLayout::kMaxAllocations <= 8, "ArenaLayout::unmatchable has a bit per allocation");

// Copies a key's first `count` handles as words. A plain loop became `rep movsq`, whose start-up cost
// for two or three words was most of store()'s time.
[[gnu::always_inline]] inline void copyHandles(
    const JemallocArenaModel::Handle* from, std::uint32_t count, std::uint64_t (&to)[KeyLayout::kMaxAllocations]) {
    static_assert(KeyLayout::kMaxAllocations == 8, "one case per allocation");
    switch (count) {
    case 8:
        to[7] = std::bit_cast<std::uint64_t>(from[7]);
        [[fallthrough]];
    case 7:
        to[6] = std::bit_cast<std::uint64_t>(from[6]);
        [[fallthrough]];
    case 6:
        to[5] = std::bit_cast<std::uint64_t>(from[5]);
        [[fallthrough]];
    case 5:
        to[4] = std::bit_cast<std::uint64_t>(from[4]);
        [[fallthrough]];
    case 4:
        to[3] = std::bit_cast<std::uint64_t>(from[3]);
        [[fallthrough]];
    case 3:
        to[2] = std::bit_cast<std::uint64_t>(from[2]);
        [[fallthrough]];
    case 2:
        to[1] = std::bit_cast<std::uint64_t>(from[1]);
        [[fallthrough]];
    case 1:
        to[0] = std::bit_cast<std::uint64_t>(from[0]);
        [[fallthrough]];
    default:
        break;
    }
}

} // namespace layoutlab
