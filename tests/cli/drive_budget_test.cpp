// SPDX-License-Identifier: MIT
// A cache under maxmemory, measured on real servers beside the eviction model: `drive --maxmemory` runs
// the server as a look-aside cache (GETs of a Zipf keyspace, a SET of each miss) and puts its hit ratio
// (keyspace_hits / GETs) beside the predicted, at budgets of 10%, 30% and 60% of the working set, for
// allkeys-lru and allkeys-lfu, on Debian's Redis 7.0 and the Valkey 9.1.0 build of the engines fixture.
// The policies sample keys at random (and LFU counts with random increments): each point is the median of
// three drives.

#include "cli_runner.h"
#include "engine_manifest.h"
#include "layoutlab/collect/server_process.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

using layoutlab::test::EngineBuild;

// The largest error a median may show, in percentage points of hit ratio: the target
// (docs/validation.md, "Hit ratio under maxmemory").
constexpr double kMaxErrorPoints = 1.0;
// What an empty server holds before the trace, roughly (used_memory of Redis 7.0 and Valkey 9.1 at start):
// the budgets are this plus a share of the working set, so that the keys get that share.
constexpr double kEmptyServerBytes = 950000;

std::vector<EngineBuild> servers() {
    std::vector<EngineBuild> out;
    if (layoutlab::findExecutable("redis-server"))
        out.push_back({ "", "redis-7.0", "redis-server (Debian)", "redis" });
    for (const auto& b : layoutlab::test::readEngineManifest(LAYOUTLAB_ENGINE_MANIFEST))
        if (b.label == "valkey-9.1.0")
            out.push_back(b);
    return out;
}

class DriveBudgetTest : public layoutlab::test::CliTestBase {
protected:
    // GETs, SETs, DELs and SETs with a 3-second TTL.
    std::string ttlTrace() const {
        return gen("ttl.lltrace",
            { "--keys", "65537", "--ops", "400000", "--get-fraction", "0.8", "--delete-fraction", "0.05",
                "--ttl-fraction", "0.2", "--ttl-seconds", "3", "--popularity", "zipf:0.9", "--value-size",
                "lognormal:5:0.3:20:900" },
            "13");
    }
};

TEST_F(DriveBudgetTest, HitRatioWithinOnePointOfTheRealServer) {
    const auto all = servers();
    if (all.empty())
        GTEST_SKIP() << "neither Debian's redis-server nor the Valkey 9.1.0 build is here";
    const auto trace = gen(
        "zipf.lltrace", { "--keys", "30000", "--ops", "300000", "--get-fraction", "1", "--popularity", "zipf:0.99" });
    for (const auto& server : all) {
        const auto sim = run({ "sim", trace, "--layout", server.layout, "--no-db", "--json" });
        ASSERT_EQ(sim.exitCode, 0) << sim.err;
        const double workingSet = nlohmann::json::parse(sim.out)["points"][0]["usable_bytes"];
        for (const char* policy : { "allkeys-lru", "allkeys-lfu" })
            for (const double share : { 0.1, 0.3, 0.6 }) {
                const auto maxmemory
                    = std::to_string(static_cast<std::uint64_t>(kEmptyServerBytes + share * workingSet));
                std::vector<double> errors;
                double measured = 0, predicted = 0;
                for (int round = 0; round < 3; ++round) {
                    std::vector<std::string> args { "drive", trace, "--json", "--no-db", "--maxmemory", maxmemory,
                        "--policy", policy, "--pipeline", "64" };
                    if (server.binary.empty())
                        args.insert(args.end(), { "--engine", "redis" });
                    else
                        args.insert(args.end(), { "--engine", server.engine, "--server-binary", server.binary });
                    const auto r = run(args);
                    ASSERT_EQ(r.exitCode, 0) << server.label << ": " << r.err;
                    const auto j = nlohmann::json::parse(r.out);
                    errors.push_back(j["hit_ratio_error_points"]);
                    measured = j["measured_hit_ratio"];
                    predicted = j["predicted_hit_ratio"];
                    EXPECT_GT(j["evictions"]["measured"].get<std::uint64_t>(), 0u) << server.label << " " << policy;
                    EXPECT_EQ(j["look_aside"]["refused_writes"].get<std::uint64_t>(), 0u);
                }
                std::sort(errors.begin(), errors.end());
                const double median = errors[1];
                EXPECT_LT(std::abs(median), kMaxErrorPoints) << server.label << " " << policy << " at " << share;
                std::printf("hit ratio %-24s %-12s %3.0f%% of the working set: measured %.4f predicted %.4f, median "
                            "error %+.2f points\n",
                    server.label.c_str(), policy, 100 * share, measured, predicted, median);
            }
    }
}

