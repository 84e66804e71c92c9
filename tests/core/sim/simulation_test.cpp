// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/memory_trace.h"
#include "set_request.h"
#include "threshold_points.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using test::set;

Request op(Op o, std::uint32_t key, std::uint64_t timeMs = 0) {
    Request r;
    r.op = o;
    r.keyId = key;
    r.keyBytes = 16;
    r.timeMs = timeMs;
    return r;
}

SimulationConfig configFor(const char* layout, const char* alloc, std::vector<std::uint32_t> thresholds = {}) {
    auto l = parseLayout(layout);
    auto a = parseAllocator(alloc);
    EXPECT_TRUE(l && a);
    return { *l, *a, std::move(thresholds) };
}

SyntheticTrace mixedTrace(std::uint64_t seed = 11) {
    auto c = makeGeneratorConfig(
        20000, 60000, "lognormal:3:0.5:4:200", "lognormal:4.5:1:1:5000", 0.3, 0.1, 0.7, 0.1, "zipf:0.9", seed);
    EXPECT_TRUE(c);
    return SyntheticTrace(*c);
}

TEST(Simulation, AccountingAddsUpPerClass) {
    auto trace = mixedTrace();
    auto result = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096", { 64, 128, 200 }), trace);
    ASSERT_TRUE(result) << result.error().describe();
    for (const auto& p : result->points) {
        std::uint64_t usable = 0, requested = 0, allocations = 0;
        for (const auto& c : p.sizeClasses) {
            usable += c.usableBytes;
            requested += c.requestedBytes;
            allocations += c.allocations;
            EXPECT_EQ(c.usableBytes, c.classBytes * c.allocations);
        }
        EXPECT_EQ(usable, p.usableBytes);
        EXPECT_EQ(requested, p.requestedBytes);
        EXPECT_EQ(allocations, p.allocations);
        EXPECT_EQ(p.internalFragmentationBytes, p.usableBytes - p.requestedBytes);
        EXPECT_EQ(p.keys, result->trace.liveKeys);
        EXPECT_GT(p.linesTouchedPerGet, 1.0);
    }
}

// Every key and value byte is in exactly one size class (payload_bytes), with two documented exceptions:
// Redis's shared integers live in no allocation of their key, and a chunked memcached item whose data
// fills its last chunk exactly leaves out fewer bytes than it has chunks.
TEST(Simulation, PayloadIsAttributedToTheClassesHoldingIt) {
    struct Case {
        const char* layout;
        const char* alloc;
        std::vector<std::uint32_t> thresholds;
        bool exact;
    };
    const Case cases[] { { "valkey-9.1", "jemalloc:quantum=8,page=4096", { 64, 128, 200 }, true },
        { "valkey-8.1", "jemalloc:quantum=8,page=4096", { 64, 128 }, true },
        { "redis-7.0:shared-integers=no", "jemalloc:quantum=16,page=4096", { 44, 128 }, true },
        { "redis-7.0", "jemalloc:quantum=16,page=4096", { 44 }, false },
        { "memcached-1.6:framing=marshal-utf8", "memcached", {}, false } };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.layout);
        auto trace = mixedTrace();
        auto result = simulate(configFor(c.layout, c.alloc, c.thresholds), trace);
        ASSERT_TRUE(result) << result.error().describe();
        for (const auto& p : result->points) {
            std::uint64_t payload = 0;
            for (const auto& cls : p.sizeClasses) {
                payload += cls.payloadBytes;
                EXPECT_LE(cls.payloadBytes, cls.requestedBytes) << "class " << cls.classBytes;
            }
            if (c.exact)
                EXPECT_EQ(payload, p.payloadBytes);
            else {
                EXPECT_LE(payload, p.payloadBytes);
                EXPECT_GT(payload, p.payloadBytes * 99 / 100);
            }
        }
    }
}

TEST(Simulation, SweepEqualsSeparateRuns) {
    const std::vector<std::uint32_t> thresholds { 48, 64, 96, 128, 256 };
    auto sweepTrace = mixedTrace();
    auto sweep = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096", thresholds), sweepTrace);
    ASSERT_TRUE(sweep);
    ASSERT_EQ(sweep->points.size(), thresholds.size());
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
        auto single = mixedTrace();
        auto one = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096", { thresholds[i] }), single);
        ASSERT_TRUE(one);
        SCOPED_TRACE(i);
        test::expectSamePoint(sweep->points[i], one->points[0]);
    }
    // A higher threshold never embeds fewer keys.
    for (std::size_t i = 1; i < thresholds.size(); ++i)
        EXPECT_GE(sweep->points[i].embeddedKeys, sweep->points[i - 1].embeddedKeys);
}

