// SPDX-License-Identifier: MIT
// The slab model from the command line (`sim`/`sweep --slabs`, `--timeline`): jemalloc's arena and
// memcached's slab pages, in every output.

#include "cli_runner.h"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using CliTest = layoutlab::test::CliTestBase;

TEST_F(CliTest, SlabsGiveActiveBytesAfterDeletes) {
    ASSERT_EQ(run({ "gen", "-o", path("del.lltrace"), "--keys", "20000", "--ops", "14000", "--get-fraction", "0",
                      "--delete-fraction", "1", "--value-size", "96", "--seed", "3" })
                  .exitCode,
        0);
    const auto r = run({ "sweep", path("del.lltrace"), "--layout", "valkey-9.1", "--alloc",
        "jemalloc:quantum=8,page=4096", "--thresholds", "64,128", "--slabs", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["slab_model"]["size_classes"], "emulated");
    EXPECT_EQ(j["slab_model"]["thread_cache"], true);
    ASSERT_EQ(j["points"].size(), 2u);
    for (const auto& p : j["points"]) {
        EXPECT_GE(p["allocated_bytes"].get<std::uint64_t>(), p["usable_bytes"].get<std::uint64_t>());
        EXPECT_GT(p["frag_ratio"].get<double>(), 1.5) << "half the keys deleted at random: most slabs stay";
        EXPECT_GE(p["peak_active_bytes"].get<std::uint64_t>(), p["active_bytes"].get<std::uint64_t>());
        EXPECT_NEAR(
            p["active_bytes_per_key"].get<double>(), p["active_bytes"].get<double>() / p["keys"].get<double>(), 0.01);
    }
    EXPECT_LT(j["points"][1]["active_bytes"].get<std::uint64_t>(), j["points"][0]["active_bytes"].get<std::uint64_t>());
    const auto csv = run({ "sim", path("del.lltrace"), "--layout", "valkey-9.1", "--slabs", "--csv", "--no-db" });
    ASSERT_EQ(csv.exitCode, 0) << csv.err;
    EXPECT_NE(csv.out.find(",allocated_bytes,active_bytes,frag_ratio,active_bytes_per_key"), std::string::npos)
        << csv.out;
    const auto table = run({ "sim", path("del.lltrace"), "--layout", "valkey-9.1", "--slabs", "--no-db" });
    EXPECT_NE(table.out.find("active/key"), std::string::npos) << table.out;
    // Without --slabs, none of it.
    const auto plain = run({ "sim", path("del.lltrace"), "--layout", "valkey-9.1", "--json", "--no-db" });
    EXPECT_EQ(plain.out.find("active_bytes"), std::string::npos);
    // The slab model is jemalloc's and memcached's: refused with a clear line elsewhere.
    const auto glibc
        = run({ "sim", path("del.lltrace"), "--layout", "valkey-9.1", "--alloc", "glibc", "--slabs", "--no-db" });
    EXPECT_EQ(glibc.exitCode, 2);
    EXPECT_NE(glibc.err.find("slab model"), std::string::npos) << glibc.err;
}

TEST_F(CliTest, MemcachedSlabsGivePagesPerClassAndTotalMalloced) {
    ASSERT_EQ(run({ "gen", "-o", path("del.lltrace"), "--keys", "30000", "--ops", "20000", "--get-fraction", "0",
                      "--delete-fraction", "1", "--value-size", "uniform:10:400", "--seed", "3" })
                  .exitCode,
        0);
    const auto r = run({ "sim", path("del.lltrace"), "--layout", "memcached-1.6", "--slabs", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["slab_model"]["size_classes"], "memcached");
    const auto& p = j["points"][0];
    std::uint64_t pages = 0, chunkBytes = 0;
    for (const auto& c : p["size_classes"]) {
        const auto held = c["held_slabs"].get<std::uint64_t>();
        const auto perPage = c["regions_per_slab"].get<std::uint64_t>();
        // Deletes free chunks, never pages: a class holds at least the pages its live items need.
        EXPECT_GE(held, (c["allocations"].get<std::uint64_t>() + perPage - 1) / perPage) << c.dump();
        pages += held;
        chunkBytes += c["usable_bytes"].get<std::uint64_t>();
    }
    EXPECT_EQ(p["active_bytes"].get<std::uint64_t>(), pages << 20) << "total_malloced: whole 1 MiB pages";
    EXPECT_EQ(p["allocated_bytes"].get<std::uint64_t>(), chunkBytes);
    EXPECT_GT(p["frag_ratio"].get<double>(), 1.3) << "a random 40% deleted: their chunks stay in their pages";
    const auto table = run({ "sim", path("del.lltrace"), "--layout", "memcached-1.6", "--slabs", "--no-db" });
    EXPECT_NE(table.out.find("memcached's slab pages per class"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("held"), std::string::npos) << table.out;
}

TEST_F(CliTest, TimelineSamplesTheTraceAndIsStoredWithTheRun) {
    ASSERT_EQ(run({ "gen", "-o", path("del.lltrace"), "--keys", "20000", "--ops", "14000", "--get-fraction", "0",
                      "--delete-fraction", "1", "--value-size", "96", "--seed", "3" })
                  .exitCode,
        0);
    // --timeline implies --slabs.
    const auto r = run({ "sweep", path("del.lltrace"), "--layout", "valkey-9.1", "--thresholds", "64,128", "--timeline",
        "8", "--json", "--db", path("runs.db") });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.contains("timeline")) << r.out;
    EXPECT_EQ(j["timeline"]["thresholds"], nlohmann::json::array({ 64, 128 }));
    const auto& samples = j["timeline"]["samples"];
    ASSERT_EQ(samples.size(), 8u);
    EXPECT_EQ(samples.back()["requests"], 34000);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(samples.back()["active_bytes"][i], j["points"][i]["active_bytes"]);
        EXPECT_EQ(samples.back()["allocated_bytes"][i], j["points"][i]["allocated_bytes"]);
    }
    // The keys grow to 20,000 (the load: one write a key), then deletes take them down; the active bytes do
    // not fall with them.
    EXPECT_EQ(samples[3]["requests"], 17000);
    EXPECT_EQ(samples[3]["live_keys"], 17000);
    EXPECT_LT(samples.back()["live_keys"].get<std::uint64_t>(), 10000u);
    EXPECT_GT(samples.back()["active_bytes"][0].get<double>(), samples[3]["active_bytes"][0].get<double>());
    const auto table = run({ "sim", path("del.lltrace"), "--layout", "valkey-9.1", "--timeline", "4", "--no-db" });
    ASSERT_EQ(table.exitCode, 0) << table.err;
    EXPECT_NE(table.out.find("timeline: 4 samples"), std::string::npos) << table.out;
    // Stored: the database holds the samples (docs/results-db.md: the timeline table).
    const auto shown = run({ "db", "show", "1", "--json", "--db", path("runs.db") });
    ASSERT_EQ(shown.exitCode, 0) << shown.err;
    EXPECT_EQ(nlohmann::json::parse(shown.out)["result"]["timeline"], j["timeline"]);
    // The report draws it, and active bytes per key beside allocated.
    const auto report = run({ "report", "1", "-o", path("report"), "--db", path("runs.db") });
    ASSERT_EQ(report.exitCode, 0) << report.err;
    const auto html = layoutlab::test::slurp(path("report") + "/index.html");
    EXPECT_NE(html.find("The allocator over the trace at threshold 128"), std::string::npos);
    EXPECT_NE(html.find("active bytes per key beside allocated"), std::string::npos);
    EXPECT_NE(html.find("active_bytes_per_key"), std::string::npos) << "the points table has the column";
}

TEST_F(CliTest, AdviseWithSlabsWeighsActiveBytesAndSaysWhenTheLeanestDiffers) {
    ASSERT_EQ(run({ "gen", "-o", path("cache.lltrace"), "--keys", "30000", "--ops", "90000", "--key-size",
                      "uniform:8:40", "--value-size", "lognormal:4.5:0.8:1:4000", "--get-fraction", "0.5",
                      "--delete-fraction", "0.1", "--popularity", "zipf:0.9", "--seed", "1" })
                  .exitCode,
        0);
    const std::vector<std::string> common { path("cache.lltrace"), "--layout", "redis-7.0", "--thresholds", "16:256:16",
        "--json", "--no-db" };
    auto with = [&](std::vector<std::string> head, std::vector<std::string> tail) {
        head.insert(head.end(), common.begin(), common.end());
        head.insert(head.end(), tail.begin(), tail.end());
        const auto r = run(head);
        EXPECT_EQ(r.exitCode, 0) << r.err;
        return nlohmann::json::parse(r.out);
    };
    const auto advice = with({ "advise" }, { "--slabs", "--no-cache" });
    const auto sweep = with({ "sweep" }, { "--slabs" });
    EXPECT_EQ(advice["memory_metric"], "active_bytes_per_key");
    // The leanest by allocated bytes is the sweep's best threshold; by active bytes, its fewest active per key.
    EXPECT_EQ(advice["leanest_by_allocated"], sweep["best_threshold"]);
    double fewest = 1e300, atLeanest = 0;
    for (const auto& p : sweep["points"]) {
        fewest = std::min(fewest, p["active_bytes_per_key"].get<double>());
        if (p["threshold"] == advice["leanest"])
            atLeanest = p["active_bytes_per_key"].get<double>();
    }
    EXPECT_NEAR(atLeanest, fewest, 1e-3) << "the JSON rounds to 4 decimals";
    for (std::size_t i = 0; i < advice["points"].size(); ++i)
        EXPECT_NEAR(advice["points"][i]["bytes_per_key"].get<double>(),
            sweep["points"][i]["active_bytes_per_key"].get<double>(), 0.01);
    // This trace's deletes and overwrites make them differ, and the advice says so.
    ASSERT_NE(advice["leanest"], advice["leanest_by_allocated"]);
    const auto said = advice["leanest_differs"].get<std::string>();
    EXPECT_NE(said.find("not the leanest by active bytes"), std::string::npos) << said;
    const auto table = run({ "advise", path("cache.lltrace"), "--layout", "redis-7.0", "--thresholds", "16:256:16",
        "--slabs", "--no-cache", "--no-db" });
    EXPECT_NE(table.out.find("note: the leanest threshold by allocated bytes"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("active/key"), std::string::npos) << table.out;
    // Without --slabs: bytes per key as the size classes hand them out, and nothing about active bytes.
    const auto plain = with({ "advise" }, { "--no-cache" });
    EXPECT_EQ(plain["memory_metric"], "usable_bytes_per_key");
    EXPECT_EQ(plain["leanest"], plain["leanest_by_allocated"]);
    EXPECT_TRUE(plain["leanest_differs"].is_null());
}

TEST_F(CliTest, ABatchPlanWithSlabsGivesActiveBytesPerCell) {
    ASSERT_EQ(run({ "gen", "-o", path("del.lltrace"), "--keys", "20000", "--ops", "14000", "--get-fraction", "0",
                      "--delete-fraction", "1", "--value-size", "96", "--seed", "3" })
                  .exitCode,
        0);
    std::ofstream(path("plan.json")) << R"({"traces": ["del.lltrace"], "layouts": ["valkey-9.1", "memcached-1.6"],
        "allocators": [""], "thresholds": "64,128", "slabs": true})";
    const auto r = run({ "batch", path("plan.json"), "--json", "--db", path("runs.db") });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["cells"].size(), 2u);
    for (const auto& cell : j["cells"]) {
        EXPECT_EQ(cell["status"], "complete") << cell.dump();
        ASSERT_TRUE(cell["best_active_bytes_per_key"].is_number()) << cell.dump();
        EXPECT_GT(cell["best_active_bytes_per_key"].get<double>(), cell["best_bytes_per_key"].get<double>())
            << "a random 40% deleted: their slabs stay";
    }
    // The same figures as a sweep with --slabs at the leanest threshold.
    const auto sweep = nlohmann::json::parse(run({ "sweep", path("del.lltrace"), "--layout", "valkey-9.1",
                                                     "--thresholds", "64,128", "--slabs", "--json", "--no-db" })
                                                 .out);
    for (const auto& p : sweep["points"])
        if (p["threshold"] == j["cells"][0]["best_threshold"])
            EXPECT_NEAR(p["active_bytes_per_key"].get<double>(),
                j["cells"][0]["best_active_bytes_per_key"].get<double>(), 1e-3);
    // Run again: every cell is complete already, and its summary comes from the stored run, slabs and all.
    const auto again
        = nlohmann::json::parse(run({ "batch", path("plan.json"), "--json", "--db", path("runs.db") }).out);
    EXPECT_EQ(again["skipped"], 2);
    EXPECT_EQ(again["cells"][1]["best_active_bytes_per_key"], j["cells"][1]["best_active_bytes_per_key"]);
}

TEST_F(CliTest, ATimelineThatCannotBeTakenSaysWhy) {
    const auto tooMany = run({ "sim", seedTrace(), "--layout", "valkey-9.1", "--timeline", "20000", "--no-db" });
    EXPECT_EQ(tooMany.exitCode, 2);
    EXPECT_NE(tooMany.err.find("--timeline"), std::string::npos) << tooMany.err;
    const auto glibc
        = run({ "sim", seedTrace(), "--layout", "valkey-9.1", "--alloc", "glibc", "--timeline", "5", "--no-db" });
    EXPECT_EQ(glibc.exitCode, 2);
    EXPECT_NE(glibc.err.find("--timeline"), std::string::npos) << glibc.err;
}

} // namespace
