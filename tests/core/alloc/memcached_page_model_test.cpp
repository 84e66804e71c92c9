// SPDX-License-Identifier: MIT
// memcached's slab pages per class (MemcachedPageModel) against what Debian's memcached 1.6.18 did with
// the same items (measured by hand; the drive tests check the same against a running server).
#include "layoutlab/alloc/memcached_page_model.h"

#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace layoutlab;

namespace {

const MemcachedSlabModel& defaults() {
    static const MemcachedSlabModel model(MemcachedSlabParams {});
    return model;
}

TEST(MemcachedPageModel, PagesFollowTheMostChunksEverUsedAndAreNeverGivenBack) {
    MemcachedPageModel pages(defaults(), { 0 }); // no page mover
    pages.allocate(1, 30000); // class 1: 96-byte chunks, 10922 a page
    EXPECT_EQ(pages.pagesOf(1), 3u);
    EXPECT_EQ(pages.mallocedPages(), 3u);
    pages.release(1, 28000);
    EXPECT_EQ(pages.pagesOf(1), 3u);
    EXPECT_EQ(pages.activeBytes(), 3u << 20);
    EXPECT_EQ(pages.allocatedBytes(), 2000u * 96);
    EXPECT_EQ(pages.peakAllocatedBytes(), 30000u * 96);
    // Free chunks are reused within their class: no page until they are gone.
    pages.allocate(1, 30766);
    EXPECT_EQ(pages.pagesOf(1), 3u);
    pages.allocate(1, 1);
    EXPECT_EQ(pages.pagesOf(1), 4u);
    // Another class never gets those free chunks: its own page.
    pages.allocate(2, 1);
    EXPECT_EQ(pages.pagesOf(2), 1u);
    EXPECT_EQ(pages.mallocedPages(), 5u);
}

TEST(MemcachedPageModel, TheMoverGivesAPageToTheGlobalPoolAWindowAfterTheLastGrowth) {
    // As measured with -o slab_automove_window=3: 30000 items of class 1 set after the run of second 1,
    // 28000 of them deleted; 30766 free chunks are more than 2.5 pages' worth. The run of second 2 sees the
    // growth, the runs of seconds 2 to 4 hold its mark, and at second 5 one page goes to the global pool,
    // leaving 19844 free.
    MemcachedPageModel pages(defaults(), { 3 });
    pages.advanceTo(1);
    pages.allocate(1, 30000);
    pages.release(1, 28000);
    pages.advanceTo(4);
    EXPECT_EQ(pages.pagesOf(1), 3u);
    EXPECT_EQ(pages.pagesMoved(), 0u);
    pages.advanceTo(5);
    EXPECT_EQ(pages.pagesOf(1), 2u);
    EXPECT_EQ(pages.globalPoolPages(), 1u);
    EXPECT_EQ(pages.pagesMoved(), 1u);
    pages.advanceTo(100); // 19844 free chunks are below the line: nothing more moves
    EXPECT_EQ(pages.pagesOf(1), 2u);
    // total_malloced does not shrink; the pooled page goes to the next class that grows.
    EXPECT_EQ(pages.activeBytes(), 3u << 20);
    pages.allocate(5, 1);
    EXPECT_EQ(pages.pagesOf(5), 1u);
    EXPECT_EQ(pages.globalPoolPages(), 0u);
    EXPECT_EQ(pages.mallocedPages(), 3u);
}

TEST(MemcachedPageModel, MovesComeInBurstsAndSmallerClassesFirst) {
    // As measured with -o slab_automove_window=3: six pages each of classes 1 and 2 set between the runs of
    // seconds 0 and 1, then every item deleted. At second 4 class 1 gives four pages in one burst of runs
    // (down to 2: two pages of free chunks are not more than 2.5); the runs that moved a page broke off
    // before class 2, whose slot holding the growth was not cleared, so class 2 gives its four at second 6.
    MemcachedPageModel pages(defaults(), { 3 });
    pages.advanceTo(0);
    pages.allocate(1, 10922 * 6);
    pages.allocate(2, 8738 * 6);
    pages.release(1, 10922 * 6);
    pages.release(2, 8738 * 6);
    pages.advanceTo(3);
    EXPECT_EQ(pages.pagesOf(1), 6u);
    pages.advanceTo(4);
    EXPECT_EQ(pages.pagesOf(1), 2u);
    EXPECT_EQ(pages.pagesOf(2), 6u);
    pages.advanceTo(5);
    EXPECT_EQ(pages.pagesOf(2), 6u);
    pages.advanceTo(6);
    EXPECT_EQ(pages.pagesOf(2), 2u);
    EXPECT_EQ(pages.globalPoolPages(), 8u);
    EXPECT_EQ(pages.pagesMoved(), 8u);
    EXPECT_EQ(pages.mallocedPages(), 12u);
}

TEST(MemcachedPageModel, SettleMovesWhatAnIdleServerWould) {
    MemcachedPageModel pages(defaults(), { 30 });
    pages.allocate(1, 10922 * 6);
    pages.release(1, 10922 * 5);
    pages.settle();
    // 5 * 10922 free of 6 pages: three pages go, leaving 2 * 10922 free.
    EXPECT_EQ(pages.pagesOf(1), 3u);
    EXPECT_EQ(pages.pagesMoved(), 3u);
}

TEST(MemcachedPageModel, GrowthWithinTheWindowHoldsThePages) {
    MemcachedPageModel pages(defaults(), { 30 });
    pages.allocate(1, 10922 * 4);
    pages.release(1, 10922 * 4);
    for (std::uint64_t second = 1; second <= 60; ++second) {
        pages.advanceTo(second);
        if (second % 20 == 0) { // a page is added every 20 seconds: the window is never clean
            const std::uint64_t beyond = pages.pagesOf(1) * 10922 + 1;
            pages.allocate(1, static_cast<std::uint32_t>(beyond));
            pages.release(1, static_cast<std::uint32_t>(beyond));
        }
    }
    EXPECT_EQ(pages.pagesMoved(), 0u);
    EXPECT_EQ(pages.pagesOf(1), 7u);
}

// The items of a memory limit's eviction, as the page mover sees them: each class's stats set by the test, each
// owner's chunk kept, and what the mover did to them.
class FakeOwners final : public MemcachedChunkOwners {
public:
    MemcachedPageModel* pages = nullptr;
    std::map<std::uint32_t, ClassStats> stats; // by class id; age grows with the second from `since`
    std::set<std::uint32_t> young; // classes whose age is 0 (they evict all the time)
    std::map<std::uint32_t, MemcachedChunk> chunkOf; // by owner
    std::vector<std::uint32_t> lost;
    std::vector<std::uint32_t> rescuedOwners;
    std::uint64_t rescuedAt = 0; // the second of the last rescue

