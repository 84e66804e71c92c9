// SPDX-License-Identifier: MIT
// The reference engine against the simulator: with the allocator model set to the linked jemalloc, what
// jemalloc's own statistics say the store holds equals what the simulator predicts, byte for byte.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/reference_engine.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

struct TraceCase {
    const char* name;
    std::uint64_t keys;
    std::uint64_t ops;
    const char* keySize;
    const char* valueSize;
    double ttl;
    double intValues;
    double deletes;
};

const TraceCase kCases[] = {
    { "seed-16-96", 20000, 0, "16", "96", 0, 0, 0 },
    { "mixed-with-ttl", 20000, 40000, "uniform:8:40", "lognormal:3.5:1:1:2000", 0.4, 0.1, 0.1 },
    { "large-values", 2000, 4000, "uniform:10:20", "uniform:1:300000", 0.2, 0, 0.2 },
    { "straddling-44", 30000, 30000, "16", "uniform:30:60", 0, 0, 0.05 },
};

SyntheticTrace makeTrace(const TraceCase& c) {
    auto cfg = makeGeneratorConfig(
        c.keys, c.ops, c.keySize, c.valueSize, c.ttl, c.intValues, 1.0 - c.deletes - 0.2, c.deletes, "zipf:0.9", 11);
    EXPECT_TRUE(cfg) << cfg.error().describe();
    return SyntheticTrace(*cfg);
}

ThresholdPoint predict(const LayoutPtr& layout, const AllocatorPtr& alloc, std::uint32_t threshold, const TraceCase& c,
    SimulationResult* full = nullptr) {
    auto trace = makeTrace(c);
    auto result = simulate({ layout, alloc, { threshold } }, trace);
    EXPECT_TRUE(result) << result.error().describe();
    if (full)
        *full = *result;
    return result->points.at(0);
}

class ReferenceEngineTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        if (!ReferenceEngine::available(&why))
            GTEST_SKIP() << why;
        auto alloc = parseAllocator("jemalloc");
        ASSERT_TRUE(alloc) << alloc.error().describe();
        m_alloc = *alloc;
    }
    // A reference engine for the layout at the threshold, loaded with the case's trace.
    std::pair<std::unique_ptr<ReferenceEngine>, ReferenceLoadReport> loadEngine(
        const LayoutPtr& layout, std::uint32_t threshold, const TraceCase& c, std::uint32_t getSample = 100000) {
        auto engine = ReferenceEngine::create({ layout, m_alloc, threshold, getSample });
        EXPECT_TRUE(engine) << engine.error().describe();
        if (!engine)
            return {};
        auto trace = makeTrace(c);
        auto loaded = (*engine)->load(trace);
        EXPECT_TRUE(loaded) << loaded.error().describe();
        if (!loaded)
            return {};
        return { std::move(*engine), *loaded };
    }
    AllocatorPtr m_alloc;
};

TEST_F(ReferenceEngineTest, RedisAllocatedBytesEqualThePrediction) {
    auto layout = parseLayout("redis-7.0");
    ASSERT_TRUE(layout);
    for (const auto& c : kCases) {
        for (std::uint32_t threshold : { 44u, 128u }) {
            SCOPED_TRACE(::testing::Message() << c.name << " at " << threshold);
            const auto predicted = predict(*layout, m_alloc, threshold, c);
            const auto [engine, loaded] = loadEngine(*layout, threshold, c);
            ASSERT_TRUE(engine);
            EXPECT_EQ(loaded.liveKeys, predicted.keys);
            EXPECT_EQ(loaded.allocatedBytes, loaded.keyBytes + loaded.indexBytes);
            EXPECT_EQ(loaded.allocatedBytes, predicted.usableBytes);
            EXPECT_EQ(loaded.indexBytes, predicted.indexBytes);
        }
    }
}

