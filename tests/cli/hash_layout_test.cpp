// SPDX-License-Identifier: MIT
// Hash keys against real servers (layout/hash_layout.h): Debian's Redis 7.0 and every build of tests/engines.
// For each shape (fields on both sides of hash-max-listpack-entries, fields and values on both sides of
// hash-max-listpack-value, 512 and 64 by default, all fields in one HSET or one per HSET, with and without
// TTLs), a server is
// filled with keys of that shape; the model's usable bytes per key, times the keys, plus the keyspace's
// table, must be within 1% of the settled server's Δ(used_memory - mem_clients_normal), and OBJECT
// ENCODING must name the model's encoding.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/collect/server_process.h"
#include "layoutlab/layout/hash_layout.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/index_table_model.h"
#include "resp_servers.h"
#include "server_fixture.h"

#include <bit>
#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using Command = std::vector<std::string>;

struct Scenario {
    std::uint64_t entries;
    std::uint32_t fieldBytes;
    std::uint32_t valueBytes;
    bool oneCommand;
    bool ttl;
};
const Scenario kScenarios[] = {
    { 1, 8, 20, true, false }, // the smallest listpack
    { 16, 8, 1, true, true }, { 60, 10, 40, false, false }, // a listpack grown one field at a time
    { 512, 8, 64, true, false }, // at both limits (512 fields, 64 bytes): still a listpack
    { 513, 8, 20, false, false }, // one past, one field at a time: converted, sized for 513 (1,024 buckets)
    { 513, 8, 20, true, true }, // one past in one HSET: sized at once
    { 700, 12, 30, true, false },
    { 1100, 8, 8, false, false }, // grown past 1,024 one field at a time: the old half still rehashing
    { 10, 8, 65, true, false }, // a value one past the value limit: a table of 16 buckets, grown from 4
    { 100, 8, 200, false, true }, // grown to 128 buckets: rehashed away on Redis 7.0 (two lookups a field)
    { 3, 70, 5, true, false }, // a long field
};

// Each key's fields named apart from every other key's: with the same names, every hash of a server would put
// its fields in the same buckets (one hash seed per process), and the keys' child buckets would be one draw
// of chance times the keys instead of its average.
std::string field(std::uint64_t key, std::uint64_t i, std::uint32_t bytes) {
    // The low hex digits, which i (times an odd number) makes distinct within a key.
    const std::string digits = fmt::format("{:016x}", key * 2654435761ULL + i * 40503ULL);
    const std::size_t keep = std::min<std::size_t>(bytes > 0 ? bytes - 1 : 0, digits.size());
    std::string f = "f" + digits.substr(digits.size() - keep);
    f.resize(bytes, 'x');
    return f;
}
std::string value(std::uint64_t key, std::uint64_t i, std::uint32_t bytes) {
    std::string v(bytes, 'v');
    for (std::size_t c = 0; c < v.size(); ++c)
        v[c] = static_cast<char>('a' + (key * 7 + i * 3 + c) % 26);
    return v;
}
std::vector<Command> fill(const Scenario& s, std::uint64_t keys) {
    std::vector<Command> out;
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::string key = fmt::format("hash:{:0>11}", k); // 16 bytes
        if (s.oneCommand) {
            Command c { "HSET", key };
            for (std::uint64_t i = 0; i < s.entries; ++i)
                c.insert(c.end(), { field(k, i, s.fieldBytes), value(k, i, s.valueBytes) });
            out.push_back(std::move(c));
        } else {
            for (std::uint64_t i = 0; i < s.entries; ++i)
                out.push_back({ "HSET", key, field(k, i, s.fieldBytes), value(k, i, s.valueBytes) });
        }
        if (s.ttl)
            out.push_back({ "EXPIRE", key, "1000000" });
    }
    return out;
}

class HashLayout : public ::testing::TestWithParam<std::size_t> { };

