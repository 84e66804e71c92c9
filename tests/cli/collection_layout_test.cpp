// SPDX-License-Identifier: MIT
// Collection keys against real servers (layout/collection_layout.h): Debian's Redis 7.0 and every build of
// tests/engines. For each type and shape (entries and lengths on both sides of every limit: the listpack's
// entries and value length, the intset's entries and widths, the quicklist node's bytes; all entries in one
// command or one per command; with and without TTLs), a server is filled with keys of that shape; the
// model's usable bytes per key, times the keys, plus the keyspace's tables, must be within 1% of the settled
// server's Δ(used_memory - mem_clients_normal), and OBJECT ENCODING must name the model's encoding.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/collect/server_process.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/index_table_model.h"
#include "resp_server_under_test.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using Command = std::vector<std::string>;

struct Scenario {
    std::uint64_t entries;
    std::uint32_t elementBytes; // field, member or element
    std::uint32_t valueBytes = 0; // a hash's value, a sorted set's score as text
    bool integerElements = false;
    bool integerValues = false;
    bool oneCommand = true;
    bool ttl = false;
    // A limit set other than the default (CONFIG SET before the keys are written, reset after).
    std::string limit;
    std::int64_t limitValue = 0;
};

// Each key's fields and members named apart from every other key's: with the same names, every key of a
// server would put them in the same buckets (one hash seed per process), and the keys' child buckets (and
// the set dicts' shared buckets) would be one draw of chance times the keys instead of its average.
std::string element(std::uint64_t key, std::uint64_t i, std::uint32_t bytes, bool integer) {
    if (integer) {
        // The largest integers of that many digits; each key its own where the digits allow it (a table of
        // the same members in every key would be one draw of where they fall, not its average).
        const std::uint64_t top = static_cast<std::uint64_t>(largestOfDigits(bytes));
        const std::uint64_t span = top / 10 * 9;
        return std::to_string(top - (bytes > 6 ? (key * 4099 + i) % span : i));
    }
    // The low hex digits, which i (times an odd number) makes distinct within a key.
    const std::string digits = fmt::format("{:016x}", key * 2654435761ULL + i * 40503ULL);
    const std::size_t keep = std::min<std::size_t>(bytes > 0 ? bytes - 1 : 0, digits.size());
    std::string e = "e" + digits.substr(digits.size() - keep);
    e.resize(bytes, 'x');
    return e.substr(0, bytes);
}
std::string value(std::uint64_t key, std::uint64_t i, std::uint32_t bytes, bool integer) {
    if (integer)
        return std::to_string(static_cast<std::uint64_t>(largestOfDigits(bytes)) - i);
    std::string v(bytes, 'v');
    for (std::size_t c = 0; c < v.size(); ++c)
        v[c] = static_cast<char>('a' + (key * 7 + i * 3 + c) % 26);
    return v;
}
// A score of `bytes` characters: the largest integers of that many digits, or 10^(bytes-3) + i and ".5"
// (exact in binary, so d2string prints it as sent on every engine).
std::string score(std::uint64_t i, std::uint32_t bytes, bool integral) {
    if (integral)
        return std::to_string(static_cast<std::uint64_t>(largestOfDigits(bytes)) - i);
    const std::uint64_t base = bytes > 3 ? static_cast<std::uint64_t>(largestOfDigits(bytes - 3)) + 1 : 1;
    return std::to_string(base + i) + ".5";
}

std::string keyName(CollectionType type, std::uint64_t k) {
    return fmt::format("{}:{:0>{}}", collectionTypeName(type), k, 15 - std::string(collectionTypeName(type)).size());
}

std::vector<Command> fill(CollectionType type, const Scenario& s, std::uint64_t keys) {
    std::vector<Command> out;
    const char* verb = type == CollectionType::Hash ? "HSET"
        : type == CollectionType::Set               ? "SADD"
        : type == CollectionType::SortedSet         ? "ZADD"
                                                    : "RPUSH";
    for (std::uint64_t k = 0; k < keys; ++k) {
        const std::string key = keyName(type, k); // 16 bytes
        Command c { verb, key };
        for (std::uint64_t i = 0; i < s.entries; ++i) {
            if (type == CollectionType::SortedSet)
                c.push_back(score(i, s.valueBytes, s.integerValues));
            c.push_back(element(k, i, s.elementBytes, s.integerElements));
            if (type == CollectionType::Hash)
                c.push_back(value(k, i, s.valueBytes, s.integerValues));
            if (!s.oneCommand) {
                out.push_back(std::move(c));
                c = { verb, key };
            }
        }
        if (s.oneCommand)
            out.push_back(std::move(c));
        if (s.ttl)
            out.push_back({ "EXPIRE", key, "1000000" });
    }
    return out;
}

