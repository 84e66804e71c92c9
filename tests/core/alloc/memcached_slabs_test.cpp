// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/alloc/memcached_slabs.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

TEST(MemcachedSlabs, DefaultClassListMatchesMemcached1618) {
    // LAYOUTS-memcached-dalli.md §2: the 39 classes of the defaults (-n 48 -f 1.25, 1 MiB pages).
    const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected { { 96, 10922 }, { 120, 8738 }, { 152, 6898 },
        { 192, 5461 }, { 240, 4369 }, { 304, 3449 }, { 384, 2730 }, { 480, 2184 }, { 600, 1747 }, { 752, 1394 },
        { 944, 1110 }, { 1184, 885 }, { 1480, 708 }, { 1856, 564 }, { 2320, 451 }, { 2904, 361 }, { 3632, 288 },
        { 4544, 230 }, { 5680, 184 }, { 7104, 147 }, { 8880, 118 }, { 11104, 94 }, { 13880, 75 }, { 17352, 60 },
        { 21696, 48 }, { 27120, 38 }, { 33904, 30 }, { 42384, 24 }, { 52984, 19 }, { 66232, 15 }, { 82792, 12 },
        { 103496, 10 }, { 129376, 8 }, { 161720, 6 }, { 202152, 5 }, { 252696, 4 }, { 315872, 3 }, { 394840, 2 },
        { 524288, 2 } };
    const MemcachedSlabModel model(MemcachedSlabParams {});
    ASSERT_EQ(model.slabClasses().size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(model.slabClasses()[i].id, i + 1);
        EXPECT_EQ(model.slabClasses()[i].chunkBytes, expected[i].first) << "class " << i + 1;
        EXPECT_EQ(model.slabClasses()[i].perSlab, expected[i].second) << "class " << i + 1;
    }
}

TEST(MemcachedSlabs, ClassIdFollowsSlabsClsid) {
    const MemcachedSlabModel model(MemcachedSlabParams {});
    EXPECT_EQ(model.classId(91), 1u);
    EXPECT_EQ(model.classId(96), 1u);
    EXPECT_EQ(model.classId(97), 2u);
    EXPECT_EQ(model.classId(394841), 39u); // above class 38: power_largest
    EXPECT_EQ(model.classId(1048576), 39u);
    EXPECT_EQ(model.classId(1048577), 0u); // larger than item_size_max: refused
    EXPECT_EQ(model.usableSize(600), 600u);
    EXPECT_EQ(model.usableSize(601), 752u);
    EXPECT_EQ(model.usableSize(524289), 0u);
}

TEST(MemcachedSlabs, SpecParameters) {
    auto alloc = parseAllocator("memcached:min=64,factor=2");
    ASSERT_TRUE(alloc) << alloc.error().describe();
    const auto& model = dynamic_cast<const MemcachedSlabModel&>(**alloc);
    EXPECT_EQ(model.slabClasses().front().chunkBytes, 112u); // 48 + 64
    EXPECT_EQ(model.slabClasses()[1].chunkBytes, 224u);
    EXPECT_FALSE(parseAllocator("memcached:factor=0.5"));
    EXPECT_FALSE(parseAllocator("memcached:colour=blue"));
    EXPECT_FALSE(parseAllocator("tcmalloc"));
    EXPECT_EQ(parseAllocator("tcmalloc").error().code, ErrorCode::Usage);
}

} // namespace