// memcached under -m, through Dalli's raw and Marshal framings, at 10%, 30% and 60% of the raw working
// set's pages. memcached evicts without random sampling: one drive each. The keys held equal the prediction
// (to a key or two where a class's pages are not full); the hit ratio matches within 0.01 points at 30% and
// 60%, and within 0.15 at 10%, where the most items move between the LRUs (docs/validation.md, "memcached
// under -m").
TEST_F(DriveBudgetTest, MemcachedHitRatioForRawAndMarshalValues) {
    if (!layoutlab::findExecutable("memcached"))
        GTEST_SKIP() << "memcached is not installed";
    const auto trace = gen("mc.lltrace",
        { "--keys", "200000", "--ops", "600000", "--get-fraction", "1", "--popularity", "zipf:0.99", "--value-size",
            "lognormal:5:0.12:20:1000" },
        "7");
    const auto sim = run({ "sim", trace, "--layout", "memcached-1.6", "--slabs", "--no-db", "--json" });
    ASSERT_EQ(sim.exitCode, 0) << sim.err;
    const double pages = nlohmann::json::parse(sim.out)["points"][0]["active_bytes"].get<double>() / (1 << 20);
    for (const char* framing : { "raw", "marshal-utf8" })
        for (const double share : { 0.1, 0.3, 0.6 }) {
            const auto limit = std::to_string(static_cast<int>(share * pages)) + "mb";
            const auto r = run({ "drive", trace, "--engine", "memcached", "--framing", framing, "--memory-limit", limit,
                "--pipeline", "64", "--json", "--no-db" });
            ASSERT_EQ(r.exitCode, 0) << r.err;
            const auto j = nlohmann::json::parse(r.out);
            const double error = j["hit_ratio_error_points"];
            EXPECT_LT(std::abs(error), share < 0.2 ? 0.5 : 0.25) << framing << " at " << limit;
            // Full classes hold their pages' chunks whatever happened; a class whose pages are not full holds
            // what the order of evictions left it, which moves with the server's timing (one key of 11,746 seen).
            const auto keys = j["server_keys"].get<double>();
            EXPECT_NEAR(keys, j["predicted_keys"].get<double>(), std::max(2.0, 0.001 * keys))
                << framing << " at " << limit;
            EXPECT_GT(j["evictions"]["measured"].get<std::uint64_t>(), 0u);
            EXPECT_EQ(j["predicted_used_memory"].get<std::uint64_t>(), j["measured_used_memory"].get<std::uint64_t>())
                << "total_malloced, predicted and measured";
            // Each class's evictions (`stats items`): within 0.2% in the runs seen (294,100 against 294,631).
            for (const auto& c : j["classes"]) {
                const auto measured = c["measured_evictions"].get<double>();
                EXPECT_NEAR(c["predicted_evictions"].get<double>(), measured, 0.01 * measured + 10)
                    << framing << " at " << limit << ", " << c["chunk_bytes"] << "-byte chunks";
            }
            std::printf("memcached %-13s -m %-5s measured %.4f predicted %.4f, error %+.2f points, keys %llu\n",
                framing, limit.c_str(), j["measured_hit_ratio"].get<double>(), j["predicted_hit_ratio"].get<double>(),
                error, static_cast<unsigned long long>(j["server_keys"].get<std::uint64_t>()));
        }
}

