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
    p.extra = { { "weight_memory", 1.0 }, { "engine", "redis" } };
    const auto text = p.toJson().dump();
    auto back = RunParameters::fromJson(text);
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(back->toJson().dump(), text);
    EXPECT_EQ(back->thresholds, p.thresholds);
    EXPECT_EQ(back->layoutFile->path, "w.toml");
    EXPECT_EQ(back->extra["engine"], "redis");
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
