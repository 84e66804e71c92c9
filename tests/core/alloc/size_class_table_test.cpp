// SPDX-License-Identifier: MIT
// Property tests of the jemalloc size-class construction, in the style of jemalloc's
// test/unit/size_classes.c, run for several (quantum, page) configurations.

#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/alloc/size_class_table.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

struct Config {
    int lgQuantum;
    int lgPage;
};

class SizeClassProperties : public ::testing::TestWithParam<Config> {
protected:
    SizeClassTable table() const {
        SizeClassParams p;
        p.lgQuantum = GetParam().lgQuantum;
        p.lgPage = GetParam().lgPage;
        return SizeClassTable::fromParams(p);
    }
};

TEST_P(SizeClassProperties, ClassesStrictlyIncrease) {
    const auto t = table();
    const auto& c = t.classes();
    ASSERT_GT(c.size(), 100u);
    for (std::size_t i = 1; i < c.size(); ++i)
        EXPECT_LT(c[i - 1].size, c[i].size) << "at index " << i;
}

TEST_P(SizeClassProperties, SizeToClassToSizeRoundTrips) {
    const auto t = table();
    const auto& c = t.classes();
    for (std::size_t i = 0; i < c.size(); ++i) {
        EXPECT_EQ(t.classIndex(c[i].size), i);
        EXPECT_EQ(t.usableSize(c[i].size), c[i].size);
        if (i + 1 < c.size()) {
            EXPECT_EQ(t.usableSize(c[i].size + 1), c[i + 1].size);
        }
    }
}

TEST_P(SizeClassProperties, RoundingIsMonotoneAndTight) {
    const auto t = table();
    std::uint64_t previous = 0;
    for (std::uint64_t n = 1; n <= (4u << 20); n += (n < 65536 ? 1 : 61)) {
        const auto usable = t.usableSize(n);
        ASSERT_GE(usable, n);
        ASSERT_GE(usable, previous);
        const auto index = t.classIndex(n);
        if (index > 0) {
            ASSERT_LT(t.classes()[index - 1].size, n) << "request " << n << " fits a smaller class";
        }
        previous = usable;
    }
}

TEST_P(SizeClassProperties, LargestSmallClassFollowsThePage) {
    // LAYOUTS.md: largest small class = 2^(LG_PAGE+1) + 3 * 2^(LG_PAGE-1).
    const auto t = table();
    const int lgPage = GetParam().lgPage;
    EXPECT_EQ(t.largestSmallClass(), (std::uint64_t { 1 } << (lgPage + 1)) + 3 * (std::uint64_t { 1 } << (lgPage - 1)));
}

TEST_P(SizeClassProperties, SlabsHoldWholeRegions) {
    const auto t = table();
    for (const auto& c : t.classes()) {
        if (!c.isSlab)
            continue;
        const std::uint64_t slabBytes = std::uint64_t { c.slabPages } << GetParam().lgPage;
        EXPECT_EQ(slabBytes, c.size * c.regionsPerSlab) << "class " << c.size;
        EXPECT_GE(c.slabPages, 1u);
    }
}

INSTANTIATE_TEST_SUITE_P(QuantumAndPage, SizeClassProperties,
    ::testing::Values(
        Config { 4, 12 }, Config { 3, 12 }, Config { 4, 14 }, Config { 3, 14 }, Config { 4, 16 }, Config { 3, 16 }),
    [](const auto& info) {
        return "quantum" + std::to_string(1 << info.param.lgQuantum) + "_page" + std::to_string(1 << info.param.lgPage);
    });

std::vector<std::uint64_t> firstClasses(const SizeClassTable& t, std::uint64_t upTo) {
    std::vector<std::uint64_t> out;
    for (const auto& c : t.classes())
        if (c.size <= upTo)
            out.push_back(c.size);
    return out;
}

TEST(SizeClassTable, DebianQuantum16ClassesUpTo1KiB) {
    // LAYOUTS-valkey-redis.md §1: Debian libjemalloc2 5.3.0, read with nallocx().
    SizeClassParams p;
    const std::vector<std::uint64_t> expected { 8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448,
        512, 640, 768, 896, 1024 };
    EXPECT_EQ(firstClasses(SizeClassTable::fromParams(p), 1024), expected);
}

TEST(SizeClassTable, BundledQuantum8ClassesUpTo1KiB) {
    // LAYOUTS-valkey-redis.md §1: Valkey's deps/jemalloc with --with-lg-quantum=3.
    SizeClassParams p;
    p.lgQuantum = 3;
    const std::vector<std::uint64_t> expected { 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256,
        320, 384, 448, 512, 640, 768, 896, 1024 };
    EXPECT_EQ(firstClasses(SizeClassTable::fromParams(p), 1024), expected);
}

TEST(SizeClassTable, BinCountsOfDebianAndBundledBuilds) {
    SizeClassParams q16;
    SizeClassParams q8;
    q8.lgQuantum = 3;
    auto bins = [](const SizeClassTable& t) {
        return std::count_if(t.classes().begin(), t.classes().end(), [](const SizeClass& c) { return c.isSlab; });
    };
    EXPECT_EQ(bins(SizeClassTable::fromParams(q16)), 36); // LAYOUTS.md: 36 bins, 8 .. 14336
    EXPECT_EQ(bins(SizeClassTable::fromParams(q8)), 39); // 24, 40, 56 added
}

TEST(SizeClassTable, SlabGeometryOfReferenceClasses) {
    // LAYOUTS.md: 48 B -> 12 KiB / 256; 80 -> 20 KiB / 256; 112 -> 28 KiB / 256; 128 -> 4 KiB / 32; 160 -> 20 KiB /
    // 128.
    const auto t = SizeClassTable::fromParams(SizeClassParams {});
    auto find = [&](std::uint64_t size) { return t.classes()[t.classIndex(size)]; };
    EXPECT_EQ(find(48).slabPages, 3u);
    EXPECT_EQ(find(48).regionsPerSlab, 256u);
    EXPECT_EQ(find(80).slabPages, 5u);
    EXPECT_EQ(find(80).regionsPerSlab, 256u);
    EXPECT_EQ(find(112).slabPages, 7u);
    EXPECT_EQ(find(128).slabPages, 1u);
    EXPECT_EQ(find(128).regionsPerSlab, 32u);
    EXPECT_EQ(find(160).slabPages, 5u);
    EXPECT_EQ(find(160).regionsPerSlab, 128u);
}

TEST(AllocatorModel, LinesTouchedAverageOverRegionOffsets) {
    const JemallocModel q8(SizeClassParams { 3, 12 });
    // 55 bytes in 56-byte regions: offsets 0,56,48,...,8 -> lines 1,2,2,2,2,2,2,1 -> 1.75 (GETln 2.75 - bucket).
    EXPECT_DOUBLE_EQ(expectedLinesTouched(55, q8.alignment(56)), 1.75);
    // 64- and 128-byte regions are line aligned.
    EXPECT_DOUBLE_EQ(expectedLinesTouched(63, q8.alignment(64)), 1.0);
    EXPECT_DOUBLE_EQ(expectedLinesTouched(127, q8.alignment(128)), 2.0);
    // A large extent is page aligned: 1030 bytes -> 17 lines.
    EXPECT_DOUBLE_EQ(expectedLinesTouched(1030, q8.alignment(1280)), 17.0);
    EXPECT_DOUBLE_EQ(expectedLinesTouched(0, q8.alignment(64)), 0.0);
}

} // namespace
