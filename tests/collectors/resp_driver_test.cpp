// SPDX-License-Identifier: MIT
// The parts of `drive` that need no server: key names, values, the server's jemalloc build read from
// MEMORY MALLOC-STATS, the layout for an engine version, endpoints and argument vectors.

#include "layoutlab/collect/engine_server.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/collect/run_phase.h"
#include "layoutlab/collect/trace_keys.h"

#include <gtest/gtest.h>
#include <set>

using namespace layoutlab;

namespace {

TEST(RespDriver, KeyNamesHaveTheTracesLengthAndStayDistinctWhileTheyCan) {
    EXPECT_EQ(traceKeyName(42, 16), "key:000000000042");
    for (std::uint32_t bytes : { 1u, 2u, 3u, 5u, 8u, 16u, 40u, 300u }) {
        std::set<std::string> names;
        const std::uint32_t ids = bytes == 1 ? 94 : bytes == 2 ? 94 * 94 : 70000; // as many as fit
        for (std::uint32_t id = 0; id < ids; ++id) {
            const auto name = traceKeyName(id, bytes);
            ASSERT_EQ(name.size(), bytes) << "id " << id;
            names.insert(name);
        }
        EXPECT_EQ(names.size(), ids) << bytes << "-byte names";
        EXPECT_TRUE(keyNamesDistinct(ids, bytes));
    }
    EXPECT_FALSE(keyNamesDistinct(95, 1)); // 1-byte keys name 94 keys at most
    EXPECT_FALSE(keyNamesDistinct(94 * 94 + 1, 2));
    EXPECT_TRUE(keyNamesDistinct(94 * 94, 2));
    EXPECT_TRUE(keyNamesDistinct(std::uint64_t { 1 } << 32, 5)); // 94^5 > 2^32
    for (std::uint32_t bytes = 1; bytes < 14; ++bytes) // printable, no space: memcached accepts them too
        for (std::uint32_t id : { 0u, 93u, 94u, 123456u, 4294967295u })
            for (const char c : traceKeyName(id, bytes))
                ASSERT_TRUE(c > ' ' && c <= '~') << "id " << id << ", " << bytes << " bytes";
}

TEST(RespDriver, IntegerValuesAreCanonicalDecimals) {
    for (std::uint32_t bytes = 1; bytes <= 19; ++bytes) {
        const auto v = traceValue(bytes, ValueKind::Integer, bytes * 7);
        ASSERT_EQ(v.size(), bytes);
        EXPECT_NE(v[0], '0');
        EXPECT_EQ(v.find_first_not_of("0123456789"), std::string::npos);
    }
    for (std::uint32_t seed = 0; seed < 20; ++seed) // every 19-digit value fits a long (<= 9223372036854775807)
        EXPECT_LE(traceValue(19, ValueKind::Integer, seed), "9223372036854775807") << seed;
    EXPECT_EQ(traceValue(5, ValueKind::String, 0), "aaaaa");
    EXPECT_EQ(traceValue(25, ValueKind::Integer, 1).size(), 25u); // too long for a long: a string
}

TEST(RespDriver, JemallocBinsTellTheQuantum) {
    const std::string debian = "___ Begin jemalloc statistics ___\n"
                               "bins:           size ind    allocated      nmalloc\n"
                               "                   8   0         5600          700\n"
                               "                  16   1       190400        11900\n"
                               "                  32   2       160000         5300\n"
                               "                     ---\n"
                               "                  48   3        33600          700\n"
                               "large:          size ind    allocated\n"
                               "bins:           size ind\n"
                               "                  24   9            0            0\n";
    EXPECT_EQ(parseJemallocBins(debian), (std::vector<std::uint64_t> { 8, 16, 32, 48 })); // the first table only
    const std::string bundled = "bins: size ind\n 8 0\n 16 1\n 24 2\n 32 3\n";
    EXPECT_EQ(parseJemallocBins(bundled), (std::vector<std::uint64_t> { 8, 16, 24, 32 }));
    EXPECT_TRUE(parseJemallocBins("no table here\n").empty());
}

TEST(RespDriver, JemallocStartBinsAreTheirCurregsAndCurslabs) {
    // As Debian's Redis 7.0.15 prints them (columns cut after pgs), with a run of unused bins.
    const std::string stats
        = "bins:           size ind    allocated      nmalloc (#/sec)      ndalloc (#/sec)    nrequests   (#/sec)  "
          "nshards      curregs     curslabs  nonfull_slabs regs pgs\n"
          "                   8   0         5600          700     700            0       0         1845      1845 "
          "       1          700            2              0  512   1\n"
          "                  16   1       190400        11900   11900            0       0        13005     13005 "
          "       1        11900           47              0  256   1\n"
          "                     ---\n"
          "                  64   4            0            0       0            0       0            0         0 "
          "       1            0            0              0   64   1\n"
          "large:          size ind    allocated\n";
    EXPECT_EQ(parseJemallocStartBins(stats),
        (std::vector<JemallocArenaModel::StartBin> { { 8, 700, 2 }, { 16, 11900, 47 } }));
    EXPECT_TRUE(parseJemallocStartBins("bins: size ind\n 8 0\n").empty()) << "a table without curregs";
    // With the thread caches' counters, as Valkey 9.1.0 prints them after drainThreadCache.
    const std::string counted
        = "bins:           size ind    allocated      nmalloc (#/sec)      ndalloc (#/sec)    nrequests   (#/sec)  "
          "nshards      curregs     curslabs  nonfull_slabs regs pgs   util       nfills (#/sec)     nflushes (#/sec)\n"
          "                  96   9          576            8       8            2       2           19        19 "
          "       1            6            1              0  128   3  0.046            1       1            4       "
          "4\n"
          "large:          size ind    allocated\n";
    EXPECT_EQ(parseJemallocStartBins(counted), (std::vector<JemallocArenaModel::StartBin> { { 96, 6, 1, 1, 4 } }));
}

TEST(RespDriver, LayoutFollowsEngineAndVersion) {
    EXPECT_EQ(layoutForEngine("redis", "7.0.15"), "redis-7.0");
    EXPECT_EQ(layoutForEngine("redis", "7.2.4"), "redis-7.2"); // 7.2: its collections differ
    EXPECT_EQ(layoutForEngine("valkey", "8.0.1"), "valkey-8.0");
    EXPECT_EQ(layoutForEngine("valkey", "8.1.1"), "valkey-8.1");
    EXPECT_EQ(layoutForEngine("valkey", "9.0.0"), "valkey-9.0");
    EXPECT_EQ(layoutForEngine("valkey", "9.1.0"), "valkey-9.1");
    EXPECT_EQ(layoutForEngine("redis", "6.2.0"), "");
    EXPECT_EQ(layoutForEngine("redis", "unstable"), "");
    // A development build reports 255.255.255 whatever its age: the version cannot decide.
    EXPECT_EQ(layoutForEngine("valkey", "255.255.255"), "");
}

TEST(EngineServer, EndpointsAreLoopbackUnlessAllowed) {
    auto local = parseEndpoint("127.0.0.1:6379", false);
    ASSERT_TRUE(local);
    EXPECT_EQ(local->host, "127.0.0.1");
    EXPECT_EQ(local->port, 6379);
    EXPECT_TRUE(parseEndpoint("localhost:7000", false));
    EXPECT_TRUE(parseEndpoint("[::1]:7000", false));
    auto remote = parseEndpoint("10.1.2.3:6379", false);
    ASSERT_FALSE(remote);
    EXPECT_EQ(remote.error().tag, kTagRemoteHost); // each front end says how to allow it
    EXPECT_EQ(remote.error().message.find("--"), std::string::npos);
    EXPECT_TRUE(parseEndpoint("10.1.2.3:6379", true));
    for (const char* bad : { "6379", "host:", ":6379", "host:0", "host:70000", "host:12a" })
        EXPECT_FALSE(parseEndpoint(bad, true)) << bad;
}

TEST(EngineServer, ServersStartFromArgumentVectorsWithPersistenceOff) {
    const auto redis = engineArgv(Engine::Redis, "/usr/bin/redis-server", 7001, false);
    EXPECT_EQ(redis.front(), "/usr/bin/redis-server");
    auto has = [](const std::vector<std::string>& argv, const std::string& flag, const std::string& value) {
        for (std::size_t i = 0; i + 1 < argv.size(); ++i)
            if (argv[i] == flag && argv[i + 1] == value)
                return true;
        return false;
    };
    EXPECT_TRUE(has(redis, "--port", "7001"));
    EXPECT_TRUE(has(redis, "--bind", "127.0.0.1"));
    EXPECT_TRUE(has(redis, "--save", ""));
    EXPECT_TRUE(has(redis, "--appendonly", "no"));
    EXPECT_TRUE(has(redis, "--enable-debug-command", "local")) << "DEBUG HTSTATS tells when rehashing is done";
    EXPECT_TRUE(has(redis, "--latency-tracking", "no")) << "a latency histogram per command is not the keys' memory";
    const auto memcached = engineArgv(Engine::Memcached, "memcached", 7002, true);
    EXPECT_TRUE(has(memcached, "-u", "root"));
    EXPECT_TRUE(has(memcached, "-l", "127.0.0.1"));
    EXPECT_TRUE(has(memcached, "-p", "7002"));
    EXPECT_FALSE(has(engineArgv(Engine::Memcached, "memcached", 7002, false), "-u", "root"));
}

TEST(LatencyHistogram, BucketsAreAtMostASixteenthWide) {
    std::uint64_t previous = 0;
    for (std::size_t b = 1; b < 60 * 16; ++b) {
        const auto upper = LatencyHistogram::upperBound(b);
        ASSERT_GT(upper, previous) << "bucket " << b;
        previous = upper;
    }
    for (std::uint64_t ns : { 1ull, 15ull, 16ull, 17ull, 1000ull, 123456ull, 987654321ull, 1ull << 40 }) {
        const auto bucket = LatencyHistogram::bucketOf(ns);
        const auto upper = LatencyHistogram::upperBound(bucket);
        EXPECT_GE(upper, ns);
        EXPECT_LE(static_cast<double>(upper - ns), static_cast<double>(ns) / 16 + 1) << ns;
        if (bucket > 0)
            EXPECT_LT(LatencyHistogram::upperBound(bucket - 1), ns) << ns;
    }
}

TEST(LatencyHistogram, QuantilesFollowTheCounts) {
    LatencyHistogram h;
    h.add(1000, 980); // 98% at 1 us
    h.add(100000, 19); // 1.9% at 100 us
    h.add(10000000); // one at 10 ms
    EXPECT_EQ(h.count(), 1000u);
    EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 1000, 1000 / 16.0);
    EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 100000, 100000 / 16.0);
    EXPECT_NEAR(static_cast<double>(h.quantile(0.9995)), 10000000, 10000000 / 16.0);
    LatencyHistogram other;
    other.add(1000, 1000);
    h.merge(other);
    EXPECT_EQ(h.count(), 2000u);
    EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 1000, 1000 / 16.0);
    EXPECT_EQ(LatencyHistogram().quantile(0.5), 0u);
}

} // namespace