// Keys not a power of two (a full keyspace table may grow in the cron), fewer for the biggest keys.
std::uint64_t keysFor(const Scenario& s) {
    const std::uint64_t bytes = s.entries * (s.elementBytes + s.valueBytes + 4);
    return std::clamp<std::uint64_t>(2'000'000 / std::max<std::uint64_t>(bytes, 1) / 10 * 10 + 3, 53, 1003);
}

void checkEveryShape(std::size_t serverIndex, CollectionType type, const std::vector<Scenario>& scenarios) {
    const auto all = test::respServers(LAYOUTLAB_ENGINE_MANIFEST);
    if (serverIndex >= all.size())
        GTEST_SKIP() << "no server " << serverIndex
                     << ": Debian's redis-server and the builds of tests/engines are all there are here";
    const test::EngineBuild& server = all[serverIndex];
    auto under = test::startRespServer(server);
    ASSERT_TRUE(under);
    auto& client = under->client;
    const std::string& layoutName = under->layoutName;
    const LayoutAndAllocator* models = &under->models;
    // What a server allocates once, on its first keys, is not the keyspace's.
    ASSERT_TRUE(client->pipeline(fill(type, scenarios[0], 1000)));
    ASSERT_TRUE(waitUntilSettled(*client));
    for (const Scenario& s : scenarios) {
        CollectionShape shape;
        shape.type = type;
        shape.entries = s.entries;
        shape.elementBytes = s.elementBytes;
        shape.integerElements = s.integerElements;
        shape.valueBytes = s.valueBytes;
        shape.integerValues = s.integerValues;
        shape.hasTtl = s.ttl;
        shape.oneCommand = s.oneCommand;
        const std::string what = fmt::format("{}: {} x {} B{}, values {} B{}, {}{}{}", server.label, s.entries,
            s.elementBytes, s.integerElements ? " (int)" : "", s.valueBytes, s.integerValues ? " (int)" : "",
            s.oneCommand ? "one command" : "one per entry", s.ttl ? ", TTL" : "",
            s.limit.empty() ? "" : fmt::format(", {} {}", s.limit, s.limitValue));
        SCOPED_TRACE(what);
        const std::uint64_t keys = keysFor(s);
        CollectionLimits limits;
        std::string defaultLimit;
        if (!s.limit.empty()) {
            ASSERT_TRUE(setCollectionLimit(limits, s.limit, s.limitValue)) << s.limit;
            auto current = client->command({ "CONFIG", "GET", s.limit });
            ASSERT_TRUE(current);
            if (current->find('\n') == std::string::npos) {
                std::printf("%-64s (%s: not a setting of this engine)\n", what.c_str(), s.limit.c_str());
                continue; // Redis 7.0 has no listpack sets
            }
            defaultLimit = current->substr(current->find('\n') + 1);
            ASSERT_TRUE(client->command({ "CONFIG", "SET", s.limit, std::to_string(s.limitValue) }));
        }
        // FLUSHALL SYNC frees everything before it replies: after a settled server nothing is left to settle.
        ASSERT_TRUE(client->command({ "FLUSHALL", "SYNC" }));
        const std::uint64_t before = test::keyspaceMemory(*client);
        ASSERT_TRUE(client->pipeline(fill(type, s, keys)));
        ASSERT_TRUE(waitUntilSettled(*client));
        const double measured = static_cast<double>(test::keyspaceMemory(*client)) - static_cast<double>(before);
        if (!defaultLimit.empty())
            ASSERT_TRUE(client->command({ "CONFIG", "SET", s.limit, defaultLimit }));

        auto key = describeCollection(*models->layout, shape, *models->allocator, limits);
        ASSERT_TRUE(key) << key.error().describe();
        auto encoding = client->command({ "OBJECT", "ENCODING", keyName(type, 1) });
        ASSERT_TRUE(encoding);
        EXPECT_EQ(*encoding, key->encoding);
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
        const double predicted = key->usableBytes(*models->allocator) * static_cast<double>(keys) + tables;
        const double error = (predicted - measured) / measured;
        EXPECT_LT(std::abs(error), 0.01) << key->encoding << ": predicted " << predicted << " B, measured " << measured
                                         << " B";
        std::printf("%-64s %5llu keys %-10s predicted %10.0f  measured %10.0f  (%+.3f%%)\n", what.c_str(),
            static_cast<unsigned long long>(keys), key->encoding.c_str(), predicted, measured, 100 * error);
    }
}

