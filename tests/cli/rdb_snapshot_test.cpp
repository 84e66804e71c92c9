// SPDX-License-Identifier: MIT
// RDB files that real servers saved, read directly (format "rdb"), against the servers that load them:
// Debian's redis-server and the Valkey builds of tests/engines (skipped with the reason where there are
// none). A server is filled with string keys on both sides of every limit (integers shared and not,
// EMBSTR's 44 bytes, Valkey's 64 and 128, values LZF compresses, values past 32 KiB, integer keys, TTLs),
// at a power of two of keys and one past it, 3/8 as many in database 2, and saves; a second server starts
// from that file. The file imported and simulated with the server's layout must come within 1% of what the
// loading server holds (its settled used_memory, client buffers left out, less the same after FLUSHALL), with
// the same key count. Then every collection type is added and saved again: the strings and the collections import, and
// the stream is counted as not modelled, none lost.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/collect/server_process.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "resp_servers.h"
#include "server_fixture.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <set>
#include <thread>

using namespace layoutlab;

namespace {

using Command = std::vector<std::string>;

// Values on both sides of every limit, and what RDB saves differently: integers it encodes in 1, 2 or
// 4 bytes (rdbTryIntegerEncoding) or as text (past 32 bits), and long runs LZF compresses.
std::string value(std::uint32_t i) {
    static const std::uint32_t sizes[]
        = { 1, 5, 8, 20, 21, 31, 32, 40, 44, 45, 50, 60, 64, 72, 80, 100, 108, 120, 128, 129, 200, 300, 1000 };
    switch (i % 11) {
    case 0:
        return std::to_string(i % 10000); // a shared integer where the server shares them
    case 1:
        return std::to_string(-static_cast<std::int64_t>(i) * 7919); // INT8/16/32 in the file
    case 2:
        return std::to_string(5000000000ULL + i); // past 32 bits: digits in the file, INT in memory
    case 3:
        return std::string(21 + i % 300, 'z'); // LZF compresses it
    default:
        break;
    }
    std::string v(sizes[(i * 7) % std::size(sizes)], ' ');
    for (std::size_t c = 0; c < v.size(); ++c) // varied enough that LZF leaves it as it is
        v[c] = static_cast<char>('a' + (i * 31 + c * c * 7 + c / 3) % 26);
    return v;
}
std::vector<Command> fill(std::uint32_t keys) {
    std::vector<Command> out;
    for (std::uint32_t i = 0; i < keys; ++i) {
        // Keys of 1 to 30 bytes; every 97th is a number, which the file holds as an integer.
        const std::string key
            = i % 97 == 0 ? std::to_string(100000 + i) : fmt::format("{}:{}", std::string(i % 24, 'k'), i);
        std::string v = i % 1500 == 7 ? std::string(40000 + i, 'x') : value(i); // past PROTO_MBULK_BIG_ARG
        if (i % 3 == 0)
            out.push_back({ "SET", key, std::move(v), "EX", "1000000" });
        else
            out.push_back({ "SET", key, std::move(v) });
    }
    return out;
}

// Every collection type and encoding a server of this line can save.
std::vector<Command> collections() {
    std::vector<Command> out { { "HSET", "h:small", "f", "v", "g", "w" }, { "RPUSH", "list", "a", "b", "c" },
        { "SADD", "set:ints", "1", "2", "3" }, { "SADD", "set:small", "a", "b" }, { "ZADD", "zset:small", "1", "a" },
        { "XADD", "stream", "1-1", "f", "v" }, { "XGROUP", "CREATE", "stream", "g", "0" },
        { "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "stream", ">" } };
    Command bigHash { "HSET", "h:big" }, bigSet { "SADD", "set:big" }, bigZset { "ZADD", "zset:big" };
    for (int i = 0; i < 600; ++i) {
        bigHash.insert(bigHash.end(), { fmt::format("field{}", i), std::string(i % 80, 'v') });
        bigSet.push_back(fmt::format("member{}", i));
        bigZset.insert(bigZset.end(), { std::to_string(i), fmt::format("m{}", i) });
    }
    out.push_back(bigHash);
    out.push_back(bigSet);
    out.push_back(bigZset);
    return out;
}
constexpr std::uint64_t kCollectionKeys = 9;

// The server answers -LOADING until it has read its file.
bool waitUntilLoaded(std::uint16_t port) {
    for (int i = 0; i < 3000; ++i) {
        if (auto client = RespClient::connect("127.0.0.1", port)) {
            auto persistence = client->info("persistence");
            if (persistence && persistence->count("loading") && persistence->at("loading") == "0")
                return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

struct Imported {
    std::vector<Request> requests;
    RejectReport rejects;
};
Imported importFile(const std::string& path) {
    auto importer = openImporter(path, {});
    if (!importer)
        throw std::runtime_error(importer.error().describe());
    EXPECT_EQ((*importer)->formatName(), "rdb");
    Imported out;
    std::vector<Request> batch(4096);
    for (;;) {
        auto n = (*importer)->read(batch);
        if (!n)
            throw std::runtime_error(n.error().describe());
        if (*n == 0)
            break;
        out.requests.insert(out.requests.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*n));
    }
    out.rejects = (*importer)->rejects();
    return out;
}

const std::vector<std::string> kServerArgs { "--port", "{port}", "--bind", "127.0.0.1", "--save", "", "--appendonly",
    "no", "--daemonize", "no", "--dbfilename", "dump.rdb", "--latency-tracking", "no" };

class RdbSnapshot : public ::testing::TestWithParam<std::size_t> { };

TEST_P(RdbSnapshot, ALoadedFileWithinOnePercentOfItsPrediction) {
    const auto all = test::respServers(LAYOUTLAB_ENGINE_MANIFEST);
    if (GetParam() >= all.size())
        GTEST_SKIP() << "no server " << GetParam() << ": Debian's redis-server and the Valkey builds of "
                     << "tests/engines are all there are here";
    const test::EngineBuild& server = all[GetParam()];
    for (const std::uint32_t keys : { 4096u, 16385u }) {
        SCOPED_TRACE(fmt::format("{}, {} keys", server.label, keys));
        // The server that saves.
        auto saver = test::startServer(server.binary, kServerArgs);
        ASSERT_TRUE(saver);
        auto client = RespClient::connect("127.0.0.1", saver->port);
        ASSERT_TRUE(client) << client.error().describe();
        auto info = describeRespServer(*client);
        ASSERT_TRUE(info) << info.error().describe();
        const std::string layoutName = layoutSpecForLoadedKeys(server.layout.empty() ? info->layout : server.layout);
        ASSERT_FALSE(layoutName.empty()) << "no layout for version " << info->version;
        auto layout = parseLayout(layoutName);
        ASSERT_TRUE(layout) << layout.error().describe();
        auto allocator = parseAllocator(info->allocator);
        ASSERT_TRUE(allocator) << allocator.error().describe();
        ASSERT_TRUE(client->pipeline(fill(keys)));
        // Database 2 holds the first 3/8 of the names too (other keys): its tables are its own, sized by its
        // own RESIZEDB, as the loading server's are (one table of both would be another size).
        const std::uint32_t keysInTwo = keys * 3 / 8;
        std::vector<Command> second { { "SELECT", "2" } };
        for (Command& c : fill(keysInTwo))
            second.push_back(std::move(c));
        second.push_back({ "SELECT", "0" });
        ASSERT_TRUE(client->pipeline(second));
        ASSERT_TRUE(client->command({ "SAVE" }));
        const std::string file = saver->workDir + "/dump.rdb";

        // The server that loads it.
        auto args = kServerArgs;
        args.insert(args.end(), { "--dir", saver->workDir });
        auto loader = test::startServer(server.binary, args);
        ASSERT_TRUE(loader);
        ASSERT_TRUE(waitUntilLoaded(loader->port));
        auto loaded = RespClient::connect("127.0.0.1", loader->port);
        ASSERT_TRUE(loaded) << loaded.error().describe();
        ASSERT_TRUE(waitUntilSettled(*loaded));
        const std::uint64_t held = test::keyspaceMemory(*loaded);
        auto heldKeys = keyCountAllDatabases(*loaded);
        ASSERT_TRUE(heldKeys);
        ASSERT_TRUE(loaded->command({ "FLUSHALL", "SYNC" }));
        ASSERT_TRUE(waitUntilSettled(*loaded));
        const double measured = static_cast<double>(held) - static_cast<double>(test::keyspaceMemory(*loaded));

        const Imported snapshot = importFile(file);
        ASSERT_FALSE(snapshot.requests.empty());
        EXPECT_EQ(snapshot.requests.front().op, Op::Resize); // database 0's RESIZEDB, before its keys
        EXPECT_EQ(snapshot.requests.front().valueBytes, keys);
        // Database 2's keys each placed there before its SET, its RESIZEDB before the first.
        EXPECT_EQ(snapshot.requests.size(), keys + 1 + 2 * keysInTwo + 1);
        std::uint64_t placed = 0;
        for (const Request& r : snapshot.requests)
            placed += r.op == Op::Resize && r.valueBytes == kKeyDatabase && r.ttlSeconds == 2;
        EXPECT_EQ(placed, keysInTwo);
        EXPECT_EQ(snapshot.rejects.total, 0u);
        auto trace = openTrace(file);
        ASSERT_TRUE(trace) << trace.error().describe();
        auto result = simulate({ *layout, *allocator, {} }, **trace);
        ASSERT_TRUE(result) << result.error().describe();
        const auto& point = result->points.at(0);
        const double predicted = static_cast<double>(point.usableBytes);
        const double error = (predicted - measured) / measured;
        EXPECT_EQ(point.keys, *heldKeys);
        EXPECT_LT(std::abs(error), 0.01) << layoutName << ": predicted " << predicted << " B, measured " << measured
                                         << " B";
        std::printf("%-14s %-12s keys %6llu  predicted %10.0f  measured %10.0f  (%+.3f%%)\n", server.label.c_str(),
            layoutName.c_str(), static_cast<unsigned long long>(*heldKeys), predicted, measured, 100 * error);

        // Every collection beside a string, saved by the same server: the string and the hashes, sets, sorted
        // sets and lists import (each collection as its Load and its elements), the stream is counted as not
        // modelled, and the file reads to its checksum. (collection_trace_test holds loaded collections to the
        // servers' memory.)
        ASSERT_TRUE(loaded->pipeline(collections()));
        ASSERT_TRUE(loaded->command({ "SET", "string", "value" }));
        ASSERT_TRUE(loaded->command({ "SAVE" }));
        const Imported mixed = importFile(file);
        std::set<std::uint32_t> keysWritten;
        std::uint64_t loads = 0;
        for (const Request& r : mixed.requests) {
            if (r.op != Op::Resize)
                keysWritten.insert(r.keyId);
            loads += r.op == Op::Element && r.elementOp().action == ElementAction::Load;
        }
        EXPECT_EQ(keysWritten.size(), kCollectionKeys); // the string and the collections but the stream
        EXPECT_GE(loads, kCollectionKeys - 1);
        EXPECT_EQ(mixed.rejects.notModelled, (decltype(mixed.rejects.notModelled) { { "stream", 1 } }));
    }
}

INSTANTIATE_TEST_SUITE_P(Servers, RdbSnapshot, ::testing::Range<std::size_t>(0, 12),
    [](const auto& info) { return "server" + std::to_string(info.param); });

} // namespace
