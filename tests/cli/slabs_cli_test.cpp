// SPDX-License-Identifier: MIT
// The slab model from the command line (`sim`/`sweep --slabs`, `--timeline`): jemalloc's arena and
// memcached's slab pages, in every output.

#include "cli_runner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
