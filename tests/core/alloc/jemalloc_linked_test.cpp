// SPDX-License-Identifier: MIT
// The emulated size classes against the jemalloc this program links: for every size from 1 byte to
// 4 MiB, the emulation with the linked library's quantum and page equals nallocx().

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/alloc/jemalloc_model.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

TEST(JemallocLinked, EmulationEqualsNallocxUpTo4MiB) {
    if (!JemallocModel::linkedAvailable())
        GTEST_SKIP() << "this build does not link jemalloc (LAYOUTLAB_WITH_JEMALLOC=OFF or sanitizer build)";
    auto linked = JemallocModel::linked();
    ASSERT_TRUE(linked) << linked.error().describe();
    const JemallocModel emulated((*linked)->params());
    std::uint64_t mismatches = 0;
    for (std::uint64_t n = 1; n <= (4u << 20); ++n) {
        const auto expected = linkedNallocx(n);
        if (emulated.usableSize(n) != expected && ++mismatches <= 5)
            ADD_FAILURE() << "size " << n << ": emulated " << emulated.usableSize(n) << ", nallocx " << expected;
    }
    EXPECT_EQ(mismatches, 0u);
}

TEST(JemallocLinked, MallctlSlabGeometryEqualsEmulation) {
    if (!JemallocModel::linkedAvailable())
        GTEST_SKIP() << "this build does not link jemalloc";
    auto linked = JemallocModel::linked();
    ASSERT_TRUE(linked) << linked.error().describe();
    const JemallocModel emulated((*linked)->params());
    const auto& real = (*linked)->table().classes();
    const auto& model = emulated.table().classes();
    ASSERT_GE(model.size(), 100u); // the emulation stops at 2^40-byte classes, the library goes on
    for (std::size_t i = 0; i < std::min(real.size(), model.size()); ++i) {
        EXPECT_EQ(real[i].size, model[i].size) << "class " << i;
        EXPECT_EQ(real[i].isSlab, model[i].isSlab) << "class " << real[i].size;
        if (real[i].isSlab) {
            EXPECT_EQ(real[i].regionsPerSlab, model[i].regionsPerSlab) << "class " << real[i].size;
            EXPECT_EQ(real[i].slabPages, model[i].slabPages) << "class " << real[i].size;
        }
    }
}

TEST(JemallocLinked, SpecParsesToTheLinkedModel) {
    auto alloc = parseAllocator("jemalloc");
    if (!JemallocModel::linkedAvailable()) {
        EXPECT_FALSE(alloc);
        return;
    }
    ASSERT_TRUE(alloc) << alloc.error().describe();
    EXPECT_EQ((*alloc)->spec(), "jemalloc");
    EXPECT_EQ((*alloc)->usableSize(100), linkedNallocx(100));
}

} // namespace