TEST(Simulation, DeletingEverythingLeavesOnlyTheIndex) {
    std::vector<Request> requests;
    for (std::uint32_t k = 0; k < 1000; ++k)
        requests.push_back(set(k, 100));
    for (std::uint32_t k = 0; k < 1000; ++k)
        requests.push_back(op(Op::Delete, k));
    MemoryTrace trace(requests);
    auto result = simulate(configFor("redis-7.0", "jemalloc:quantum=16,page=4096"), trace);
    ASSERT_TRUE(result);
    const auto& p = result->points[0];
    EXPECT_EQ(p.keys, 0u);
    EXPECT_EQ(p.payloadBytes, 0u);
    EXPECT_EQ(p.usableBytes, p.indexBytes);
    EXPECT_EQ(result->trace.liveKeys, 0u);
    EXPECT_EQ(result->trace.maxLiveKeys, 1000u);
    EXPECT_EQ(result->trace.distinctKeys, 1000u);
}

TEST(Simulation, KeysExpireWhenTheirTimeHasPassed) {
    std::vector<Request> requests { set(1, 50, 10, 0), set(2, 50, 0, 0), set(3, 50, 100, 0), op(Op::Get, 1, 5000),
        op(Op::Get, 1, 20000), op(Op::Get, 3, 20000) };
    MemoryTrace trace(requests);
    auto result = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096"), trace);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->trace.expiredKeys, 1u);
    EXPECT_EQ(result->trace.liveKeys, 2u);
    EXPECT_EQ(result->trace.ttlKeys, 1u);
    EXPECT_EQ(result->trace.getHits, 2u);
    EXPECT_EQ(result->trace.getMisses, 1u);
}

TEST(Simulation, OverwritesAppendsAndConditionalWrites) {
    std::vector<Request> requests { set(1, 10), set(1, 300), op(Op::Add, 1), op(Op::Replace, 2) };
    Request append = op(Op::Append, 1);
    append.valueBytes = 20;
    requests.push_back(append);
    Request incr = op(Op::Incr, 3);
    incr.valueBytes = 1;
    requests.push_back(incr);
    MemoryTrace trace(requests);
    auto result = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096"), trace);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->trace.liveKeys, 2u); // key 2 never existed: REPLACE does nothing
    EXPECT_EQ(result->points[0].payloadBytes, (16u + 320) + (16u + 1));
}

TEST(Simulation, GetWeightsFollowTheTrace) {
    // Two shapes; GETs hit only the large one, so per-GET figures are the large shape's.
    std::vector<Request> requests { set(1, 16), set(2, 1024) };
    for (int i = 0; i < 10; ++i)
        requests.push_back(op(Op::Get, 2));
    MemoryTrace trace(requests);
    auto cfg = configFor("valkey-9.1", "jemalloc:quantum=8,page=4096");
    auto result = simulate(cfg, trace);
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->getWeightsFromTrace);
    const auto large = costOf(*cfg.layout, *cfg.allocator, { 16, 1024, false, ValueKind::String }, 128);
    EXPECT_DOUBLE_EQ(result->points[0].linesTouchedPerGet, large.linesTouched);
}

TEST(Simulation, LayoutsWithoutAThresholdRefuseASweep) {
    auto trace = mixedTrace();
    auto result = simulate(configFor("memcached-1.6", "memcached", { 64, 128 }), trace);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::Usage);
    auto plain = mixedTrace();
    auto ok = simulate(configFor("memcached-1.6", "memcached"), plain);
    ASSERT_TRUE(ok);
    EXPECT_TRUE(ok->thresholdName.empty());
}

TEST(Simulation, CancelStopsTheReplay) {
    auto trace = mixedTrace();
    std::stop_source stop;
    stop.request_stop();
    auto result = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096"), trace, nullptr, stop.get_token());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::Cancelled);
}

TEST(Simulation, ThresholdLists) {
    const ThresholdParam param { "threshold", 128, 16, 1024, "" };
    auto range = parseThresholds("32:256:16", param);
    ASSERT_TRUE(range);
    EXPECT_EQ(range->size(), 15u);
    EXPECT_EQ(range->front(), 32u);
    EXPECT_EQ(range->back(), 256u);
    auto list = parseThresholds("128,64,64", param);
    ASSERT_TRUE(list);
    EXPECT_EQ(*list, (std::vector<std::uint32_t> { 64, 128 }));
    for (const char* bad : { "8:64:8", "64:32:8", "32:64:0", "32:64", "a,b", "64,2000", "" })
        EXPECT_FALSE(parseThresholds(bad, param)) << bad;
}

} // namespace

