// SPDX-License-Identifier: MIT
// Keys placed in databases other than 0 (Op::Resize of kKeyDatabase): each database has a key table and an
// expires table of its own (server.h serverDb), which grow, shrink and are flushed apart, in the replay's
// figures and in the slab model's arenas alike.
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/memory_trace.h"
#include "set_request.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using test::set;

Request place(std::uint32_t keyId, std::uint32_t database) {
    Request r;
    r.op = Op::Resize;
    r.keyId = keyId;
    r.keyBytes = 16;
    r.valueBytes = kKeyDatabase;
    r.ttlSeconds = database;
    return r;
}

// `inZero` keys in database 0 (ids from 0), then `inOne` in database 1 (the ids after), `ttlEvery`-th with a TTL.
std::vector<Request> twoDatabases(std::uint32_t inZero, std::uint32_t inOne, std::uint32_t ttlEvery = 0) {
    std::vector<Request> requests;
    for (std::uint32_t k = 0; k < inZero + inOne; ++k) {
        if (k >= inZero)
            requests.push_back(place(k, 1));
        requests.push_back(set(k, 20 + k % 50, ttlEvery && k % ttlEvery == 0 ? 100000 : 0));
    }
    return requests;
}

Expected<SimulationResult> run(const std::vector<Request>& requests, const char* layout, bool slabs = false,
    const char* allocator = "jemalloc:quantum=16,page=4096") {
    auto l = parseLayout(layout);
    auto a = parseAllocator(allocator);
    EXPECT_TRUE(l && a);
    SimulationConfig config { *l, *a, {} };
    if (slabs) {
        config.slabs = SlabModelOptions { true, 0 };
        config.slabs->threadCache = false; // what the arena holds is what the keys and tables hold
    }
    MemoryTrace trace(requests);
    return simulate(config, trace);
}

TEST(Databases, EachDatabaseHasTablesOfItsOwn) {
    // Redis 7.0's dicts (dict.c _dictExpandIfNeeded: doubled once as full as they are big): five keys in database 0
    // and three in database 1 take tables of 8 and 4 buckets; the eight keys in one table would take 8.
    auto apart = run(twoDatabases(5, 3), "redis-7.0");
    ASSERT_TRUE(apart) << apart.error().describe();
    EXPECT_EQ(apart->indexBuckets, 12u);
    std::vector<Request> together;
    for (const Request& r : twoDatabases(5, 3))
        if (r.op != Op::Resize)
            together.push_back(r);
    auto one = run(together, "redis-7.0");
    ASSERT_TRUE(one) << one.error().describe();
    EXPECT_EQ(one->indexBuckets, 8u);
    EXPECT_EQ(apart->points[0].keys, one->points[0].keys);
    EXPECT_GT(apart->points[0].indexBytes, one->points[0].indexBytes);
    // memcached has one table for every key: a placement changes nothing.
    auto memcachedApart = run(twoDatabases(5, 3), "memcached-1.6", false, "memcached");
    auto memcachedOne = run(together, "memcached-1.6", false, "memcached");
    ASSERT_TRUE(memcachedApart && memcachedOne);
    EXPECT_EQ(memcachedApart->points[0].indexBytes, memcachedOne->points[0].indexBytes);
}

TEST(Databases, AFlushFreesItsOwnDatabasesTablesOnly) {
    // Database 1's keys deleted and its tables freed (db.c emptyData for FLUSHDB): database 0's stay.
    auto requests = twoDatabases(5, 3, 2);
    for (std::uint32_t k = 5; k < 8; ++k)
        requests.push_back({ .keyId = k, .keyBytes = 16, .op = Op::Delete });
    requests.push_back({ .keyId = 7, .keyBytes = 16, .valueBytes = kEmptiedTables, .op = Op::Resize });
    auto flushed = run(requests, "redis-7.0");
    ASSERT_TRUE(flushed) << flushed.error().describe();
    EXPECT_EQ(flushed->points[0].keys, 5u);
    EXPECT_EQ(flushed->indexBuckets, 8u + 4u); // database 0's keys and its expires (three keys with a TTL)
    auto alone = run(twoDatabases(5, 0, 2), "redis-7.0");
    ASSERT_TRUE(alone) << alone.error().describe();
    EXPECT_EQ(flushed->points[0].indexBytes, alone->points[0].indexBytes);
}

TEST(Databases, ALiveKeyCannotMoveDatabase) {
    std::vector<Request> requests { set(0, 10), place(0, 1) };
    auto r = run(requests, "valkey-9.1");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("while it is live in database 0"), std::string::npos) << r.error().message;
    auto far = run({ place(0, 70000), set(0, 10) }, "valkey-9.1");
    ASSERT_FALSE(far);
    EXPECT_NE(far.error().message.find("at most 65536 databases"), std::string::npos) << far.error().message;
}

TEST(Databases, TheSlabModelHoldsEveryDatabasesTables) {
    // Without a thread cache the arena holds what the keys and every table hold: the replay's usable bytes, to
    // within the child buckets' expectation (Valkey) and the dicts' arrays exactly (Redis).
    for (const char* layout : { "redis-7.0", "valkey-8.0", "valkey-9.1" }) {
        SCOPED_TRACE(layout);
        auto r = run(twoDatabases(3000, 1700, 3), layout, true);
        ASSERT_TRUE(r) << r.error().describe();
        const ThresholdPoint& p = r->points.at(0);
        ASSERT_TRUE(p.arena);
        EXPECT_NEAR(static_cast<double>(p.arena->allocatedBytes), static_cast<double>(p.usableBytes),
            0.002 * static_cast<double>(p.usableBytes));
    }
}

} // namespace