TEST_P(HashLayout, EveryShapeWithinOnePercentOfTheServer) {
    const auto all = test::respServers(LAYOUTLAB_ENGINE_MANIFEST);
    if (GetParam() >= all.size())
        GTEST_SKIP() << "no server " << GetParam() << ": Debian's redis-server and the builds of tests/engines are "
                     << "all there are here";
    const test::EngineBuild& server = all[GetParam()];
    auto running = test::startServer(server.binary,
        { "--port", "{port}", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no",
            "--latency-tracking", "no" });
    ASSERT_TRUE(running);
    auto client = RespClient::connect("127.0.0.1", running->port);
    ASSERT_TRUE(client) << client.error().describe();
    auto info = describeRespServer(*client);
    ASSERT_TRUE(info) << info.error().describe();
    const std::string layoutName = server.layout.empty() ? info->layout : server.layout;
    auto models = parseLayoutAndAllocator(layoutName, info->allocator);
    ASSERT_TRUE(models) << models.error().describe();
    if (!describeHash(*models->layout, {}, *models->allocator))
        GTEST_SKIP() << server.label << " (" << layoutName << "): no hash model for this engine line yet";
    // What a server allocates once, on its first keys, is not the keyspace's.
    ASSERT_TRUE(client->pipeline(fill(kScenarios[0], 1000)));
    for (const Scenario& s : kScenarios) {
        SCOPED_TRACE(fmt::format("{}: {} fields of {} B, values of {} B, {}{}", server.label, s.entries, s.fieldBytes,
            s.valueBytes, s.oneCommand ? "one HSET" : "one HSET per field", s.ttl ? ", TTL" : ""));
        // Keys not a power of two (a full keyspace table may grow in the cron), fewer for the biggest hashes.
        const std::uint64_t keys = s.entries > 600 ? 100 : s.entries > 100 ? 300 : 1000;
        ASSERT_TRUE(client->command({ "FLUSHALL", "SYNC" }));
        ASSERT_TRUE(waitUntilSettled(*client));
        const std::uint64_t before = test::keyspaceMemory(*client);
        ASSERT_TRUE(client->pipeline(fill(s, keys)));
        ASSERT_TRUE(waitUntilSettled(*client));
        const double measured = static_cast<double>(test::keyspaceMemory(*client)) - static_cast<double>(before);

        const HashShape shape { 16, s.entries, s.fieldBytes, s.valueBytes, false, s.ttl, s.oneCommand };
        auto hash = describeHash(*models->layout, shape, *models->allocator);
        ASSERT_TRUE(hash) << hash.error().describe();
        auto encoding = client->command({ "OBJECT", "ENCODING", fmt::format("hash:{:0>11}", 1) });
        ASSERT_TRUE(encoding);
        EXPECT_EQ(*encoding, hash->encoding);
        // The keyspace's tables, and the expires table's, as the index model grows and settles them.
        const IndexPolicy policy = models->layout->indexPolicy();
        double tables = 0;
        for (int table = 0; table < (s.ttl && policy.expiresTable ? 2 : 1); ++table) {
            IndexTableModel index(policy.kind, policy.params);
            for (std::uint64_t k = 0; k < keys; ++k)
                index.insert();
            index.settle();
            tables += static_cast<double>(index.footprint(*models->allocator).usableBytes);
        }
        const double predicted
            = static_cast<double>(hash->usableBytes(*models->allocator)) * static_cast<double>(keys) + tables;
        const double error = (predicted - measured) / measured;
        EXPECT_LT(std::abs(error), 0.01) << hash->encoding << ": predicted " << predicted << " B, measured " << measured
                                         << " B";
        std::printf("%-14s %4llu x %-5llu f%-3u v%-4u %-10s %-4s %-9s predicted %9.0f  measured %9.0f  (%+.3f%%)\n",
            server.label.c_str(), static_cast<unsigned long long>(keys), static_cast<unsigned long long>(s.entries),
            s.fieldBytes, s.valueBytes, s.oneCommand ? "one HSET" : "per field", s.ttl ? "TTL" : "",
            hash->encoding.c_str(), predicted, measured, 100 * error);
    }
}

INSTANTIATE_TEST_SUITE_P(Servers, HashLayout, ::testing::Range<std::size_t>(0, 12),
    [](const auto& info) { return "server" + std::to_string(info.param); });

} // namespace
