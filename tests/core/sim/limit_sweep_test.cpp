// SPDX-License-Identifier: MIT
// A collection limit swept in one pass (sim/limit_sweep.h): each value's point is what a run of its own with
// that limit gives, the values are checked as the engines take them, and a bad sweep says why.
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/limit_advice.h"
#include "layoutlab/sim/limit_sweep.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/memory_trace.h"

#include "generated_requests.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <set>

using namespace layoutlab;

namespace {

std::vector<Request> collectionTrace(CollectionKind kind, const char* counts, const char* sizes, const char* values) {
    auto config = makeGeneratorConfig(500, 3000, "16", values, 0, 0.3, 0.2, 0.1, "uniform", 11);
    EXPECT_TRUE(config);
    EXPECT_TRUE(setCollectionElements(*config, kind, counts, sizes));
    return test::generatedRequests(config);
}

SimulationConfig configFor(const char* layout) {
    auto l = parseLayout(layout);
    auto a = parseAllocator("jemalloc:quantum=8,page=4096");
    EXPECT_TRUE(l && a);
    return SimulationConfig { *l, *a, {} };
}

TEST(LimitSweep, EachValueIsWhatARunOfItsOwnGives) {
    struct Case {
        CollectionKind kind;
        const char* counts;
        const char* sizes;
        const char* values; // a hash's values, a sorted set's score digits
        const char* sweep;
    };
    const Case cases[] {
        { CollectionKind::Hash, "uniform:1:400", "uniform:1:20", "uniform:1:60",
            "hash-max-listpack-entries=32,128,256,1024" },
        { CollectionKind::Hash, "uniform:1:100", "uniform:1:20", "uniform:1:90", "hash-max-listpack-value=0:96:32" },
        { CollectionKind::Set, "uniform:1:700", "uniform:1:30", "8", "set-max-listpack-entries=16,128,512" },
        { CollectionKind::SortedSet, "uniform:1:300", "uniform:1:70", "uniform:1:12",
            "zset-max-listpack-value=16,64,128" },
        { CollectionKind::List, "uniform:1:2000", "uniform:1:50", "8", "list-max-listpack-size=-5,-2,-1,16,128" },
        // Keys held once for every value until a value parts them (collection_replay.h): the smallest value not
        // first, and 0; sets of integers across the intset limit; a sweep of another type's limit.
        { CollectionKind::Hash, "uniform:1:400", "uniform:1:20", "uniform:1:60",
            "hash-max-listpack-entries=1024,32,0,128" },
        { CollectionKind::Set, "uniform:1:700", "uniform:1:30", "8", "set-max-intset-entries=600,8,64,512" },
        { CollectionKind::Set, "uniform:1:200", "uniform:1:30", "8", "set-max-listpack-value=16,4,64" },
        { CollectionKind::SortedSet, "uniform:1:300", "uniform:1:70", "uniform:1:12",
            "zset-max-listpack-entries=16,128,512" },
        { CollectionKind::Set, "uniform:1:300", "uniform:1:30", "8", "hash-max-listpack-entries=16,512" },
    };
    for (const char* layout : { "valkey-9.1", "redis-7.0", "valkey-8.1" })
        for (const Case& c : cases) {
            SCOPED_TRACE(std::string(layout) + " " + c.sweep);
            const auto requests = collectionTrace(c.kind, c.counts, c.sizes, c.values);
            MemoryTrace trace(requests);
            SimulationConfig swept = configFor(layout);
            auto sweep = parseLimitSweep(c.sweep);
            ASSERT_TRUE(sweep) << sweep.error().describe();
            swept.limitSweep = *sweep;
            auto result = simulate(swept, trace);
            ASSERT_TRUE(result) << result.error().describe();
            ASSERT_TRUE(result->limitSweep);
            ASSERT_EQ(result->limitSweep->points.size(), sweep->values.size());
            std::set<std::uint64_t> distinct;
            for (const LimitPoint& p : result->limitSweep->points) {
                SimulationConfig own = configFor(layout);
                ASSERT_TRUE(setCollectionLimit(own.collectionLimits, sweep->name, p.value));
                MemoryTrace again(requests);
                auto alone = simulate(own, again);
                ASSERT_TRUE(alone);
                EXPECT_EQ(p.point.usableBytes, alone->points.at(0).usableBytes) << p.value;
                EXPECT_EQ(p.point.keys, alone->points.at(0).keys) << p.value;
                EXPECT_EQ(p.collections, alone->collections) << p.value;
                distinct.insert(p.point.usableBytes);
            }
            // Redis 7.0 has no listpack sets (t_set.c: an intset or a table): that limit is none of its. A limit
            // of another type leaves the trace's keys alone.
            const std::string name = c.sweep;
            const bool otherType = !name.starts_with(collectionKindName(c.kind));
            if ((std::string(layout) == "redis-7.0" && name.starts_with("set-max-listpack")) || otherType)
                EXPECT_EQ(distinct.size(), 1u);
            else
                EXPECT_GT(distinct.size(), 1u) << "the limit changed nothing: the case tests nothing";
            // The run's own point is the engines' defaults.
            MemoryTrace plain(requests);
            auto defaults = simulate(configFor(layout), plain);
            ASSERT_TRUE(defaults);
            EXPECT_EQ(result->points.at(0).usableBytes, defaults->points.at(0).usableBytes);
        }
}

TEST(LimitSweep, BadSweepsSayWhy) {
    struct Case {
        const char* text;
        const char* says;
    };
    const Case cases[] {
        { "hash-max-listpack-entries", "NAME=VALUES" },
        { "hash-max-entries=1,2", "not a collection limit" },
        { "hash-max-listpack-entries=64:32:8", "FIRST:LAST:STEP" },
        { "hash-max-listpack-entries=0:100000:1", "more than 256" },
        { "hash-max-listpack-entries=64,x", "integers" },
        { "hash-max-listpack-entries=64,64", "twice" },
        { "hash-max-listpack-value=-1", "below 0" },
        { "list-max-listpack-size=0", "-5 to -1" },
        { "list-max-listpack-size=-6,-1", "-5 to -1" },
    };
    for (const Case& c : cases) {
        auto sweep = parseLimitSweep(c.text);
        ASSERT_FALSE(sweep) << c.text;
        EXPECT_NE(sweep.error().message.find(c.says), std::string::npos) << c.text << ": " << sweep.error().message;
        EXPECT_EQ(sweep.error().field, field::kLimitSweep);
    }
    auto ok = parseLimitSweep("list-max-listpack-size=-5:-1:1");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->values, (std::vector<std::int64_t> { -5, -4, -3, -2, -1 }));
}

} // namespace