    ClassStats itemStats(std::uint32_t classId, std::uint64_t nowSeconds) const override {
        ClassStats s = stats.count(classId) ? stats.at(classId) : ClassStats {};
        if (s.age == 0 && !young.count(classId) && stats.count(classId))
            s.age = nowSeconds; // items stored at second 0 and never touched
        return s;
    }
    void rescued(std::uint32_t owner, MemcachedChunk from, MemcachedChunk to, std::uint64_t nowSeconds) override {
        EXPECT_EQ(chunkOf.at(owner), from);
        chunkOf[owner] = to;
        rescuedOwners.push_back(owner);
        rescuedAt = nowSeconds;
    }
    void lostToPageMove(std::uint32_t owner) override {
        pages->releaseChunk(chunkOf.at(owner));
        chunkOf.erase(owner);
        lost.push_back(owner);
    }
    void place(std::uint32_t classId, std::uint32_t owner) {
        const auto chunk = pages->tryPlace(classId, owner);
        ASSERT_TRUE(chunk.has_value());
        chunkOf[owner] = *chunk;
    }
    // `count` items of `classId`, owners numbered on from `owner`; returns the last owner.
    std::uint32_t placeMany(std::uint32_t classId, std::uint32_t count, std::uint32_t owner) {
        for (std::uint32_t i = 0; i < count; ++i)
            place(classId, ++owner);
        return owner;
    }
};

TEST(MemcachedPageModel, ChunksAreTakenFromTheFreeListHeadAsSlabsCDoes) {
    FakeOwners owners;
    MemcachedPageModel pages(defaults(), { .moverWindow = 0, .owners = &owners });
    owners.pages = &pages;
    // A new page's chunks are pushed in address order: its last chunk goes first.
    owners.place(1, 1);
    owners.place(1, 2);
    EXPECT_EQ(owners.chunkOf[1], (MemcachedChunk { 0, 10921 }));
    EXPECT_EQ(owners.chunkOf[2], (MemcachedChunk { 0, 10920 }));
    // A freed chunk goes to the head and is the next one taken (LIFO).
    pages.releaseChunk(owners.chunkOf[1]);
    owners.place(1, 3);
    EXPECT_EQ(owners.chunkOf[3], (MemcachedChunk { 0, 10921 }));
    EXPECT_EQ(pages.allocatedBytes(), 2u * 96);
    // Another class's page is the next one malloc'ed.
    owners.place(2, 4);
    EXPECT_EQ(owners.chunkOf[4], (MemcachedChunk { 1, 8737 }));
}

TEST(MemcachedPageModel, TheOldestClassGivesItsFirstPageToTheYoungestEvictingOne) {
    // Class 4 (192-byte chunks, 5461 a page) holds four full pages stored at second 0 and never touched; class 9
    // (600-byte chunks, 1747 a page) fills the rest of a 6-page limit and evicts every second from then on.
    FakeOwners owners;
    MemcachedPageModel pages(defaults(), { .moverWindow = 3, .memoryLimitBytes = 6u << 20, .owners = &owners });
    owners.pages = &pages;
    pages.advanceTo(0);
    std::uint32_t owner = owners.placeMany(4, 4 * 5461, 0);
    owner = owners.placeMany(9, 2 * 1747, owner);
    EXPECT_FALSE(pages.tryPlace(9, ++owner).has_value()) << "the limit: no seventh page";
    owners.stats[4] = {};
    owners.young.insert(9);
    for (std::uint64_t second = 1; second <= 2; ++second) {
        owners.stats[9].evicted += 100;
        pages.advanceTo(second);
        EXPECT_EQ(pages.pagesMoved(), 0u) << "no move before the window has filled once, second " << second;
    }
    // The run of second 3 is the fourth, past the window of 3: class 4's window-averaged age is (1 + 2 + 3) / 3,
    // class 9's 0. Class 4's page 0 goes to class 9, its items lost (class 4 has no free chunk).
    owners.stats[9].evicted += 100;
    pages.advanceTo(3);
    EXPECT_EQ(pages.pagesMoved(), 1u);
    EXPECT_EQ(pages.pagesOf(4), 3u);
    EXPECT_EQ(pages.pagesOf(9), 3u);
    EXPECT_EQ(owners.lost.size(), 5461u);
    EXPECT_EQ(owners.lost.front(), 5461u) << "walked in address order: the item in chunk 0 was stored last";
    EXPECT_EQ(pages.lostToMoves(), 5461u);
    // The new page's chunks are class 9's free list; the moved page is the end of class 9's slab list.
    EXPECT_EQ(pages.tryPlace(9, ++owner), (MemcachedChunk { 0, 1746 }));
    // No move in a run in which the youngest did not evict.
    pages.advanceTo(4);
    EXPECT_EQ(pages.pagesOf(4), 3u);
    // One move a second (not a burst), until class 4 holds 2 pages.
    owners.stats[9].evicted += 100;
    pages.advanceTo(5);
    EXPECT_EQ(pages.pagesOf(4), 2u);
    owners.stats[9].evicted += 100;
    pages.advanceTo(6);
    EXPECT_EQ(pages.pagesOf(4), 2u) << "MIN_PAGES_FOR_SOURCE: a class gives pages only while it has more than 2";
    EXPECT_EQ(pages.pagesMoved(), 2u);
    EXPECT_EQ(pages.mallocedPages(), 6u);
}

TEST(MemcachedPageModel, AMovedPagesItemsGoToFreeChunksOfTheirClassFirst) {
    // Class 4 holds 3 pages with 2000 chunks free (from its last page); class 9 evicts. The first page's items
    // take those free chunks, from the free list's head, and the rest are lost.
    FakeOwners owners;
    MemcachedPageModel pages(defaults(), { .moverWindow = 3, .memoryLimitBytes = 5u << 20, .owners = &owners });
    owners.pages = &pages;
    pages.advanceTo(0);
    owners.placeMany(4, 3 * 5461 - 2000, 0);
    owners.placeMany(9, 2 * 1747, 100000);
    owners.stats[4] = {};
    owners.young.insert(9);
    for (std::uint64_t second = 1; second <= 4; ++second) {
        owners.stats[9].evicted += 10;
        pages.advanceTo(second);
    }
    ASSERT_EQ(pages.pagesMoved(), 1u);
    EXPECT_EQ(pages.rescues(), 2000u);
    EXPECT_EQ(owners.rescuedOwners.size(), 2000u);
    EXPECT_EQ(owners.lost.size(), 5461u - 2000u);
    // Chunk 0 held the page's last item; rescued first, into the free list's head (the third page's highest
    // free chunk).
    EXPECT_EQ(owners.rescuedOwners.front(), 5461u);
    EXPECT_EQ(owners.chunkOf.at(5461), (MemcachedChunk { 2, 1999 }));
    EXPECT_EQ(pages.usedChunksOf(4), 2u * 5461);
}

TEST(MemcachedPageModel, EvictionsBeforeAQuietSpellAreRecordedByTheRunThatFollowsThem) {
    // A quiet window, then one run's evictions in class 9 (all of them: a share over a quarter) and a long gap
    // before the next request. The server's run of the next second records them and moves a page; the runs of
    // the gap are skipped only once that run has been made.
    FakeOwners owners;
    MemcachedPageModel pages(defaults(), { .moverWindow = 3, .memoryLimitBytes = 5u << 20, .owners = &owners });
    owners.pages = &pages;
    owners.placeMany(4, 3 * 5461 - 2000, 0);
    owners.placeMany(9, 2 * 1747, 100000);
    owners.stats[4] = {};
    owners.young.insert(9);
    pages.advanceTo(10); // the pages' growth is recorded, then a window of runs without it
    pages.advanceTo(20);
    ASSERT_EQ(pages.pagesMoved(), 0u);
    owners.stats[9].evicted += 10; // between the run of second 20 and the next request, at second 100
    pages.advanceTo(100);
    ASSERT_EQ(pages.pagesMoved(), 1u);
    EXPECT_EQ(owners.rescuedAt, 21u);
}

} // namespace