// A trace of GETs, SETs, DELs and SETs with a 3-second TTL, sent in well under 3 seconds: on the server no
// TTL runs out, and the prediction, which replays the trace on the clock the drive sent it on, expires
// none either. (Replayed on the trace's own clock, 4.7 seconds at gen's 100,000 requests a second, it expired
// thousands: 4.7% fewer keys held than the server's at 16 MiB, and a point of hit ratio.) Sampled LRU: the
// median of three.
TEST_F(DriveBudgetTest, TtlsExpireOnTheClockTheDriveRanOn) {
    if (!layoutlab::findExecutable("redis-server"))
        GTEST_SKIP() << "Debian's redis-server is not installed";
    const auto trace = ttlTrace();
    std::vector<double> keyErrors, hitErrors;
    for (int round = 0; round < 3; ++round) {
        const auto r = run({ "drive", trace, "--engine", "redis", "--maxmemory", "16mb", "--policy", "allkeys-lru",
            "--json", "--no-db" });
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        const auto keys = j["server_keys"].get<double>();
        keyErrors.push_back((j["predicted_keys"].get<double>() - keys) / keys);
        hitErrors.push_back(j["hit_ratio_error_points"].get<double>());
    }
    std::sort(keyErrors.begin(), keyErrors.end());
    std::sort(hitErrors.begin(), hitErrors.end());
    EXPECT_LT(std::abs(keyErrors[1]), 0.01) << "keys held, relative";
    EXPECT_LT(std::abs(hitErrors[1]), 1.0) << "hit ratio, points";
    std::printf("TTLs on the drive's clock: keys held %+.2f%%, hit ratio %+.2f points (medians)\n", 100 * keyErrors[1],
        hitErrors[1]);
}