namespace {

// Per key, its object's bytes (usable) under valkey-8.1: the simulated total less the index tables.
std::uint64_t objectBytes(const char* layout, std::vector<Request> requests, std::uint32_t threshold) {
    MemoryTrace trace(std::move(requests));
    auto result = simulate(configFor(layout, "jemalloc:quantum=8,page=4096", { threshold }), trace);
    EXPECT_TRUE(result) << result.error().describe();
    const auto& p = result->points.at(0);
    return p.usableBytes - p.indexBytes;
}

Request persist(std::uint32_t key) {
    return op(Op::Persist, key);
}

} // namespace

// Valkey 8.1 removes a TTL by setting the object's expire field to -1 (db.c removeExpire): the object
// keeps it until an overwrite makes a new one, which dbSetValue does unless neither the old object nor
// the new value is embedded.
TEST(Simulation, StaleExpireFieldsFollowValkeysOverwrites) {
    const char* v81 = "valkey-8.1";
    // K=16, V=100: a RAW object of 16 + 19 = 35 bytes (class 40), 43 with the field (48), and a 112-byte sds.
    const std::uint64_t fresh = 40 + 112, stale = 48 + 112;
    EXPECT_EQ(objectBytes(v81, { set(1, 100) }, 64), fresh);
    EXPECT_EQ(objectBytes(v81, { set(1, 100, 1000) }, 64), stale); // with its TTL
    EXPECT_EQ(objectBytes(v81, { set(1, 100, 1000), persist(1) }, 64), stale); // PERSIST keeps the field
    EXPECT_EQ(objectBytes(v81, { set(1, 100, 1000), set(1, 100) }, 64), stale); // so does SET without EX
    // RAW over RAW: the old object stays, field and all; a RAW over a value that arrives EMBSTR: a new one.
    EXPECT_EQ(objectBytes(v81, { set(1, 100, 1000), persist(1), set(1, 200) }, 64), 48u + 224); // sds 204
    EXPECT_EQ(objectBytes(v81, { set(1, 100, 1000), persist(1), set(1, 20) }, 64), 64u); // 16 + 19 + 24 = 59
    // The field holds a TTL again, then is stale again; a delete forgets it.
    EXPECT_EQ(objectBytes(v81, { set(1, 100, 1000), persist(1), op(Op::Delete, 1), set(1, 100) }, 64), fresh);
    // expire-field=dropped sizes a key without a TTL as if it never had one.
    EXPECT_EQ(objectBytes("valkey-8.1:expire-field=dropped", { set(1, 100, 1000), persist(1) }, 64), fresh);
    // Redis keeps expires apart: nothing is left behind.
    EXPECT_EQ(
        objectBytes("redis-7.0", { set(1, 100, 1000), persist(1) }, 44), objectBytes("redis-7.0", { set(1, 100) }, 44));
}

// Under 9.1's derived client limit a 60-byte value arrives EMBSTR from threshold 60 + 12 = 72 on: a stale
// key overwritten with it keeps its field below 72 only. A sweep gives each threshold what a run at that
// threshold alone gives.
TEST(Simulation, StaleExpireFieldsThatDependOnTheThresholdSweepExactly) {
    std::vector<Request> requests;
    for (std::uint32_t k = 0; k < 300; ++k) {
        requests.push_back(set(k, 130 + k % 7, 1000)); // RAW at every threshold below 150 (K=16, header 8)
        requests.push_back(persist(k));
        requests.push_back(set(k, 60 + k % 3));
        requests.push_back(op(Op::Get, k));
    }
    const std::vector<std::uint32_t> thresholds { 48, 64, 71, 72, 73, 80, 128 };
    MemoryTrace sweepTrace(requests);
    auto sweep = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096", thresholds), sweepTrace);
    ASSERT_TRUE(sweep) << sweep.error().describe();
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
        MemoryTrace single(requests);
        auto one = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096", { thresholds[i] }), single);
        ASSERT_TRUE(one);
        SCOPED_TRACE(thresholds[i]);
        test::expectSamePoint(sweep->points[i], one->points[0]);
    }
    // Below 72 the 60-byte values stay RAW in the old objects, with their fields (8 bytes a key more than
    // keys that never had a TTL: objects of 43 bytes in the 48 class, not 35 in 40); from 74 on they embed
    // in new objects.
    std::vector<Request> neverTtl;
    for (std::uint32_t k = 0; k < 300; ++k)
        neverTtl.insert(neverTtl.end(), { set(k, 130 + k % 7), set(k, 60 + k % 3), op(Op::Get, k) });
    MemoryTrace plainTrace(neverTtl);
    auto plain = simulate(configFor("valkey-9.1", "jemalloc:quantum=8,page=4096", thresholds), plainTrace);
    ASSERT_TRUE(plain);
    EXPECT_EQ(sweep->points[0].usableBytes, plain->points[0].usableBytes + 300 * 8);
    EXPECT_EQ(sweep->points[2].usableBytes, plain->points[2].usableBytes + 300 * 8); // 71
    EXPECT_EQ(sweep->points[0].embeddedKeys, 0u);
    EXPECT_EQ(sweep->points.back().embeddedKeys, 300u);
    EXPECT_EQ(sweep->points.back().usableBytes, plain->points.back().usableBytes);
}

