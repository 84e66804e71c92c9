// SPDX-License-Identifier: MIT
// `layoutlab drive` of collection keys, against Debian's redis-server and every build of tests/engines
// (skipped with the reason where there are none):
//   - traces `gen` makes of each type, their element counts and lengths on both sides of the engines' default
//     limits and their key counts around powers of two, sent as the collection commands their element requests
//     stand for (ElementCommandWriter);
//   - MONITOR captures of elements moved between keys and removed by LREM, and of sorted sets emptied by ranges;
//   - the server's own RDB file of the collection workloads (collection_workloads.h), loaded by the server
//     itself (DEBUG RELOAD), as `drive dump.rdb` does for an operator's file.
// Each must be predicted within 1% of the settled server's Δ(used_memory - mem_clients_normal) per key, with
// the keys the replay holds, and every element given a text of its trace's length and integer class; and the
// slab model's active bytes within 2% of Δallocator_active on the generated traces and the snapshot (tens of
// MB), 5% on the captures of 4 MiB or more.

#include "cli_runner.h"
#include "collection_workloads.h"
#include "monitor_capture.h"
#include "resp_server_under_test.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

namespace {

using layoutlab::test::CliRun;

class DriveCollections : public layoutlab::test::CliTestBase, public ::testing::WithParamInterface<std::size_t> {
protected:
    void SetUp() override {
        CliTestBase::SetUp();
        if (!server())
            GTEST_SKIP() << "no server " << GetParam()
                         << ": Debian's redis-server and the builds of tests/engines are all there are here";
    }

    // The server of this instance; nullptr (the test skipped) where there is none.
    const layoutlab::test::EngineBuild* server() {
        static const auto all = layoutlab::test::respServers(LAYOUTLAB_ENGINE_MANIFEST);
        return GetParam() < all.size() ? &all[GetParam()] : nullptr;
    }

    // `drive FILE` on the server's binary, with its layout where the manifest names one (a development build;
    // else drive takes the one its version names); the report's JSON.
    nlohmann::json drive(
        const layoutlab::test::EngineBuild& s, const std::string& file, const std::vector<std::string>& limits = {}) {
        std::vector<std::string> args { "drive", file, "--engine", s.engine, "--server-binary", s.binary,
            "--run-requests", "0", "--json", "--no-db" };
        args.insert(args.end(), limits.begin(), limits.end());
        if (!s.layout.empty())
            args.insert(args.end(), { "--layout", s.layout });
        const CliRun r = run(args);
        EXPECT_EQ(r.exitCode, 0) << r.err;
        return r.exitCode == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
    }

