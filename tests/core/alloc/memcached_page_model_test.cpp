// SPDX-License-Identifier: MIT
// memcached's slab pages per class (MemcachedPageModel) against what Debian's memcached 1.6.18 did with
// the same items (measured by hand; the drive tests check the same against a running server).
#include "layoutlab/alloc/memcached_page_model.h"

#include <gtest/gtest.h>

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

} // namespace