namespace {

Request renameHalf(std::uint32_t key, std::uint32_t keyBytes, std::uint32_t half, std::uint64_t timeMs = 0) {
    Request r = op(Op::Rename, key, timeMs);
    r.keyBytes = keyBytes;
    r.valueBytes = half;
    return r;
}

// The figures of a trace's replay (valkey-9.0), its clock run to `endClockMs` when given.
struct Replayed {
    std::uint64_t usable = 0;
    TraceSummary trace;
};
Replayed replayed(const std::vector<Request>& requests, std::optional<std::uint64_t> endClockMs = std::nullopt) {
    auto config = configFor("valkey-9.0", "jemalloc:quantum=8,page=4096");
    config.endClockMs = endClockMs;
    MemoryTrace trace(requests);
    auto result = simulate(config, trace);
    EXPECT_TRUE(result) << result.error().describe();
    return result ? Replayed { result->points.front().usableBytes, result->trace } : Replayed {};
}

} // namespace

// A key renamed is the source's value under the destination's name (db.c renameGenericCommand): the same
// bytes as writing it there, its TTL with it, a RAW value's sds room (an APPEND's) kept, a destination that
// held a key replaced.
TEST(Simulation, ARenamedKeyIsItsValueUnderTheNewName) {
    Request appended = op(Op::Append, 1);
    appended.keyBytes = 16;
    appended.valueBytes = 40;
    Request grown = appended;
    grown.valueBytes = 30;
    const std::vector<Request> renamed { set(2, 300), appended, grown, set(3, 12, 5), renameHalf(1, 16, kRenameSource),
        renameHalf(2, 9, kRenameDestination), renameHalf(3, 16, kRenameSource), renameHalf(4, 16, kRenameDestination) };
    Request appendedThere = appended;
    appendedThere.keyId = 2;
    appendedThere.keyBytes = 9;
    Request grownThere = grown;
    grownThere.keyId = 2;
    grownThere.keyBytes = 9;
    Request setThere = set(4, 12, 5);
    const std::vector<Request> written { appendedThere, grownThere, setThere };
    const auto a = replayed(renamed);
    const auto b = replayed(written);
    EXPECT_EQ(a.usable, b.usable);
    EXPECT_EQ(a.trace.liveKeys, 2u);
    EXPECT_EQ(a.trace.ttlKeys, 1u);
    EXPECT_EQ(a.trace.unmatchedRenames, 0u);
    // The TTL runs out in its second, at its end: the renamed key still there at 5,999 ms, gone after.
    EXPECT_EQ(replayed(renamed, 5999).trace.liveKeys, 2u);
    EXPECT_EQ(replayed(renamed, 6001).trace.liveKeys, 1u);
    // A destination without its source, or a source the replay does not hold: counted, nothing changes.
    const auto unmatched = replayed({ set(1, 10), renameHalf(2, 16, kRenameDestination),
        renameHalf(5, 16, kRenameSource), renameHalf(6, 16, kRenameDestination) });
    EXPECT_EQ(unmatched.trace.unmatchedRenames, 2u);
    EXPECT_EQ(unmatched.trace.liveKeys, 1u);
}

