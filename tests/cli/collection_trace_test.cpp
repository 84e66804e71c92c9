// SPDX-License-Identifier: MIT
// Collection commands in a trace, against real servers: Debian's redis-server and every build of
// tests/engines (skipped with the reason where there are none). Each workload (collection_workloads.h) is
// run on a flushed server while a MONITOR connection captures what it executed; the capture is imported
// (every type's write commands and lookups, DEL, UNLINK, EXPIRE, PERSIST, SET over a collection, commands on
// the wrong type that the server refuses) and replayed element by element with the server's layout. The
// simulated usable bytes, index tables included, must be within 1% of the settled server's
// Δ(used_memory - mem_clients_normal), the live keys must match, and so must the collections in each type
// and encoding (TYPE and OBJECT ENCODING of every one).
//
// The workloads are drawn at random (fixed seeds), not written to pass: element counts on both sides of
// every entries limit, values and members on both sides of the value limits, integer members of every
// intset width and sets that stop being integer-only, tables grown one element at a time and emptied until
// they shrink, counters whose values change length, lists past a node and back, keys deleted, expiring,
// overwritten by strings; key counts around powers of two.

#include "collection_workloads.h"
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/collect/server_process.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "monitor_capture.h"
#include "resp_server_under_test.h"

#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

using namespace layoutlab;