TEST_F(ReferenceEngineTest, ValkeyAllocatedBytesEqualThePredictionChildBucketsAside) {
    // The simulator estimates Valkey's child buckets (it keeps no hashes); the real table has a count.
    for (const char* spec : { "valkey-8.1", "valkey-9.1" }) {
        auto layout = parseLayout(spec);
        ASSERT_TRUE(layout);
        for (const auto& c : kCases) {
            for (std::uint32_t threshold : { 64u, 128u }) {
                SCOPED_TRACE(::testing::Message() << spec << " " << c.name << " at " << threshold);
                SimulationResult full;
                const auto predicted = predict(*layout, m_alloc, threshold, c, &full);
                const auto [engine, loaded] = loadEngine(*layout, threshold, c);
                ASSERT_TRUE(engine);
                EXPECT_EQ(loaded.liveKeys, predicted.keys);
                EXPECT_EQ(loaded.allocatedBytes, loaded.keyBytes + loaded.indexBytes);
                const std::uint64_t bucketBytes = 64;
                const auto predictedChildren = static_cast<std::uint64_t>(std::llround(full.indexChildBuckets));
                EXPECT_EQ(loaded.allocatedBytes - loaded.indexChildBuckets * bucketBytes,
                    predicted.usableBytes - predictedChildren * bucketBytes);
                // ... and the estimate is close to the count: within 10% for a table filled once; deletes
                // leave sparse last buckets (hashtable.c prunes only when a hole is filled from them), so
                // after churn the real table holds more, up to 16% more in these traces.
                const double tolerance = std::max(8.0, (c.ops == 0 ? 0.10 : 0.20) * full.indexChildBuckets);
                EXPECT_NEAR(static_cast<double>(loaded.indexChildBuckets), full.indexChildBuckets, tolerance);
            }
        }
    }
}

} // namespace

namespace {

TEST_F(ReferenceEngineTest, SlabsAfterDeletingEveryOtherKeyMatchTheSlabModel) {
    // Keys written once each, in order: every class fills its slabs region by region (lowest free region
    // first), so the slab model's minimum slab count is what jemalloc holds. Deleting every second key
    // frees regions but no slab: each slab keeps half its regions, and that half is external
    // fragmentation, which the slab model predicts exactly.
    auto layout = parseLayout("redis-7.0");
    ASSERT_TRUE(layout);
    const TraceCase c { "seed-16-96", 30000, 0, "16", "96", 0, 0, 0 };
    const auto predicted = predict(*layout, m_alloc, 44, c);
    const auto [engine, loaded] = loadEngine(*layout, 44, c);
    ASSERT_TRUE(engine);
    const auto deleted = engine->deleteEveryOtherKey();
    EXPECT_EQ(deleted, c.keys / 2);
    auto stats = engine->arenaStats();
    ASSERT_TRUE(stats) << stats.error().describe();

    std::uint64_t predictedFragmentation = 0, measuredFragmentation = 0;
    std::size_t classesChecked = 0;
    for (const auto& usage : predicted.sizeClasses) {
        if (usage.regionsPerSlab == 0)
            continue; // page-multiple extents: the index array
        SCOPED_TRACE(::testing::Message() << "class " << usage.classBytes);
        const auto bin = std::find_if(stats->bins.begin(), stats->bins.end(),
            [&](const ArenaBinStats& b) { return b.regionBytes == usage.classBytes; });
        ASSERT_NE(bin, stats->bins.end());
        const std::uint64_t perKey = usage.allocations / predicted.keys;
        const std::uint64_t regionsLeft = usage.allocations - deleted * perKey;
        EXPECT_EQ(bin->regionsPerSlab, usage.regionsPerSlab);
        EXPECT_EQ(bin->currentSlabs, usage.slabs);
        EXPECT_EQ(bin->currentRegions, regionsLeft);
        predictedFragmentation
            += usage.slabs * usage.regionsPerSlab * usage.classBytes - regionsLeft * usage.classBytes;
        measuredFragmentation
            += bin->currentSlabs * bin->regionsPerSlab * bin->regionBytes - bin->currentRegions * bin->regionBytes;
        ++classesChecked;
    }
    EXPECT_GE(classesChecked, 2u);
    EXPECT_EQ(measuredFragmentation, predictedFragmentation);
    EXPECT_GT(measuredFragmentation, predicted.usableBytes / 4); // half of the slabs' bytes
}

TEST_F(ReferenceEngineTest, GetsFindEveryKeyTheTraceReads) {
    auto layout = parseLayout("valkey-8.1");
    ASSERT_TRUE(layout);
    const TraceCase c { "mixed", 5000, 20000, "uniform:8:40", "uniform:1:300", 0.3, 0.1, 0.1 };
    const auto [engine, loaded] = loadEngine(*layout, 64, c, 1000);
    ASSERT_TRUE(engine);
    const auto& sample = engine->getSample();
    ASSERT_FALSE(sample.empty());
    EXPECT_LE(sample.size(), 1000u);
    const auto replay = engine->replayGets(sample);
    EXPECT_EQ(replay.gets, sample.size());
    EXPECT_GT(replay.nanosecondsPerGet, 0.0);
    EXPECT_NE(replay.checksum, 0u);
    // The sample holds the trace's GET hits, but later writes and deletes may have removed some keys.
    EXPECT_GT(replay.hits, replay.gets / 2);
    const std::uint32_t absent[] = { 4000000000u };
    EXPECT_EQ(engine->replayGets(absent).hits, 0u);
}

TEST_F(ReferenceEngineTest, RefusesWhatItCannotBuild) {
    auto memcached = parseLayout("memcached-1.6");
    ASSERT_TRUE(memcached);
    auto slabs = parseAllocator("memcached");
    ASSERT_TRUE(slabs);
    auto refused = ReferenceEngine::create({ *memcached, *slabs, 0 });
    ASSERT_FALSE(refused);
    auto emulated = parseAllocator("jemalloc:quantum=8,page=4096");
    auto redis = parseLayout("redis-7.0");
    auto notLinked = ReferenceEngine::create({ *redis, *emulated, 0 });
    ASSERT_FALSE(notLinked);
    EXPECT_NE(notLinked.error().message.find("linked"), std::string::npos) << notLinked.error().message;
}

} // namespace

