// SPDX-License-Identifier: MIT
// The jemalloc arena model started from a server's bins (JemallocArenaModel::Options::startBins): the
// free regions of the start's slabs take the trace's first allocations, and the figures count from there.
#include "layoutlab/alloc/jemalloc_arena_model.h"
#include "layoutlab/alloc/jemalloc_model.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

TEST(JemallocArenaModel, AStartBinsFreeRegionsTakeTheFirstAllocations) {
    const JemallocModel model(SizeClassParams { 3, 12 }); // quantum 8, 4 KiB pages: the engines' build
    const SizeClassTable& table = model.table();
    std::uint32_t bin80 = 0;
    while (table.classes()[bin80].size != 80)
        ++bin80;
    const std::uint64_t perSlab = table.classes()[bin80].regionsPerSlab;
    const std::uint64_t slabBytes = table.classes()[bin80].slabPages * 4096;
    // Two slabs holding 100 regions: 2 * perSlab - 100 free ones.
    JemallocArenaModel::Options options;
    options.startBins = { { 80, 100, 2 } };
    JemallocArenaModel arena(table, options);
    EXPECT_EQ(arena.allocatedBytes(), 0u);
    EXPECT_EQ(arena.activeBytes(), 0u);
    for (std::uint64_t n = 0; n < 2 * perSlab - 100; ++n)
        arena.allocate(80);
    EXPECT_EQ(arena.activeBytes(), 0u) << "the start's slabs held them";
    EXPECT_EQ(arena.allocatedBytes(), (2 * perSlab - 100) * 80);
    arena.allocate(80);
    EXPECT_EQ(arena.activeBytes(), slabBytes) << "then a fresh slab";
    // Bins another build has are left out; an empty arena has none of this.
    JemallocArenaModel::Options other;
    other.startBins = { { 81, 5, 1 } };
    JemallocArenaModel plain(table, other);
    plain.allocate(80);
    EXPECT_EQ(plain.activeBytes(), slabBytes);
}

} // namespace
