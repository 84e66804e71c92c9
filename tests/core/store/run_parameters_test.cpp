// SPDX-License-Identifier: MIT
// Run parameters are written and read back through one struct.

#include "layoutlab/store/run_parameters.h"

#include <gtest/gtest.h>

namespace layoutlab {
namespace {

TEST(RunParameters, RoundTripKeepsEveryFieldAndTheExtras) {
    RunParameters p;
    p.trace = "t.lltrace";
    p.layout = "valkey:threshold=128";
    p.allocator = "jemalloc";
    p.thresholds = { 64, 128 };
    p.format = "twitter";
    p.onError = "skip";
    p.keySize = 24;
    p.thresholdParameter = "threshold";
    p.layoutFile = RunParameters::LayoutFile { "what-if", "w.toml", "abc", "[layout]" };
    p.cacheGeometry = "32K:8,1M:16";
    p.cacheSampleGets = 100000;
    p.batchCell = "cell";
    p.slabModel = SlabModelOptions { false, 3 };
    p.timelineSamples = 50;
    p.extra = { { "weight_memory", 1.0 }, { "engine", "redis" } };
    const auto text = p.toJson().dump();
    auto back = RunParameters::fromJson(text);
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(back->toJson().dump(), text);
    EXPECT_EQ(back->thresholds, p.thresholds);
    EXPECT_EQ(back->layoutFile->path, "w.toml");
    EXPECT_EQ(back->extra["engine"], "redis");
    ASSERT_TRUE(back->slabModel);
    EXPECT_FALSE(back->slabModel->threadCache);
    EXPECT_EQ(back->slabModel->pageMoverWindow, 3u);
    EXPECT_EQ(back->timelineSamples, 50u);
    // A run stored before the page mover, the timeline and the expire cycles: their defaults.
    auto older = RunParameters::fromJson(R"({"slab_model": {"thread_cache": true}})");
    ASSERT_TRUE(older);
    EXPECT_EQ(older->slabModel->pageMoverWindow, SlabModelOptions {}.pageMoverWindow);
    EXPECT_FALSE(older->slabModel->expireCycle); // nor the expire cycles
    EXPECT_EQ(older->timelineSamples, 0u);
}

TEST(RunParameters, AValueOfTheWrongTypeIsAnError) {
    EXPECT_FALSE(RunParameters::fromJson(R"({"thresholds": "64"})"));
    EXPECT_FALSE(RunParameters::fromJson("[1]"));
    auto old = RunParameters::fromJson(R"({"trace": "t", "kind_of_its_own": 3})");
    ASSERT_TRUE(old);
    EXPECT_EQ(old->extra["kind_of_its_own"], 3);
}

} // namespace
} // namespace layoutlab