namespace {

// The slab model (SimulationConfig::slabs, no thread cache, as the reference engine allocates) against
// the reference engine's private arena: stats.allocated and stats.active after churn traces (deletes,
// overwrites that change a value's class, TTLs that expire, values from 1 byte to 300 KB) must agree
// within 0.1%; in these traces they are equal.
TEST_F(ReferenceEngineTest, ActiveBytesAfterChurnEqualTheSlabModel) {
    const TraceCase churn[] = {
        { "half-deleted", 30000, 30000, "16", "96", 0, 0, 0.6 },
        { "mixed-with-ttl", 20000, 40000, "uniform:8:40", "lognormal:3.5:1:1:2000", 0.4, 0.1, 0.1 },
        { "large-values", 2000, 4000, "uniform:10:20", "uniform:1:300000", 0.2, 0, 0.2 },
        { "overwrites", 30000, 60000, "16", "uniform:30:60", 0, 0, 0.05 },
    };
    for (const char* spec : { "valkey-9.1", "valkey-8.1", "valkey-8.0", "redis-7.0" }) {
        auto layout = parseLayout(spec);
        ASSERT_TRUE(layout);
        const std::uint32_t own = (*layout)->threshold()->value;
        for (const auto& c : churn) {
            for (std::uint32_t threshold : { 64u, own }) {
                SCOPED_TRACE(::testing::Message() << spec << " " << c.name << " at " << threshold);
                auto trace = makeTrace(c);
                SimulationConfig config { *layout, m_alloc, { threshold } };
                config.slabs = SlabModelOptions { false };
                auto result = simulate(config, trace);
                ASSERT_TRUE(result) << result.error().describe();
                const auto& arena = result->points.at(0).arena;
                ASSERT_TRUE(arena.has_value());
                const auto [engine, loaded] = loadEngine(*layout, threshold, c);
                ASSERT_TRUE(engine);
                EXPECT_EQ(arena->allocatedBytes, loaded.allocatedBytes);
                EXPECT_NEAR(static_cast<double>(arena->activeBytes), static_cast<double>(loaded.activeBytes),
                    0.001 * static_cast<double>(loaded.activeBytes));
                EXPECT_GE(arena->peakActiveBytes, arena->activeBytes);
                EXPECT_GE(arena->activeBytes, arena->allocatedBytes);
            }
        }
    }
}

} // namespace