namespace {

LimitPoint limitPoint(std::int64_t value, double bytesPerKey, double linesPerLookup) {
    LimitPoint p;
    p.value = value;
    p.point.usableBytesPerKey = bytesPerKey;
    p.collections.push_back({ "hash", "listpack", 10, 100, 0, 0, 0, 0, linesPerLookup * 100 });
    return p;
}

} // namespace

// adviseLimit (report/limit_advice.h): each value's cost is its excess over the leanest and the fewest lines;
// values within the bytes' uncertainty and with equal lines tie, and the engine's default among them is advised.
TEST(LimitAdvice, TheCheapestValueOrTheDefaultItTiesWith) {
    LimitSweepResult sweep { "hash-max-listpack-entries", 512, 0, {} };
    sweep.points
        = { limitPoint(64, 120, 2), limitPoint(256, 100, 8), limitPoint(512, 100.2, 8), limitPoint(1024, 100.1, 8) };
    auto both = adviseLimit(sweep, { 1, 1, std::nullopt });
    ASSERT_TRUE(both) << both.error().describe();
    EXPECT_EQ(both->type, "hash");
    EXPECT_EQ(both->lookup, "HGET");
    EXPECT_EQ(both->defaultValue, 512);
    EXPECT_EQ(both->points[both->leanest].value, 256);
    EXPECT_EQ(both->points[both->fewestLines].value, 64);
    EXPECT_NEAR(both->points[0].cost, 0.2, 1e-12); // 20% more bytes, the fewest lines
    EXPECT_NEAR(both->points[1].cost, 3.0, 1e-12); // the fewest bytes, 4x the lines
    EXPECT_EQ(both->points[both->chosen].value, 64);
    // Memory alone: 256 is the cheapest, and 512 and 1024 are within 0.5% of its bytes with the same lines: the
    // default is advised.
    auto memory = adviseLimit(sweep, { 1, 0, std::nullopt });
    ASSERT_TRUE(memory);
    EXPECT_EQ(memory->points[memory->cheapest].value, 256);
    EXPECT_EQ(memory->points[memory->chosen].value, 512);
    EXPECT_TRUE(memory->points[3].tiesWithAdvised);
    EXPECT_FALSE(memory->points[0].tiesWithAdvised);
    // A sweep of a type the trace lacks says so.
    auto sets = sweep;
    sets.name = "set-max-intset-entries";
    EXPECT_FALSE(adviseLimit(sets, { 1, 1, std::nullopt }));
    EXPECT_FALSE(adviseLimit(sweep, { 0, 0, std::nullopt }));
}