// noeviction, the servers' default, at a budget the trace outgrows: the server refuses writes from then on
// and answers reads. The client knows the values it sent, so it fills the misses of keys whose SETs were
// refused, and those fills are writes refused or stored like any other. (The model had counted such misses
// unfillable: 30% fewer refused writes than the server's and a hit ratio 3.4 points high.)
TEST_F(DriveBudgetTest, NoevictionRefusesWritesAsTheServerDoes) {
    if (!layoutlab::findExecutable("redis-server"))
        GTEST_SKIP() << "Debian's redis-server is not installed";
    const auto r = run({ "drive", ttlTrace(), "--engine", "redis", "--maxmemory", "6mb", "--policy", "noeviction",
        "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto measured = j["look_aside"]["refused_writes"].get<double>();
    const auto predicted = j["look_aside"]["predicted_refused_writes"].get<double>();
    EXPECT_GT(measured, 100000.0);
    // 3-4% fewer predicted on a quiet machine, 5.3% with the suite on both cores: the replay drops a key at
    // its TTL, the server when its active expire cycle (hz 10) or a read finds it, and a full server with
    // expired keys not yet found refuses more. How many it finds by then moves with how fast the drive runs.
    EXPECT_NEAR(predicted, measured, 0.07 * measured) << "writes refused";
    EXPECT_LT(std::abs(j["hit_ratio_error_points"].get<double>()), 1.0);
    std::printf("noeviction: refused writes %.0f measured, %.0f predicted; hit ratio %+.2f points\n", measured,
        predicted, j["hit_ratio_error_points"].get<double>());
}

// memcached's seconds begin where its timer fires, not at the wall clock's (memcached.c clock_handler): the
// same trace takes it about three seconds, so which 3-second TTLs have run out by its clock moved the
// prediction by half a point of hit ratio from one drive to the next until the drive read where memcached's
// seconds begin (memcachedSecondPhase). Now every drive's prediction meets its hit ratio, expired keys and all.
TEST_F(DriveBudgetTest, MemcachedTtlsExpireOnItsOwnSeconds) {
    if (!layoutlab::findExecutable("memcached"))
        GTEST_SKIP() << "memcached is not installed";
    const auto trace = ttlTrace();
    for (int round = 0; round < 2; ++round) {
        const auto r = run({ "drive", trace, "--engine", "memcached", "--memory-limit", "20mb", "--json", "--no-db" });
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        // Within 0.01 points on a quiet machine; 0.20 seen with the whole suite running on both cores, where
        // memcached's timer fires late and its seconds drift from the phase read at the start. Before the
        // drive read the phase, three drives in four were 0.49-0.62 points off.
        EXPECT_LT(std::abs(j["hit_ratio_error_points"].get<double>()), 0.3) << "drive " << round;
        std::printf("memcached TTLs on its own seconds: hit ratio %+.2f points, keys %llu measured, %llu predicted\n",
            j["hit_ratio_error_points"].get<double>(),
            static_cast<unsigned long long>(j["server_keys"].get<std::uint64_t>()),
            static_cast<unsigned long long>(j["predicted_keys"].get<std::uint64_t>()));
    }
}

// memcached's page mover by age (slab_automove.c, the rule that needs evictions): 36,000 items of 100-byte
// values fill 7 pages of one class and are left alone; then a keyspace of 900-byte values 20 times the room
// left evicts in its class every second. Once a window of runs has gone by, each second the old class's first
// page goes to the evicting one (its items lost, but for those the old class has free chunks for), until the
// old class has 2; then the old keys are read again: the ones that took the free chunks are the hits. With
// `-o slab_automove_window=3` the moves come within the drive's first 10 seconds; the second phase goes on
// long enough that all five are done before the third even on a loaded machine (with 1.2M GETs in it, a run of
// the whole suite once saw the server's fifth move come after the drive's end). Quiet: -0.03 points in two
// drives; -0.03 and -0.05 with two and four busy loops beside it. On the 1.2M-GET trace (docs/validation.md):
// -0.07 and -0.06; without the rule 1.25 and 1.28 points low, 7 and 3 pages where the server had 2 and 8, twice
// the keys; with the mover's runs counted from the trace's first request (not the server's start), 0.97 and
// 0.94 low; without the LRU maintainer's juggle of every class once a second, 0.13 and 0.12 low.
TEST_F(DriveBudgetTest, MemcachedMovesPagesToTheClassThatEvicts) {
    if (!layoutlab::findExecutable("memcached"))
        GTEST_SKIP() << "memcached is not installed";
    const auto csv = m_dir / "mover.csv";
    {
        std::ofstream f(csv);
        std::uint64_t t = 0;
        auto get = [&](const std::string& key, int valueBytes) {
            f << t++ / 10000 << ',' << key << ',' << key.size() << ',' << valueBytes << ",1,get,0\n";
        };
        for (int i = 0; i < 36000; ++i)
            get(fmt::format("a:{:07}", i), 100);
        std::uint64_t x = 88172645463325252ULL; // xorshift64: the second phase's keys
        for (int i = 0; i < 2000000; ++i) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            get(fmt::format("b:{:07}", x % 60000), 900);
        }
        for (int i = 0; i < 36000; ++i)
            get(fmt::format("a:{:07}", i), 100);
    }
    const auto trace = (m_dir / "mover.lltrace").string();
    const auto imported = run({ "import", csv.string(), "-o", trace });
    ASSERT_EQ(imported.exitCode, 0) << imported.err;
    const auto r = run({ "drive", trace, "--engine", "memcached", "--memory-limit", "10mb", "--automove-window", "3",
        "--pipeline", "64", "--json", "--no-db" });
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GE(j["pages_moved"].get<std::uint64_t>(), 3u) << "the server moved pages by age";
    // -0.10 points in two drives on a quiet machine.
    EXPECT_LT(std::abs(j["hit_ratio_error_points"].get<double>()), 0.5);
    for (const auto& c : j["classes"]) {
        EXPECT_EQ(c["measured_pages"], c["predicted_pages"]) << c["chunk_bytes"] << "-byte chunks";
        // The old class's evictions come from the last phase, after the moves: 33,773 measured, 34,512 predicted.
        const auto measured = c["measured_evictions"].get<double>();
        EXPECT_NEAR(c["predicted_evictions"].get<double>(), measured, 0.03 * measured + 100)
            << c["chunk_bytes"] << "-byte chunks";
    }
    const auto keys = j["server_keys"].get<double>();
    EXPECT_NEAR(keys, j["predicted_keys"].get<double>(), 0.01 * keys);
    std::printf("memcached page mover: %llu pages moved, hit ratio measured %.4f predicted %.4f (%+.2f points)\n",
        static_cast<unsigned long long>(j["pages_moved"].get<std::uint64_t>()), j["measured_hit_ratio"].get<double>(),
        j["predicted_hit_ratio"].get<double>(), j["hit_ratio_error_points"].get<double>());
}

TEST_F(DriveBudgetTest, RefusesWhatItCannotDrive) {
    const auto trace = gen("small.lltrace", { "--keys", "100" });
    if (layoutlab::findExecutable("redis-server")) {
        const auto db = path("refused.db");
        const auto tiny = run({ "drive", trace, "--engine", "redis", "--db", db, "--maxmemory", "1000" });
        EXPECT_EQ(tiny.exitCode, 2) << tiny.err;
        EXPECT_NE(tiny.err.find("below what the empty server already uses"), std::string::npos) << tiny.err;
        // Nothing stored: the runs begin once the budget is known to leave room for keys.
        const auto listed = run({ "db", "list", "--db", db });
        EXPECT_EQ(listed.out.find("drive"), std::string::npos) << listed.out;
        // A look-aside client sends GETs and SETs: a trace of hashes is sent into a budgeted server attached to.
        const auto hashes = gen("hashes.lltrace", { "--keys", "100", "--hash-fields", "uniform:1:5" });
        const auto collections = run({ "drive", hashes, "--engine", "redis", "--no-db", "--maxmemory", "64mb" });
        EXPECT_EQ(collections.exitCode, 1) << collections.err;
        EXPECT_NE(collections.err.find("--connect"), std::string::npos) << collections.err;
    }
    const auto unknown
        = run({ "drive", trace, "--engine", "redis", "--no-db", "--maxmemory", "64mb", "--policy", "lru" });
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_NE(unknown.err.find("allkeys-lru"), std::string::npos) << "the known policies are listed: " << unknown.err;
    const auto memcached = run({ "drive", trace, "--engine", "memcached", "--no-db", "--maxmemory", "64mb" });
    EXPECT_EQ(memcached.exitCode, 2);
    EXPECT_NE(memcached.err.find("--memory-limit"), std::string::npos) << memcached.err;
    const auto limitOnRedis = run({ "drive", trace, "--engine", "redis", "--no-db", "--memory-limit", "64mb" });
    EXPECT_EQ(limitOnRedis.exitCode, 2);
    EXPECT_NE(limitOnRedis.err.find("--maxmemory"), std::string::npos) << limitOnRedis.err;
    const auto policyAlone = run({ "drive", trace, "--engine", "redis", "--no-db", "--policy", "allkeys-lfu" });
    EXPECT_EQ(policyAlone.exitCode, 2);
    EXPECT_NE(policyAlone.err.find("give --maxmemory"), std::string::npos) << policyAlone.err;
    const auto memcachedPolicy = run(
        { "drive", trace, "--engine", "memcached", "--no-db", "--memory-limit", "64mb", "--policy", "allkeys-lfu" });
    EXPECT_EQ(memcachedPolicy.exitCode, 2);
    EXPECT_NE(memcachedPolicy.err.find("no --policy"), std::string::npos) << memcachedPolicy.err;
    const auto partMiB = run({ "drive", trace, "--engine", "memcached", "--no-db", "--memory-limit", "1500kb" });
    EXPECT_EQ(partMiB.exitCode, 2);
    EXPECT_NE(partMiB.err.find("whole number of megabytes"), std::string::npos) << partMiB.err;
}

} // namespace
