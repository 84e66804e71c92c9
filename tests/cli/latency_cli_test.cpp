// SPDX-License-Identifier: MIT
// `layoutlab latency`: the pointer-chase calibration of what a miss costs on this host.

#include "cli_runner.h"

#include <cstdio>
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

namespace {

using CliTest = layoutlab::test::CliTestBase;

// The seed case: at 128 a GET has one dependent load and two lines fewer, so less memory stall; each
// point's figure lies within its range, and the change is stated with its uncertainty.
TEST_F(CliTest, SweepWithLatencyPredictsTheStallOfEachPoint) {
    const auto r = run({ "sweep", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--layout", "valkey-9.1",
        "--thresholds", "64,128", "--cache-geometry", "32K:8,1M:16", "--latency", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["load_latencies"]["level_ns"].size(), 2u);
    EXPECT_GT(j["load_latencies"]["memory_ns"].get<double>(), 0.0);
    ASSERT_EQ(j["points"].size(), 2u);
    for (const auto& p : j["points"]) {
        const auto& s = p["stall"];
        EXPECT_LE(s["overlapped_ns"].get<double>(), s["ns_per_get"].get<double>()) << s;
        EXPECT_LE(s["ns_per_get"].get<double>(), s["serialized_ns"].get<double>()) << s;
        EXPECT_GT(s["uncertainty_ns"].get<double>(), 0.0) << s;
    }
    EXPECT_LT(
        j["points"][1]["stall"]["serialized_ns"].get<double>(), j["points"][0]["stall"]["serialized_ns"].get<double>());
    const auto text = run({ "sweep", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--layout", "valkey-9.1",
        "--thresholds", "64,128", "--cache-geometry", "32K:8,1M:16", "--latency", "--no-db" });
    EXPECT_NE(text.out.find("from 64 to 128: -"), std::string::npos) << text.out;
    // advise gives the same beside its advice.
    const auto advice
        = nlohmann::json::parse(run({ "advise", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--thresholds",
                                        "64,128", "--cache-geometry", "32K:8,1M:16", "--latency", "--json", "--no-db" })
                                    .out);
    EXPECT_TRUE(advice["points"][0].contains("stall")) << advice.dump();
    EXPECT_TRUE(advice.contains("load_latencies"));
    EXPECT_EQ(
        run({ "advise", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--no-cache", "--latency" }).exitCode,
        2);
    // The run keeps the latencies it was predicted with: report shows the same stall.
    const auto stored = run({ "sweep", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--layout", "valkey-9.1",
        "--thresholds", "64,128", "--cache-geometry", "32K:8,1M:16", "--latency", "--json" });
    ASSERT_EQ(stored.exitCode, 0) << stored.err;
    const double at128 = nlohmann::json::parse(stored.out)["points"][1]["stall"]["ns_per_get"];
    ASSERT_EQ(run({ "report", "1", "-o", path("report") }).exitCode, 0);
    const std::string html = layoutlab::test::slurp(path("report") + "/index.html");
    EXPECT_NE(html.find("<h3>Memory stall per GET</h3>"), std::string::npos);
    char cell[64];
    std::snprintf(cell, sizeof cell, "<tr><td>128</td><td>%.1f</td>", at128);
    EXPECT_NE(html.find(cell), std::string::npos) << cell;
    // The stall comes from the cache model's misses.
    const auto refused = run({ "sweep", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--layout", "valkey-9.1",
        "--thresholds", "64,128", "--latency", "--no-db" });
    EXPECT_EQ(refused.exitCode, 2);
    EXPECT_NE(refused.err.find("add --cache"), std::string::npos) << refused.err;
}

// Ten pipelined GETs on Valkey 9.1, which looks a client's queued keys up together (prefetchCommandQueueKeys):
// the misses that start a step are shared by the ten, so each point stalls less and the change is smaller
// than one GET at a time. Valkey 8.1 has no such batch, and --prefetch-batch 0 turns it off.
TEST_F(CliTest, APipelineOfGetsOverlapsTheirLookupsOnValkey9) {
    auto sweep = [&](const std::string& layout, std::vector<std::string> more) {
        std::vector<std::string> args { "sweep", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--layout",
            layout, "--thresholds", "64,128", "--cache-geometry", "32K:8,1M:16", "--latency", "--json", "--no-db" };
        args.insert(args.end(), more.begin(), more.end());
        const auto r = run(args);
        EXPECT_EQ(r.exitCode, 0) << r.err;
        return nlohmann::json::parse(r.out);
    };
    const auto batched = sweep("valkey-9.1", { "--get-pipeline", "10" });
    EXPECT_EQ(batched["load_latencies"]["overlapped_lookups"], 10);
    const auto each = sweep("valkey-9.1", {});
    EXPECT_EQ(each["load_latencies"]["overlapped_lookups"], 1);
    // Latencies are measured afresh for each run; the share of the stall paid does not depend on them much.
    for (std::size_t i = 0; i < 2; ++i) {
        const double shareBatched = batched["points"][i]["stall"]["overlapped_ns"].get<double>()
            / batched["points"][i]["stall"]["serialized_ns"].get<double>();
        const double shareEach = each["points"][i]["stall"]["overlapped_ns"].get<double>()
            / each["points"][i]["stall"]["serialized_ns"].get<double>();
        EXPECT_LT(shareBatched, shareEach / 2) << batched.dump() << each.dump();
    }
    EXPECT_EQ(sweep("valkey-9.1",
                  { "--get-pipeline", "10", "--prefetch-batch", "0" })["load_latencies"]["overlapped_lookups"],
        1);
    EXPECT_EQ(sweep("valkey-8.1", { "--get-pipeline", "10" })["load_latencies"]["overlapped_lookups"], 1);
    EXPECT_EQ(sweep("valkey-9.1", { "--get-pipeline", "40" })["load_latencies"]["overlapped_lookups"], 16);
    // Bad values: one clear line naming the flag.
    const auto zero = run({ "sweep", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--layout", "valkey-9.1",
        "--thresholds", "64,128", "--cache", "--latency", "--get-pipeline", "0", "--no-db" });
    EXPECT_EQ(zero.exitCode, 2);
    EXPECT_NE(zero.err.find("--get-pipeline"), std::string::npos) << zero.err;
    const auto big = run({ "sweep", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--layout", "valkey-9.1",
        "--thresholds", "64,128", "--cache", "--latency", "--prefetch-batch", "129", "--no-db" });
    EXPECT_EQ(big.exitCode, 2);
    EXPECT_NE(big.err.find("prefetch-batch-max-size"), std::string::npos) << big.err;
    // Without --latency there is no stall to predict: refused, saying so (the run is otherwise a valid one).
    const auto alone = run({ "sweep", LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace", "--layout", "valkey-9.1",
        "--thresholds", "64,128", "--get-pipeline", "10", "--no-db" });
    EXPECT_EQ(alone.exitCode, 2);
    EXPECT_NE(alone.err.find("--get-pipeline requires --latency"), std::string::npos) << alone.err;
}

} // namespace