// A HyperLogLog's sparse form grown three bytes at a time (Op::SetRange of kHyperLogLogKind) from its 18 bytes to
// 999: where each engine line makes room (StringRewriteRule::hyperLogLogRoom), worked by hand from
// hyperloglog.c and sds.c (jemalloc's classes: ... 768, 1024, 1280, 1536):
// - Redis 7.0 (sdsMakeRoomFor 3, doubling, the alloc field the usable size): at 762 bytes it asks 765 * 2 and
//   gets the 1536 class;
// - Valkey (sdsResize to +300 past 300, the usable size): at 762, 1065 asked, the 1280 class;
// - Redis 7.2 (the same, the alloc field the size asked): at 681, 984 asked (1024); at 984 again, 1287 (1536).
// Then made dense: a new sds of 12,304 bytes (the 14,336 class) in every line.
TEST(Simulation, AHyperLogLogsSparseFormGrowsAsEachEngineLineMakesRoom) {
    struct Line {
        const char* layout;
        const char* allocator;
        std::uint64_t createdBytes; // type 5: 1 + 18 + 1, in Debian's jemalloc's 16-byte quantum or the builds' 8
        std::uint64_t sparseBytes;
    };
    for (const Line& line : { Line { "redis-7.0", "jemalloc:quantum=16,page=4096", 32, 1536 },
             Line { "redis-7.2", "jemalloc:quantum=8,page=4096", 24, 1536 },
             Line { "valkey-9.1", "jemalloc:quantum=8,page=4096", 24, 1280 } }) {
        SCOPED_TRACE(line.layout);
        auto config = configFor(line.layout, line.allocator);
        const StringRewriteRule rule(*config.layout, *config.allocator, 0);
        sds::Buffer buffer = rule.created(kHyperLogLogCreatedBytes);
        EXPECT_EQ(config.allocator->usableSize(buffer.bytes()), line.createdBytes);
        for (std::uint64_t len = kHyperLogLogCreatedBytes; len < 999; len += 3)
            buffer = rule.hyperLogLogRoom(buffer, len);
        EXPECT_EQ(config.allocator->usableSize(buffer.bytes()), line.sparseBytes);
        // And the replay: the same steps, then dense, against a key made dense at once.
        std::vector<Request> steps;
        for (std::uint32_t len = kHyperLogLogCreatedBytes; len <= 999; len += 3) {
            Request r = op(Op::SetRange, 1);
            r.keyBytes = 4;
            r.kind = kHyperLogLogKind;
            r.valueBytes = len;
            steps.push_back(r);
        }
        std::vector<Request> grown = steps, dense { steps.front() };
        grown.push_back(steps.back());
        grown.back().valueBytes = kHyperLogLogDenseBytes;
        dense.push_back(grown.back());
        MemoryTrace grownTrace(grown), denseTrace(dense), sparseTrace(steps);
        const auto a = simulate(config, grownTrace), b = simulate(config, denseTrace),
                   c = simulate(config, sparseTrace);
        ASSERT_TRUE(a && b && c);
        EXPECT_EQ(a->points.front().usableBytes, b->points.front().usableBytes);
        EXPECT_EQ(a->points.front().usableBytes - c->points.front().usableBytes, 14336 - line.sparseBytes);
    }
}

namespace {

// Valkey's cron grows a keyspace table its inserts left at its limit, at a tick of its own (every 100 ms): the
// replay grows it where the trace's clock shows it stayed there that long (Valkey 8.0.1: 16,384 SETs, a second's
// pause, then 2,000 DELs: DEBUG HTSTATS 32,768 buckets), not where it left the limit at once (the server's
// chance of a tick then is small), and Redis's cron never grows one.
TEST(Simulation, ACronGrowsATableTheTraceLeftAtItsLimitForACronPeriod) {
    auto bucketsAfter = [](const char* layout, std::uint32_t keys, std::uint64_t pauseMs) {
        std::vector<Request> requests;
        for (std::uint32_t k = 0; k < keys; ++k)
            requests.push_back(set(k, 1, 0, k / 1000));
        const std::uint64_t then = keys / 1000 + pauseMs;
        for (std::uint32_t k = 0; k < keys / 8; ++k)
            requests.push_back(op(Op::Delete, k, then));
        MemoryTrace trace(requests);
        auto result = simulate(configFor(layout, "jemalloc:quantum=8,page=4096"), trace);
        EXPECT_TRUE(result) << result.error().describe();
        return result ? result->indexBuckets : 0;
    };
    EXPECT_EQ(bucketsAfter("valkey-8.0", 16384, 1000), 32768u);
    EXPECT_EQ(bucketsAfter("valkey-8.0", 16384, 1), 16384u);
    EXPECT_EQ(bucketsAfter("valkey-9.1", 7168, 1000), 2048u);
    EXPECT_EQ(bucketsAfter("valkey-9.1", 7168, 1), 1024u);
    EXPECT_EQ(bucketsAfter("redis-7.0", 16384, 1000), 16384u);
}

} // namespace