// Hashes: hash-max-listpack-entries 512, hash-max-listpack-value 64.
const std::vector<Scenario> kHashes = {
    { 1, 8, 20 }, // the smallest listpack
    { 16, 8, 1, false, false, true, true },
    { 60, 10, 40, false, false, false }, // grown one field at a time
    { 512, 8, 64 }, // at both limits: still a listpack
    { 513, 8, 20, false, false, false }, // one past, one field at a time: converted, sized for 513 (1,024 buckets)
    { 513, 8, 20, false, false, true, true }, // one past in one HSET: sized at once
    { 700, 12, 30 },
    { 1100, 8, 8, false, false, false }, // grown past 1,024 one field at a time: the old half still rehashing
    { 10, 8, 65 }, // a value one past the value limit: a table of 16 buckets, grown from 4
    { 100, 8, 200, false, false, false, true }, // grown to 128 buckets: rehashed away on Redis 7.0
    { 3, 70, 5 }, // a long field
    { 20, 8, 5, false, true }, // integer values
    { 65, 8, 8, false, false, false, false, "hash-max-listpack-entries", 64 }, // converted at 65: 128 buckets
    { 10, 8, 20, false, false, true, false, "hash-max-listpack-value", 16 },
};

// Sets: set-max-intset-entries 512, set-max-listpack-entries 128, set-max-listpack-value 64.
const std::vector<Scenario> kSets = {
    { 1, 8 }, // the smallest listpack (a table on Redis 7.0)
    { 100, 3, 0, true }, // an intset of 16-bit members
    { 512, 5, 0, true, false, false }, // an intset at its limit, 32-bit members
    { 513, 10, 0, true, false, false }, // one past, one by one: a table for 513 (1,024 buckets)
    { 600, 10, 0, true, false, true, true }, // 600 integers in one SADD: sized for them (Redis 7.2, Valkey)
    { 100, 12, 0, false, false, false }, // a listpack grown one member at a time
    { 128, 20 }, // at the listpack's limit
    { 129, 20, 0, false, false, false }, // one past, one by one: a table for 129 (256 buckets)
    { 300, 16, 0, false, false, true, true },
    { 1100, 10, 0, false, false, false }, // grown past 1,024 one at a time: rehashing
    { 5, 70 }, // a member past the value limit
    { 100, 10, 0, true, false, false, false, "set-max-intset-entries", 64 }, // converted at 65
    { 20, 8, 0, false, false, false, false, "set-max-listpack-entries", 16 }, // converted at 17
};

// Sorted sets: zset-max-listpack-entries 128, zset-max-listpack-value 64.
const std::vector<Scenario> kSortedSets = {
    { 1, 8, 1, false, true }, // the smallest listpack
    { 50, 10, 9, false, false, false }, // scores "1000000.5" and up, one member at a time
    { 64, 3, 10, true, true }, // integer members and scores
    { 128, 12, 10, false, true }, // at the listpack's limit
    { 129, 12, 10, false, true, false }, // one past, one by one: converted, sized for 129
    { 300, 16, 10, false, true, true, true }, // one ZADD: a skiplist sized at once
    { 1100, 10, 9, false, false, false }, // grown past 1,024 one at a time: rehashing
    { 5, 70, 3, false, true }, // a member past the value limit
    { 40, 8, 5, false, true, false, false, "zset-max-listpack-entries", 32 }, // converted at 33
    { 10, 10, 5, false, true, true, false, "zset-max-listpack-value", 8 },
};

// Lists: list-max-listpack-size -2 (8 KiB nodes).
const std::vector<Scenario> kLists = {
    { 1, 10 }, // the smallest listpack (a one-node quicklist on Redis 7.0)
    { 100, 10, 0, false, false, false }, { 50, 5, 0, true }, // integer elements
    { 800, 10 }, // one RPUSH of 8,000 bytes: a listpack of 9,607 on Redis 7.2 and Valkey
    { 2000, 10 }, // one RPUSH past the limit: 681 elements a node
    { 2000, 10, 0, false, false, false }, // one by one: the listpack is the first node
    { 300, 100, 0, false, false, false, true }, { 3, 9000 }, // elements past a node's limit: a node each
    { 1000, 10, 0, false, false, false, false, "list-max-listpack-size", -1 }, // 4 KiB nodes
    { 3000, 10, 0, false, false, true, false, "list-max-listpack-size", -3 }, // 16 KiB nodes
    { 23, 10, 0, false, false, false, false, "list-max-listpack-size", 5 }, // 5 elements a node
};

class CollectionLayout : public ::testing::TestWithParam<std::size_t> { };

TEST_P(CollectionLayout, HashesWithinOnePercentOfTheServer) {
    checkEveryShape(GetParam(), CollectionType::Hash, kHashes);
}
TEST_P(CollectionLayout, SetsWithinOnePercentOfTheServer) {
    checkEveryShape(GetParam(), CollectionType::Set, kSets);
}
TEST_P(CollectionLayout, SortedSetsWithinOnePercentOfTheServer) {
    checkEveryShape(GetParam(), CollectionType::SortedSet, kSortedSets);
}
TEST_P(CollectionLayout, ListsWithinOnePercentOfTheServer) {
    checkEveryShape(GetParam(), CollectionType::List, kLists);
}

INSTANTIATE_TEST_SUITE_P(Servers, CollectionLayout, ::testing::Range<std::size_t>(0, 12),
    [](const auto& info) { return "server" + std::to_string(info.param); });

} // namespace
