// SPDX-License-Identifier: MIT
// `layoutlab latency`: the pointer-chase calibration of what a miss costs on this host.

#include "cli_runner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using CliTest = layoutlab::test::CliTestBase;

// One buffer per level (half of it) and one for memory (at least 64 MiB); every figure is a time, and a
// load from memory takes longer than an L1 hit on any machine.
TEST_F(CliTest, LatencyMeasuresEachLevelAndMemory) {
    const auto r = run({ "latency", "--cache-geometry", "32K:8,256K:8", "--passes", "3", "--json" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["cache_geometry"], "32K:8,256K:8");
    EXPECT_EQ(j["passes"], 3);
    ASSERT_EQ(j["points"].size(), 3u);
    EXPECT_EQ(j["points"][0]["name"], "L1");
    EXPECT_EQ(j["points"][0]["buffer_bytes"], 16384);
    EXPECT_EQ(j["points"][1]["name"], "LLC");
    EXPECT_EQ(j["points"][1]["buffer_bytes"], 131072);
    EXPECT_EQ(j["points"][2]["name"], "memory");
    EXPECT_EQ(j["points"][2]["buffer_bytes"], 64 << 20);
    for (const auto& p : j["points"]) {
        EXPECT_GT(p["ns_per_load"].get<double>(), 0.0) << p;
        EXPECT_GE(p["uncertainty_ns"].get<double>(), 0.0) << p;
    }
    EXPECT_GT(j["points"][2]["ns_per_load"].get<double>(), j["points"][0]["ns_per_load"].get<double>());
    const auto table = run({ "latency", "--cache-geometry", "32K:8,256K:8", "--passes", "1" });
    EXPECT_NE(table.out.find("memory"), std::string::npos) << table.out;
    EXPECT_EQ(run({ "latency", "--cache-geometry", "lots" }).exitCode, 2);
    EXPECT_EQ(run({ "latency", "--passes", "0" }).exitCode, 2);
}

} // namespace