    // `activeBound`: the allocator's active bytes' bound (of the measured), where the slab model predicts them;
    // infinite: printed, not held.
    void expectWithinOnePercent(const nlohmann::json& report, const std::string& what, double activeBound = 0.02) {
        ASSERT_TRUE(report.is_object()) << what;
        const double error = report.at("relative_error").get<double>();
        std::printf("%-14s %-10s keys %6llu  measured %9.2f B/key  predicted %9.2f  (%+.3f%%)\n",
            server()->label.c_str(), what.c_str(), report.at("server_keys").get<unsigned long long>(),
            report.at("measured_bytes_per_key").get<double>(), report.at("predicted_bytes_per_key").get<double>(),
            100 * error);
        EXPECT_LT(std::abs(error), 0.01) << what << ": " << report.dump();
        // The slab model's active bytes beside the server's Δallocator_active (keys the server wrote by
        // commands, or loaded from its own snapshot). A load of less than 4 MiB (the sorted-set ranges' 1 MiB)
        // is printed, not held: the server's client buffers, large extents of tens of KB the keyspace model has
        // no part of, are several percent of it.
        if (const auto& active = report.at("active_relative_error"); !active.is_null()) {
            const auto measured = report.at("measured_active_bytes").get<long long>();
            const bool large = measured >= (4ll << 20), held = large && std::isfinite(activeBound);
            std::printf("%-14s %-10s allocator_active: measured %12lld  predicted %12llu  (%+.3f%%)%s\n",
                server()->label.c_str(), what.c_str(), measured,
                report.at("predicted_active_bytes").get<unsigned long long>(), 100 * active.get<double>(),
                held        ? ""
                    : large ? "  (not held)"
                            : "  (below 4 MiB: not held)");
            if (held)
                EXPECT_LT(std::abs(active.get<double>()), activeBound) << what << ": " << report.dump();
        }
        EXPECT_EQ(report.at("server_keys"), report.at("predicted_keys")) << what;
        EXPECT_EQ(report.at("load").at("elements_approximated"), 0) << what;
        EXPECT_EQ(report.at("load").at("elements_unmatched"), 0) << what;
    }
};

TEST_P(DriveCollections, GeneratedTracesOfEveryTypeWithinOnePercent) {
    const auto* s = server(); // SetUp skipped the test where there is none
    // The default limits: hash and sorted-set listpacks to 128 entries and 64-byte elements, an intset to 512
    // members, a set listpack to 128 and 64 bytes (7.2 and later), a list node to 8 KiB.
    // Each trace is driven again with limits of its type set on the server (CONFIG SET before the load), which
    // the prediction reads back: the same keys on the other side of each limit. Redis 7.0 has no listpack sets.
    const bool redis70 = s->label == "redis-debian";
    struct Generated {
        std::string name;
        std::vector<std::string> args;
        std::vector<std::string> limits;
    };
    const Generated traces[] {
        { "hashes",
            { "--keys", "1023", "--hash-fields", "uniform:1:300", "--field-size", "uniform:1:24", "--value-size",
                "uniform:1:90" },
            { "--hash-max-listpack-entries", "64", "--hash-max-listpack-value", "128" } },
        { "sets",
            { "--keys", "2048", "--set-members", "uniform:1:700", "--int-values", "0.5", "--member-size",
                "uniform:3:40" },
            redis70 ? std::vector<std::string> { "--set-max-intset-entries", "100" }
                    : std::vector<std::string> { "--set-max-intset-entries", "100", "--set-max-listpack-entries", "300",
                        "--set-max-listpack-value", "16" } },
        { "zsets",
            { "--keys", "1025", "--zset-members", "uniform:1:250", "--member-size", "uniform:1:80", "--value-size",
                "uniform:1:12" },
            { "--zset-max-listpack-entries", "32", "--zset-max-listpack-value", "100" } },
        { "lists", { "--keys", "512", "--list-elements", "uniform:1:3000", "--element-size", "uniform:1:60" },
            { "--list-max-listpack-size", "100" } },
    };
    for (const auto& t : traces) {
        SCOPED_TRACE(s->label + " " + t.name);
        const std::string path = (m_dir / (t.name + ".lltrace")).string();
        // After the load, lookups, removes and adds of one element (three in ten of each).
        std::vector<std::string> gen { "gen", "-o", path, "--ops", "8000", "--get-fraction", "0.3", "--delete-fraction",
            "0.3", "--seed", "7" };
        gen.insert(gen.end(), t.args.begin(), t.args.end());
        const CliRun made = run(gen);
        ASSERT_EQ(made.exitCode, 0) << made.err;
        expectWithinOnePercent(drive(*s, path), t.name);
        const auto limited = drive(*s, path, t.limits);
        expectWithinOnePercent(limited, t.name + "+limits");
        if (limited.is_object()) // the server held the limits asked for, and the prediction took them
            EXPECT_EQ(limited.at("collection_limits").at(t.limits[0].substr(2)), std::stoll(t.limits[1]));
    }
}

TEST_P(DriveCollections, ItsOwnSnapshotLoadedWithinOnePercent) {
    const auto* s = server(); // SetUp skipped the test where there is none
    // The workloads' keys, as a server that ran them saves them (some commands on keys of another type are
    // refused, as in the workloads themselves).
    const std::string file = (m_dir / "dump.rdb").string();
    {
        auto under = layoutlab::test::startRespServer(*s);
        ASSERT_TRUE(under);
        std::uint64_t refused = 0;
        for (const auto& workload : layoutlab::test::collectionWorkloads())
            ASSERT_TRUE(under->client->pipeline(workload.commands, 512, &refused));
        ASSERT_TRUE(under->client->command({ "SAVE" }));
        std::filesystem::copy_file(under->running->workDir + "/dump.rdb", file);
    }
    expectWithinOnePercent(drive(*s, file), "snapshot");
}

// MONITOR captures driven into a fresh server of the same build: elements moved between keys and removed from
// lists' middles (LMOVE, BLPOP, SMOVE, ZPOPMIN, LREM...: collection_workloads.h), the moves as the pops and
// pushes they are, each LREM as an LSET of a mark at the element's place and an LREM of the mark; and sorted
// sets emptied by ranges (ZREMRANGEBY*), each range as its members moved to -inf and a ZREMRANGEBYSCORE of it;
// keys of every type renamed (RENAME, the names its elements were given moving with it); sets emptied by SPOP,
// each draw an SRANDMEMBER (the same rehash steps) and its member's SREM; the algebra's STOREs, as the lookups,
// the DEL and the SADDs, SREMs and ZADDs they amount to (a ZUNIONSTORE's result by a ZUNIONSTORE of its
// sources put back together: union_rebuild.h); lists written in their middle, each LINSERT as an LSET
// of a mark at the pivot's place, the LINSERT beside the mark and an LSET giving the place back; sets, hashes
// and sorted sets grown to their tables' sizes by commands naming members again (an insert that finds its member
// grows a full dict: repeat_workloads.cpp), a ZADD's repeated member sent within its command.
TEST_P(DriveCollections, CapturesOfMovesAndRemovalsWithinOnePercent) {
    const auto* s = server(); // SetUp skipped the test where there is none
    for (const auto& workload : { layoutlab::test::movesAndRemovals(130), layoutlab::test::rangeRemovals(255),
             layoutlab::test::keyRenames(257), layoutlab::test::setPops(300), layoutlab::test::setStores(40),
             layoutlab::test::zsetStores(40), layoutlab::test::listInserts(400), layoutlab::test::namedAgain(300) }) {
        const std::string file = (m_dir / (workload.name + ".monitor")).string();
        {
            auto under = layoutlab::test::startRespServer(*s);
            ASSERT_TRUE(under);
            layoutlab::test::MonitorCapture monitor(under->running->port);
            std::uint64_t refused = 0;
            ASSERT_TRUE(under->client->pipeline(workload.commands, 512, &refused));
            ASSERT_TRUE(under->client->command({ "ECHO", "layoutlab-capture-end" }));
            monitor.waitFor("layoutlab-capture-end");
            monitor.close();
            std::ofstream(file) << monitor.lines();
            if (const char* keep = std::getenv("LAYOUTLAB_KEEP_CAPTURES")) // for a look at a failing workload
                std::ofstream(fmt::format("{}/{}-{}.monitor", keep, s->label, workload.name)) << monitor.lines();
        }
        // A few MB of keys: what the thread cache holds (a few hundred KB on the server, which its GC empties
        // sooner than the model's, its own buffers' allocations counting toward it: validation.md) is a
        // percent or two of them, and the server's own measure moves by about a percent from run to run.
        // The sorted sets' STOREs through the import are the exception: drive rebuilds a union from source keys
        // of its own, which the trace does not hold and deletes after (union_rebuild.h), and the server's
        // thread cache keeps what they freed: 3-6% of the active bytes on Valkey 8.0.1, however many groups
        // (40 or 80), where the same capture sent as captured is within 2.6%. Printed, not held.
        const bool rebuiltUnions = workload.name.starts_with("zset-stores");
        expectWithinOnePercent(
            drive(*s, file), workload.name, rebuiltUnions ? std::numeric_limits<double>::infinity() : 0.05);
        // The sorted sets' STOREs also sent as captured: the server's own ZUNIONSTOREs of the capture's sources
        // (Valkey's result table expanded for the largest source, Redis 7.x's for the union).
        if (rebuiltUnions)
            expectWithinOnePercent(drive(*s, file, { "--as-captured" }), "zset-sent", 0.05);
        // Members named again as captured: the model's finds-for-insert against the servers' own commands.
        if (workload.name.starts_with("named-again"))
            expectWithinOnePercent(drive(*s, file, { "--as-captured" }), "named-again-sent", 0.05);
    }
}

// Collection keys under a memory budget: a load of 20,000 hashes of 1 to 20 fields (some 28 MB), then 60,000
// lookups, removals and writes of a field, into a server started with maxmemory 7mb and allkeys-random, beside
// `sim --maxmemory` with the server's used_memory before the load as its base. Most keys are evicted and many
// made again by later writes, whose fields the trace goes on naming (CollectionReplay::evicted), and the
// server draws its victims as its table lies (SampledKeyTable::randomKey). The keys it evicted within 3%, the
// keys it kept within 5% (random evictions move both by a percent or two from run to run, and the server keeps
// 1-4% fewer than the model: docs/validation.md, "Collection keys under a budget").
TEST_P(DriveCollections, HashesUnderABudgetEvictAsTheServerDoes) {
    const auto* s = server(); // SetUp skipped the test where there is none
    const std::string trace = (m_dir / "hashes.lltrace").string();
    const CliRun made = run({ "gen", "-o", trace, "--keys", "20000", "--ops", "60000", "--hash-fields", "uniform:1:20",
        "--field-size", "uniform:3:24", "--value-size", "uniform:1:90", "--get-fraction", "0.3", "--delete-fraction",
        "0.3", "--seed", "3" });
    ASSERT_EQ(made.exitCode, 0) << made.err;
    auto under = layoutlab::test::startRespServer(*s, { "--maxmemory", "7mb", "--maxmemory-policy", "allkeys-random" });
    ASSERT_TRUE(under);
    std::vector<std::string> args { "drive", trace, "--engine", s->engine, "--connect",
        fmt::format("127.0.0.1:{}", under->running->port), "--run-requests", "0", "--json", "--no-db" };
    if (!s->layout.empty())
        args.insert(args.end(), { "--layout", s->layout });
    const CliRun driven = run(args);
    ASSERT_EQ(driven.exitCode, 0) << driven.err;
    const auto report = nlohmann::json::parse(driven.out);
    auto stats = under->client->info("stats");
    ASSERT_TRUE(stats) << stats.error().describe();
    const double evicted = std::stod(stats->at("evicted_keys"));
    auto held = layoutlab::keyCount(*under->client);
    ASSERT_TRUE(held) << held.error().describe();
    ASSERT_GT(evicted, 10000) << "the budget took most of the keys";

    const CliRun sim = run({ "sim", trace, "--layout", report.at("layout").get<std::string>(), "--alloc",
        report.at("allocator").get<std::string>(), "--maxmemory", "7mb", "--base-memory",
        std::to_string(report.at("used_memory_before").get<std::uint64_t>()), "--policy", "allkeys-random", "--no-db",
        "--json" });
    ASSERT_EQ(sim.exitCode, 0) << sim.err;
    const auto point = nlohmann::json::parse(sim.out).at("points").at(0);
    const double predictedEvicted = point.at("evicted_keys").get<double>();
    const double predictedHeld = point.at("keys").get<double>();
    std::printf("%-14s budget     evicted: measured %8.0f  predicted %8.0f  (%+.2f%%); keys held %6llu / %6.0f "
                "(%+.2f%%)\n",
        s->label.c_str(), evicted, predictedEvicted, 100 * (predictedEvicted - evicted) / evicted,
        static_cast<unsigned long long>(*held), predictedHeld,
        100 * (predictedHeld - static_cast<double>(*held)) / static_cast<double>(*held));
    EXPECT_NEAR(predictedEvicted, evicted, 0.03 * evicted);
    EXPECT_NEAR(predictedHeld, static_cast<double>(*held), 0.05 * static_cast<double>(*held));
}

INSTANTIATE_TEST_SUITE_P(Servers, DriveCollections, ::testing::Range<std::size_t>(0, 12),
    [](const auto& info) { return "server" + std::to_string(info.param); });

} // namespace