// Keys loaded from a snapshot (rdb.c rdbLoadObject): the bundled RDB file's hashes, sets and sorted sets swept
// by their entries and value limits, each value as a run of its own gives.
TEST(LimitSweep, KeysLoadedFromASnapshotAsTheirOwnRuns) {
    const std::string file = LAYOUTLAB_DATASETS_DIR "/samples/keyspace.rdb";
    for (const char* text : { "hash-max-listpack-value=4,8,16,64", "hash-max-listpack-entries=2,4,8,512",
             "set-max-intset-entries=2,8,64", "zset-max-listpack-value=4,16,64" }) {
        SCOPED_TRACE(text);
        auto sweep = parseLimitSweep(text);
        ASSERT_TRUE(sweep);
        SimulationConfig swept = configFor("valkey-9.1");
        swept.limitSweep = *sweep;
        auto trace = openTrace(file);
        ASSERT_TRUE(trace) << trace.error().describe();
        auto result = simulate(swept, **trace);
        ASSERT_TRUE(result && result->limitSweep) << (result ? "" : result.error().describe());
        std::set<std::uint64_t> distinct;
        for (const LimitPoint& p : result->limitSweep->points) {
            SimulationConfig own = configFor("valkey-9.1");
            ASSERT_TRUE(setCollectionLimit(own.collectionLimits, sweep->name, p.value));
            auto again = openTrace(file);
            ASSERT_TRUE(again);
            auto alone = simulate(own, **again);
            ASSERT_TRUE(alone);
            EXPECT_EQ(p.point.usableBytes, alone->points.at(0).usableBytes) << p.value;
            EXPECT_EQ(p.collections, alone->collections) << p.value;
            distinct.insert(p.point.usableBytes);
        }
        // A snapshot's listpack is kept within the entries limit whatever its elements' lengths (rdb.c): the
        // value limits change nothing here, the entries limits do.
        if (std::string(text).find("-entries") != std::string::npos)
            EXPECT_GT(distinct.size(), 1u) << "the limit changed nothing: the case tests nothing";
        else
            EXPECT_EQ(distinct.size(), 1u);
    }
}

// An intset joined by a string converts by the longest member it already holds (t_set.c maxelelen), not the
// new one's length: a capture of integer sets of 6-digit members each joined late by a 2-byte string, swept
// by set-max-listpack-value on both sides of the members' length.
TEST(LimitSweep, AnIntsetJoinedByAStringWeighsTheMembersItHolds) {
    std::string capture = "OK\n";
    for (int k = 0; k < 40; ++k) {
        std::string line = fmt::format("1700000000.{:06} [0 127.0.0.1:5000] \"SADD\" \"s{}\"", k, k);
        for (int m = 0; m < 3 + k % 20; ++m)
            line += fmt::format(" \"{}\"", 100000 + k * 50 + m);
        capture += line + "\n";
        capture += fmt::format("1700000001.{:06} [0 127.0.0.1:5000] \"SADD\" \"s{}\" \"ab\"\n", k, k);
    }
    const auto path = (std::filesystem::temp_directory_path() / "layoutlab-limit-sweep-intsets.monitor").string();
    std::ofstream(path) << capture;
    auto sweep = parseLimitSweep("set-max-listpack-value=4,16,64");
    ASSERT_TRUE(sweep);
    SimulationConfig swept = configFor("valkey-9.1");
    swept.limitSweep = *sweep;
    auto trace = openTrace(path, { "monitor", OnError::Fail, 16 });
    ASSERT_TRUE(trace) << trace.error().describe();
    auto result = simulate(swept, **trace);
    ASSERT_TRUE(result && result->limitSweep);
    std::set<std::uint64_t> distinct;
    for (const LimitPoint& p : result->limitSweep->points) {
        SimulationConfig own = configFor("valkey-9.1");
        ASSERT_TRUE(setCollectionLimit(own.collectionLimits, sweep->name, p.value));
        auto again = openTrace(path, { "monitor", OnError::Fail, 16 });
        auto alone = simulate(own, **again);
        ASSERT_TRUE(alone);
        EXPECT_EQ(p.collections, alone->collections) << p.value;
        distinct.insert(p.point.usableBytes);
    }
    EXPECT_GT(distinct.size(), 1u); // 4: tables; 16 and 64: listpacks
    std::filesystem::remove(path);
}
