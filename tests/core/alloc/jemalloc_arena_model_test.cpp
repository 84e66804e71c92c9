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

// A drained server's bins fill its thread cache with fewer regions than a fresh thread's: each GC flush a bin
// has seen halved its fill (tcache.c tcache_gc_small), each refill after the first doubled it back at the
// next GC visit. The start bins' counters set it: allocated bytes count the regions a fill takes.
TEST(JemallocArenaModel, AStartBinsFlushesAndFillsSetItsThreadCachesFill) {
    const JemallocModel model(SizeClassParams { 3, 12 });
    const SizeClassTable& table = model.table();
    std::uint32_t bin96 = 0;
    while (table.classes()[bin96].size != 96)
        ++bin96;
    const std::uint64_t slots = std::min<std::uint64_t>(2 * table.classes()[bin96].regionsPerSlab, 200);
    auto firstFill = [&](std::uint64_t fills, std::uint64_t flushes) {
        JemallocArenaModel::Options options;
        options.threadCache = true;
        options.startBins = { { 96, 10, 1, fills, flushes } };
        JemallocArenaModel arena(table, options);
        arena.allocate(96);
        return arena.allocatedBytes() / 96; // the regions the fill took from the bin
    };
    EXPECT_EQ(firstFill(0, 0), slots >> 1) << "a fresh thread's: half its slots";
    EXPECT_EQ(firstFill(1, 3), slots >> 4) << "three GC flushes since its one fill";
    EXPECT_EQ(firstFill(3, 3), slots >> 2) << "two refills undid two of them";
    EXPECT_EQ(firstFill(1, 40), 1u) << "never less than one region";
}

// A reallocation in place moves no region, but it counts toward the thread cache's GC as much allocated as
// freed (jemalloc.c do_rallocx): the GC's visits come sooner and flush what a bin has held since the last.
TEST(JemallocArenaModel, ReallocationsInPlaceBringTheThreadCachesGcSooner) {
    const JemallocModel model(SizeClassParams { 3, 12 });
    JemallocArenaModel::Options options;
    options.threadCache = true;
    JemallocArenaModel quiet(model.table(), options);
    JemallocArenaModel busy(model.table(), options);
    for (JemallocArenaModel* arena : { &quiet, &busy })
        arena->release(arena->allocate(8192)); // a fill of 10 regions (half of 20 slots), all cached again
    EXPECT_EQ(quiet.allocatedBytes(), 10u * 8192);
    for (int n = 0; n < 200; ++n) // 400 GC events: every bin visited several times
        busy.reallocated(65536);
    EXPECT_EQ(quiet.allocatedBytes(), 10u * 8192) << "no GC event without allocations";
    EXPECT_EQ(busy.allocatedBytes(), 0u) << "each visit flushed 3/4 of what the bin held throughout";
    EXPECT_EQ(busy.activeBytes(), 0u);
}
