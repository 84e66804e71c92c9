// SPDX-License-Identifier: MIT
// The slab model against the jemalloc this program links: the same allocations and frees, in the same
// order, into a private arena without the thread cache (as the reference engine allocates) and into
// JemallocArenaModel; stats.allocated and stats.active must be equal after every step of the churn.
#include "jemalloc_arena.h"
#include "layoutlab/alloc/jemalloc_arena_model.h"
#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/trace/random.h"

#include <gtest/gtest.h>

#include <vector>

namespace layoutlab {
namespace {

struct Live {
    void* real = nullptr;
    JemallocArenaModel::Handle model;
};

class ArenaModelTest : public ::testing::Test {
protected:
    void SetUp() override {
        auto linked = JemallocModel::linked();
        if (!linked)
            GTEST_SKIP() << "jemalloc is not linked: " << linked.error().message;
        m_allocator = *linked;
        auto arena = JemallocArena::create();
        ASSERT_TRUE(arena) << arena.error().message;
        m_arena = std::move(*arena);
        m_model.emplace(m_allocator->table(), JemallocArenaModel::Options { false, m_allocator->largePad() });
        auto before = m_arena->stats();
        ASSERT_TRUE(before);
        m_before = *before;
    }
    void TearDown() override {
        for (Live& l : m_live)
            m_arena->release(l.real);
        m_live.clear();
    }
    void allocate(std::size_t bytes) {
        Live l;
        l.real = m_arena->allocate(bytes);
        l.model = m_model->allocate(bytes);
        m_live.push_back(l);
    }
    void releaseAt(std::size_t i) {
        m_arena->release(m_live[i].real);
        m_model->release(m_live[i].model);
        m_live[i] = m_live.back();
        m_live.pop_back();
    }
    // Allocated bytes always equal; active bytes equal, or within `activeTolerance` of the arena's where
    // the extent layer's placement (which pages a new slab gets) decides which slab empties first.
    void expectSame(const std::string& when, double activeTolerance = 0) {
        auto now = m_arena->stats();
        ASSERT_TRUE(now);
        EXPECT_EQ(now->allocatedBytes - m_before.allocatedBytes, m_model->allocatedBytes()) << when;
        const auto active = static_cast<double>(now->activeBytes - m_before.activeBytes);
        if (activeTolerance == 0)
            EXPECT_EQ(now->activeBytes - m_before.activeBytes, m_model->activeBytes()) << when;
        else
            EXPECT_NEAR(static_cast<double>(m_model->activeBytes()), active, activeTolerance * active) << when;
    }

    std::shared_ptr<const JemallocModel> m_allocator;
    std::unique_ptr<JemallocArena> m_arena;
    std::optional<JemallocArenaModel> m_model;
    ArenaStats m_before;
    std::vector<Live> m_live;
};

TEST_F(ArenaModelTest, RandomHalfDeletedKeepsTheSlabsWhole) {
    Random random(35);
    for (int i = 0; i < 30000; ++i)
        allocate(96);
    expectSame("after 30,000 regions of 96 bytes");
    for (int i = 0; i < 15000; ++i)
        releaseAt(random.below(m_live.size()));
    expectSame("after a random half freed");
    // Half the regions are gone, nearly every slab stays.
    EXPECT_GT(static_cast<double>(m_model->activeBytes()), 1.8 * static_cast<double>(m_model->allocatedBytes()));
    for (int i = 0; i < 10000; ++i)
        allocate(96);
    expectSame("after refilling the holes");
}

TEST_F(ArenaModelTest, ChurnAcrossSmallAndLargeClassesMatchesTheLinkedArena) {
    // Sizes across every limit: tiny, quantum-spaced, one region per slab, the last small class, large
    // extents of one page and of several.
    const std::size_t sizes[] = { 8, 16, 24, 40, 48, 64, 80, 96, 112, 128, 160, 320, 640, 1280, 2560, 4096, 5000, 12288,
        14336, 16384, 20000, 40000, 70000, 300000 };
    Random random(7);
    for (int step = 0; step < 40; ++step) {
        for (int i = 0; i < 2000; ++i) {
            if (!m_live.empty() && random.below(100) < 45)
                releaseAt(random.below(m_live.size()));
            else
                allocate(sizes[random.below(std::size(sizes))] - random.below(8));
        }
        // Sizes from 8 bytes to 300 KiB in one arena: slabs and large extents share freed pages, and where
        // jemalloc places a slab among them (its grown chunks, extents that never merge across a chunk's
        // head) is modelled by address order only.
        expectSame("after churn step " + std::to_string(step), 0.005);
    }
    while (!m_live.empty())
        releaseAt(random.below(m_live.size()));
    expectSame("after everything freed");
    EXPECT_EQ(m_model->activeBytes(), 0u);
}

TEST_F(ArenaModelTest, DriftingSizesOverwriteAsAServerDoes) {
    // Each key's value is made anew a little larger (the new one first, then the old one freed).
    Random random(3);
    std::vector<std::size_t> size(20000);
    std::vector<std::size_t> at(20000);
    for (std::size_t k = 0; k < size.size(); ++k) {
        size[k] = 20 + random.below(60);
        at[k] = m_live.size();
        allocate(size[k]);
    }
    for (int round = 0; round < 60000; ++round) {
        const std::size_t k = random.below(size.size());
        size[k] += random.below(9);
        Live fresh { m_arena->allocate(size[k]), m_model->allocate(size[k]) };
        m_arena->release(m_live[at[k]].real);
        m_model->release(m_live[at[k]].model);
        m_live[at[k]] = fresh;
    }
    expectSame("after 60,000 drifting overwrites");
}

} // namespace
} // namespace layoutlab