namespace {

using test::Workload;

// TYPE and OBJECT ENCODING of each key that is still a collection, counted as "type encoding".
std::map<std::string, std::uint64_t> encodings(RespClient& client, const std::vector<std::string>& keys) {
    std::map<std::string, std::uint64_t> out;
    for (const std::string& key : keys) {
        auto type = client.command({ "TYPE", key });
        if (!type || (*type != "hash" && *type != "set" && *type != "zset" && *type != "list"))
            continue;
        auto encoding = client.command({ "OBJECT", "ENCODING", key });
        if (encoding)
            ++out[*type + " " + *encoding];
    }
    return out;
}

// The bucket arrays and child buckets a Valkey hashtable build holds for `keys` (DEBUG HTSTATS-KEY KEY full:
// each table's top-level buckets and child buckets, 64 bytes each, hashtable.c's bucket), or nullopt where
// none says so: no key in a table, or a build whose tables are dicts (Redis 7.0 refuses "full"; the others'
// replies have no "top-level buckets").
std::optional<double> serverBucketArrayBytes(RespClient& client, const std::vector<std::string>& keys) {
    double bytes = 0;
    bool told = false;
    for (const std::string& key : keys) {
        auto stats = client.command({ "DEBUG", "HTSTATS-KEY", key, "full" });
        if (!stats) // a compact encoding, a key the workload removed, or no "full"
            continue;
        if (stats->find("top-level buckets:") == std::string::npos)
            return std::nullopt;
        told = true;
        for (const std::string_view label : { "top-level buckets: ", "child buckets: " })
            for (std::size_t at = stats->find(label); at != std::string::npos; at = stats->find(label, at + 1))
                bytes += 64.0 * std::stod(stats->substr(at + label.size()));
    }
    return told ? std::optional<double>(bytes) : std::nullopt;
}

struct Compared {
    double predicted = 0;
    double measured = 0;
    double error() const { return (predicted - measured) / measured; }
};

// The server's keyspace saved and loaded again (DEBUG RELOAD: rdbSave, emptyData, rdbLoad), measured against
// `before`; the file it saved imported as a snapshot (format rdb) and simulated with the layout of loaded keys
// (layoutSpecForLoadedKeys): the keys, and the collections by type and encoding, must be the server's.
Compared compareReloaded(test::RespServerUnderTest& under, const Workload& workload, std::uint64_t before) {
    RespClient& client = *under.client;
    Compared out;
    EXPECT_TRUE(client.command({ "DEBUG", "RELOAD" }));
    EXPECT_TRUE(waitUntilSettled(client));
    out.measured = static_cast<double>(test::keyspaceMemory(client)) - static_cast<double>(before);
    auto models = parseLayoutAndAllocator(layoutSpecForLoadedKeys(under.layoutName), under.allocatorName);
    EXPECT_TRUE(models) << models.error().describe();
    auto trace = openTrace(under.running->workDir + "/dump.rdb");
    EXPECT_TRUE(trace) << trace.error().describe();
    if (!models || !trace)
        return out;
    auto result = simulate({ models->layout, models->allocator, {} }, **trace);
    EXPECT_TRUE(result) << result.error().describe();
    if (!result)
        return out;
    out.predicted = static_cast<double>(result->points.at(0).usableBytes);
    const auto keys = keyCount(client);
    EXPECT_TRUE(keys && result->points.at(0).keys == *keys) << "live keys after the reload";
    std::map<std::string, std::uint64_t> simulated;
    for (const CollectionUsage& row : result->collections)
        simulated[row.type + " " + row.encoding] += row.keys;
    EXPECT_EQ(simulated, encodings(client, workload.collectionKeys)) << "loaded collections by type and encoding";
    return out;
}

// What a server allocates once, on its first keys and on its first reload (32 KiB on Valkey 9.1.0), is not the
// keyspace's: made before any workload is measured.
bool warmedUp(RespClient& client) {
    std::uint64_t refused = 0;
    return warmUpCommands(client) && client.pipeline(test::hashesGrown(300).commands, 512, &refused)
        && client.command({ "DEBUG", "RELOAD" });
}

// A workload run on the flushed server while a MONITOR connection captures it: what the capture holds, and the
// settled server's Δ(used_memory - mem_clients_normal) from `before`, its keyspace's memory when flushed.
struct Captured {
    std::string lines;
    std::uint64_t before = 0;
    double measured = 0;
};
std::optional<Captured> capturedRun(test::RespServerUnderTest& under, const Workload& workload) {
    RespClient& client = *under.client;
    Captured out;
    if (!client.command({ "FLUSHALL", "SYNC" }) || !waitUntilSettled(client))
        return std::nullopt;
    out.before = test::keyspaceMemory(client);
    {
        test::MonitorCapture monitor(under.running->port);
        std::uint64_t refused = 0; // the workloads' refused commands are in the capture, and change nothing
        const std::string marker = "layoutlab-capture-end";
        if (!client.pipeline(workload.commands, 512, &refused) || !client.command({ "ECHO", marker }))
            return std::nullopt;
        monitor.waitFor(marker);
        monitor.close();
        out.lines = monitor.lines();
    }
    if (!test::waitForOneClient(client) || !waitUntilSettled(client))
        return std::nullopt;
    out.measured = static_cast<double>(test::keyspaceMemory(client)) - static_cast<double>(out.before);
    return out;
}

// Each test on server GetParam(), started with DEBUG enabled and warmed up (skipped where there is none).
class CollectionTrace : public ::testing::TestWithParam<std::size_t> {
protected:
    void SetUp() override {
        const auto all = test::respServers(LAYOUTLAB_ENGINE_MANIFEST);
        if (GetParam() >= all.size())
            GTEST_SKIP() << "no server " << GetParam()
                         << ": Debian's redis-server and the builds of tests/engines are all there are here";
        m_server = all[GetParam()];
        m_under = test::startRespServer(m_server, { "--enable-debug-command", "yes" });
        ASSERT_TRUE(m_under);
        ASSERT_TRUE(warmedUp(*m_under->client));
    }
    test::EngineBuild m_server;
    std::unique_ptr<test::RespServerUnderTest> m_under;
};

TEST_P(CollectionTrace, EveryCollectionWorkloadWithinOnePercentOfTheServer) {
    const test::EngineBuild& server = m_server;
    auto& under = m_under;
    auto& client = under->client;
    const std::string& layoutName = under->layoutName;
    const LayoutAndAllocator* models = &under->models;
    auto dir = makeTempDir("layoutlab-hash-trace-");
    ASSERT_TRUE(dir);

    for (const Workload& workload : test::collectionWorkloads()) {
        SCOPED_TRACE(server.label + " " + workload.name);
        const auto run = capturedRun(*under, workload);
        ASSERT_TRUE(run);
        const std::string& capture = run->lines;
        const std::uint64_t before = run->before;
        const double measured = run->measured;

        const std::string path = fmt::format("{}/{}.monitor", *dir, workload.name);
        std::ofstream(path) << capture;
        if (const char* keep = std::getenv("LAYOUTLAB_KEEP_CAPTURES")) // for a look at a failing workload
            std::ofstream(fmt::format("{}/{}-{}.monitor", keep, server.label, workload.name)) << capture;
        auto trace = openTrace(path, { "monitor", OnError::Fail, 16 });
        ASSERT_TRUE(trace) << trace.error().describe();
        auto result = simulate({ models->layout, models->allocator, {} }, **trace);
        ASSERT_TRUE(result) << result.error().describe();
        const ThresholdPoint& point = result->points.at(0);
        const double predicted = static_cast<double>(point.usableBytes);
        const double error = (predicted - measured) / measured;
        const auto keys = keyCount(*client);
        ASSERT_TRUE(keys);
        EXPECT_EQ(point.keys, *keys) << "live keys";
        std::map<std::string, std::uint64_t> simulated;
        for (const CollectionUsage& row : result->collections)
            simulated[row.type + " " + row.encoding] += row.keys;
        const auto served = encodings(*client, workload.collectionKeys);
        EXPECT_EQ(simulated, served) << "collections by type and encoding";
        // Where a rehash that skips empty buckets stands is the server's hash seed's doing: the model counts
        // an old table by the chance that it is still held, and a run measures one draw of it (the churn rows
        // move by about a point from run to run on the 9.1 line, all of it in the bucket arrays: below). Known
        // gaps, left open (docs/validation.md has them, with their commands):
        //  - the 9.1 line's two churn workloads, held to 2% for the arrays' draw (and all but the arrays to
        //    0.2%, below);
        //  - Redis 7.2's and Valkey 8.0's set dicts (no_value), emptied in the order added after a table has
        //    rehashed: a rehash puts each bucket's newest member where the bucket holds it, which the model
        //    does not follow (it takes the order of adds until the first rehash, then removals at random);
        //  - Redis 7.0's set tables, shrinking as SREM empties them, one draw of the seed's as above.
        // Every other workload and build is held to 1%.
        const bool shrinkGap = (workload.name.starts_with("churn") || workload.name.starts_with("sets-churn"))
            && layoutName.starts_with("valkey-9.1");
        const bool setOrderGap = workload.name.starts_with("sets-churn")
            && (layoutName.starts_with("redis-7.2") || layoutName.starts_with("valkey-8.0")
                || layoutName.starts_with("redis-7.0"));
        EXPECT_LT(std::abs(error), shrinkGap || setOrderGap ? 0.02 : 0.01)
            << "(" << layoutName << ") predicted " << predicted << " B, measured " << measured << " B";
        // How many bucket arrays a server holds is its hash seed's draw (where the entries fall, how a rehash's
        // steps meet empty buckets), which the model counts in expectation: on the 9.1 line, whose servers tell
        // their own (DEBUG HTSTATS-KEY), all but them must agree closely, whatever the seed: to 0.2%, and four
        // standard deviations of the other draw, the sorted sets' skiplist levels (the server's random()), which
        // the model gives (usableBytesVariance). Printed for 8.1 and 9.0 too, not held: their reports do not
        // follow the memory held (docs/validation.md).
        std::string arrays;
        if (const auto serverArrays = serverBucketArrayBytes(*client, workload.collectionKeys)) {
            double modelArrays = 0;
            double levelsVariance = 0;
            for (const CollectionUsage& row : result->collections) {
                modelArrays += row.bucketArrayBytes;
                levelsVariance += row.usableBytesVariance;
            }
            const double levelsSd = std::sqrt(levelsVariance) / measured;
            const double rest = ((predicted - modelArrays) - (measured - *serverArrays)) / measured;
            arrays = fmt::format(" arrays: server {:.0f}, model {:.0f}; the rest {:+.3f}% (levels' sd {:.3f}%)",
                *serverArrays, modelArrays, 100 * rest, 100 * levelsSd);
            if (layoutName.starts_with("valkey-9.1"))
                EXPECT_LT(std::abs(rest), 0.002 + 4 * levelsSd)
                    << "(" << layoutName << ") all but the bucket arrays:" << arrays;
        }
        std::string byEncoding;
        for (const auto& [encoding, count] : served)
            byEncoding += fmt::format("{} {}, ", count, encoding);
        std::printf("%-14s %-17s keys %6llu  predicted %10.0f  measured %10.0f  (%+.3f%%)  %s%s\n",
            server.label.c_str(), workload.name.c_str(), static_cast<unsigned long long>(*keys), predicted, measured,
            100 * error, byEncoding.c_str(), arrays.c_str());

        const Compared reloaded = compareReloaded(*under, workload, before);
        EXPECT_LT(std::abs(reloaded.error()), 0.01)
            << "(" << layoutName << ", loaded from its RDB file) predicted " << reloaded.predicted << " B, measured "
            << reloaded.measured << " B";
        std::printf("%-14s %-17s rdb          predicted %10.0f  measured %10.0f  (%+.3f%%)\n", server.label.c_str(),
            workload.name.c_str(), reloaded.predicted, reloaded.measured, 100 * reloaded.error());
    }
    removeTree(*dir);
}

// LINSERT under node limits of other kinds: list-max-listpack-size 16 (a count: nodes of at most 16 elements,
// so that nearly every insert meets a full node, splits it or lands in a neighbour, and splits merge) and -1
// (nodes of 4 KiB), the lists-inserts workload captured on a server set so and replayed with the same limit.
TEST_P(CollectionTrace, ListInsertsUnderOtherNodeLimitsWithinOnePercent) {
    const test::EngineBuild& server = m_server;
    auto& under = m_under;
    auto& client = under->client;
    auto dir = makeTempDir("layoutlab-list-limits-");
    ASSERT_TRUE(dir);
    const Workload workload = test::listInserts(160);
    for (const std::int64_t limit : { 16, -1 }) {
        SCOPED_TRACE(fmt::format("{} list-max-listpack-size {}", server.label, limit));
        ASSERT_TRUE(client->command({ "CONFIG", "SET", "list-max-listpack-size", std::to_string(limit) }));
        const auto run = capturedRun(*under, workload);
        ASSERT_TRUE(run);
        const double measured = run->measured;
        const std::string path = fmt::format("{}/inserts{}.monitor", *dir, limit);
        std::ofstream(path) << run->lines;
        auto trace = openTrace(path, { "monitor", OnError::Fail, 16 });
        ASSERT_TRUE(trace) << trace.error().describe();
        SimulationConfig config { under->models.layout, under->models.allocator, {} };
        config.collectionLimits.listMaxListpackSize = limit;
        auto result = simulate(config, **trace);
        ASSERT_TRUE(result) << result.error().describe();
        const double predicted = static_cast<double>(result->points.at(0).usableBytes);
        const double error = (predicted - measured) / measured;
        const auto keys = keyCount(*client);
        ASSERT_TRUE(keys);
        EXPECT_EQ(result->points.at(0).keys, *keys) << "live keys";
        std::map<std::string, std::uint64_t> simulated;
        for (const CollectionUsage& row : result->collections)
            simulated[row.type + " " + row.encoding] += row.keys;
        EXPECT_EQ(simulated, encodings(*client, workload.collectionKeys)) << "lists by encoding";
        EXPECT_LT(std::abs(error), 0.01) << "predicted " << predicted << " B, measured " << measured << " B";
        std::printf("%-14s list-max-listpack-size %3lld  predicted %10.0f  measured %10.0f  (%+.3f%%)\n",
            server.label.c_str(), static_cast<long long>(limit), predicted, measured, 100 * error);
    }
    removeTree(*dir);
}

INSTANTIATE_TEST_SUITE_P(Servers, CollectionTrace, ::testing::Range<std::size_t>(0, 12),
    [](const auto& info) { return "server" + std::to_string(info.param); });

} // namespace
