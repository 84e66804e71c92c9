// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/limit_sweep.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/store/results_db.h"
#include "layoutlab/store/stored_run.h"
#include "layoutlab/trace/generator.h"
#include "scratch_dir.h"
#include "threshold_points.h"

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace layoutlab;

namespace {

class ResultsDbTest : public ScratchDirTest {
protected:
    std::string path(const std::string& name = "results.db") const { return (m_dir / name).string(); }

    // With `timeline` samples, the slab model runs and takes them.
    static SimulationResult sweep(std::uint32_t timeline = 0) {
        auto cfg = makeGeneratorConfig(
            2000, 6000, "uniform:8:40", "lognormal:4:1:1:3000", 0.2, 0.05, 0.7, 0.05, "zipf:0.9", 3);
        SyntheticTrace trace(*cfg);
        auto models = parseLayoutAndAllocator("valkey-9.1", "");
        SimulationConfig config { models->layout, models->allocator, { 32, 64, 128, 256 } };
        if (timeline) {
            config.slabs = SlabModelOptions {};
            config.timelineSamples = timeline;
        }
        auto result = simulate(config, trace);
        return *result;
    }

    // Stores `result` as a complete run of a trace in the database at `file`; returns its id.
    std::int64_t store(const SimulationResult& result, const std::string& file = "results.db") const {
        auto db = ResultsDb::open(path(file));
        EXPECT_TRUE(db);
        TraceRecord t;
        t.source = "mixed.lltrace";
        t.format = "layoutlab";
        t.contentHash = "0123456789abcdef";
        RunRecord r;
        r.kind = "sweep";
        r.traceId = *(*db)->upsertTrace(t);
        r.layout = result.layoutSpec;
        r.allocator = result.allocatorSpec;
        r.parametersJson = R"({"thresholds":[32,64,128,256]})";
        r.toolVersion = "test";
        auto id = (*db)->beginRun(r);
        EXPECT_TRUE(id && (*db)->completeRun(*id, result));
        return *id;
    }
};

TEST_F(ResultsDbTest, CreatesTheCurrentSchema) {
    auto db = ResultsDb::open(path());
    ASSERT_TRUE(db) << db.error().describe();
    EXPECT_EQ((*db)->schemaVersion(), kResultsSchemaVersion);
    auto check = (*db)->integrityCheck();
    ASSERT_TRUE(check);
    EXPECT_EQ(*check, "ok");
}

TEST_F(ResultsDbTest, StoredRunsReadBackExactly) {
    const auto result = sweep();
    std::int64_t runId = 0;
    {
        auto db = ResultsDb::open(path());
        ASSERT_TRUE(db);
        TraceRecord t;
        t.source = "mixed.lltrace";
        t.format = "layoutlab";
        t.contentHash = "0123456789abcdef";
        auto traceId = (*db)->upsertTrace(t);
        ASSERT_TRUE(traceId);
        EXPECT_EQ(*(*db)->upsertTrace(t), *traceId); // same content and format: same trace
        RunRecord r;
        r.kind = "sweep";
        r.traceId = *traceId;
        r.layout = result.layoutSpec;
        r.allocator = result.allocatorSpec;
        r.parametersJson = R"({"thresholds":[32,64,128,256]})";
        r.toolVersion = "test";
        auto id = (*db)->beginRun(r);
        ASSERT_TRUE(id);
        runId = *id;
        EXPECT_EQ((*db)->run(runId)->status, "running");
        ASSERT_TRUE((*db)->completeRun(runId, result));
    }
    auto db = ResultsDb::open(path()); // reopened: everything persisted
    ASSERT_TRUE(db);
    auto run = (*db)->run(runId);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->status, "complete");
    EXPECT_EQ(run->points, 4u);
    EXPECT_FALSE(run->finishedAt.empty());
    auto points = (*db)->points(runId);
    ASSERT_TRUE(points);
    ASSERT_EQ(points->size(), result.points.size());
    for (std::size_t i = 0; i < points->size(); ++i) {
        SCOPED_TRACE(i);
        test::expectSamePoint((*points)[i], result.points[i]);
    }
    auto traces = (*db)->listTraces();
    ASSERT_EQ(traces->size(), 1u);
    EXPECT_EQ(traces->front().requests, result.trace.requests); // filled in from the run
}

TEST_F(ResultsDbTest, MemcachedPagesAndEvictionsPerClassReadBack) {
    // memcached under -m: each class's pages at the end and the items its LRU evicted (schema 10).
    auto cfg
        = makeGeneratorConfig(20000, 60000, "uniform:8:40", "uniform:100:300", 0.2, 0.05, 0.7, 0.05, "zipf:0.9", 3);
    SyntheticTrace trace(*cfg);
    auto models = parseLayoutAndAllocator("memcached-1.6", "");
    SimulationConfig config { models->layout, models->allocator, {} };
    config.eviction = EvictionOptions { .maxmemoryBytes = 2u << 20 };
    auto result = simulate(config, trace);
    ASSERT_TRUE(result) << result.error().describe();
    std::uint64_t evicted = 0;
    for (const auto& c : result->points.at(0).sizeClasses)
        evicted += c.evictions;
    EXPECT_GT(evicted, 0u);
    // A class also counts the old item its key's own overwrite evicted (the key stays): at least the keys evicted.
    EXPECT_GE(evicted, result->points[0].budget->evictedKeys);
    const std::int64_t runId = store(*result);
    auto db = ResultsDb::open(path());
    ASSERT_TRUE(db);
    auto points = (*db)->points(runId);
    ASSERT_TRUE(points);
    test::expectSamePoint(points->at(0), result->points[0]);
}

TEST_F(ResultsDbTest, SlabModelFiguresAndTimelinesReadBackAndMerge) {
    const auto result = sweep(6);
    ASSERT_EQ(result.timeline.size(), 6u);
    const std::int64_t runId = store(result);
    auto db = ResultsDb::open(path());
    ASSERT_TRUE(db);
    auto points = (*db)->points(runId);
    ASSERT_TRUE(points);
    ASSERT_EQ(points->size(), result.points.size());
    for (std::size_t i = 0; i < points->size(); ++i) {
        SCOPED_TRACE(i);
        test::expectSamePoint((*points)[i], result.points[i]); // held slabs per class included
        EXPECT_EQ((*points)[i].arena, result.points[i].arena);
    }
    bool anyHeld = false;
    for (const auto& c : result.points[0].sizeClasses)
        anyHeld = anyHeld || c.heldSlabs > 0;
    EXPECT_TRUE(anyHeld);
    auto timeline = (*db)->timeline(runId);
    ASSERT_TRUE(timeline) << timeline.error().describe();
    EXPECT_EQ(*timeline, result.timeline);
    // A run without one has none; a merged database has the timeline too.
    EXPECT_TRUE((*db)->timeline(store(sweep()))->empty());
    const std::int64_t otherId = store(result, "other.db");
    auto merged = ResultsDb::open(path("merged.db"));
    ASSERT_TRUE(merged);
    ASSERT_TRUE((*merged)->mergeFrom(path("other.db")));
    auto copied = (*merged)->timeline(otherId);
    ASSERT_TRUE(copied);
    EXPECT_EQ(*copied, result.timeline);
    // Deleting the run deletes its timeline.
    ASSERT_TRUE((*db)->deleteRuns({ runId }));
    EXPECT_TRUE((*db)->timeline(runId)->empty());
}

// A run of a trace with collection keys keeps them by type and encoding; a merge copies them, a delete takes
// them; a run of strings has none.
TEST_F(ResultsDbTest, CollectionRowsReadBackAndMerge) {
    auto cfg = makeGeneratorConfig(500, 2000, "16", "24", 0, 0.5, 0.8, 0.05, "uniform", 9);
    ASSERT_TRUE(setCollectionElements(*cfg, CollectionKind::Set, "uniform:1:700", "uniform:2:12"));
    SyntheticTrace trace(*cfg);
    auto models = parseLayoutAndAllocator("valkey-9.1", "");
    auto result = simulate({ models->layout, models->allocator, { 32, 64, 128 } }, trace);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_GE(result->collections.size(), 3u); // intsets, listpacks and tables
    const std::int64_t runId = store(*result);
    auto db = ResultsDb::open(path());
    ASSERT_TRUE(db);
    auto rows = (*db)->collections(runId);
    ASSERT_TRUE(rows) << rows.error().describe();
    EXPECT_EQ(*rows, result->collections);
    EXPECT_TRUE((*db)->collections(store(sweep()))->empty());
    const std::int64_t otherId = store(*result, "other.db");
    auto merged = ResultsDb::open(path("merged.db"));
    ASSERT_TRUE(merged);
    ASSERT_TRUE((*merged)->mergeFrom(path("other.db")));
    EXPECT_EQ(*(*merged)->collections(otherId), result->collections);
    ASSERT_TRUE((*db)->deleteRuns({ runId }));
    EXPECT_TRUE((*db)->collections(runId)->empty());
}

// A sorted set's skiplist rows keep the variance of their node levels' draws.
TEST_F(ResultsDbTest, SkiplistRowsKeepTheirLevelsVariance) {
    auto cfg = makeGeneratorConfig(300, 1500, "16", "24", 0, 0.5, 0.8, 0.05, "uniform", 4);
    ASSERT_TRUE(setCollectionElements(*cfg, CollectionKind::SortedSet, "uniform:1:400", "uniform:2:12"));
    SyntheticTrace trace(*cfg);
    auto models = parseLayoutAndAllocator("valkey-9.1", "");
    auto result = simulate({ models->layout, models->allocator, { 64 } }, trace);
    ASSERT_TRUE(result) << result.error().describe();
    const auto skiplists = std::find_if(result->collections.begin(), result->collections.end(),
        [](const CollectionUsage& c) { return c.encoding == "skiplist"; });
    ASSERT_NE(skiplists, result->collections.end());
    EXPECT_GT(skiplists->usableBytesVariance, 0);
    auto db = ResultsDb::open(path());
    ASSERT_TRUE(db);
    auto rows = (*db)->collections(store(*result));
    ASSERT_TRUE(rows) << rows.error().describe();
    EXPECT_EQ(*rows, result->collections);
}

// A collection limit swept in the run's pass reads back as the run made it: each value's point (the run's with
// that value's collections) and collections; a merge copies the values, a delete takes them.
TEST_F(ResultsDbTest, SweptLimitReadsBackAndMerges) {
    auto cfg = makeGeneratorConfig(400, 1500, "16", "24", 0, 0.5, 0.8, 0.05, "uniform", 5);
    ASSERT_TRUE(setCollectionElements(*cfg, CollectionKind::Set, "uniform:1:900", "uniform:2:12"));
    SyntheticTrace trace(*cfg);
    auto models = parseLayoutAndAllocator("valkey-9.1", "");
    SimulationConfig config { models->layout, models->allocator, { 64, 128 } };
    config.limitSweep = *parseLimitSweep("set-max-intset-entries=16,128,1024");
    auto result = simulate(config, trace);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_TRUE(result->limitSweep);
    const auto expectSame = [](const LimitSweepResult& got, const LimitSweepResult& want) {
        EXPECT_EQ(got.name, want.name);
        EXPECT_EQ(got.runValue, want.runValue);
        EXPECT_EQ(got.threshold, want.threshold);
        ASSERT_EQ(got.points.size(), want.points.size());
        for (std::size_t i = 0; i < got.points.size(); ++i) {
            EXPECT_EQ(got.points[i].value, want.points[i].value);
            EXPECT_EQ(got.points[i].collections, want.points[i].collections);
            EXPECT_EQ(got.points[i].point.keys, want.points[i].point.keys);
            EXPECT_EQ(got.points[i].point.usableBytes, want.points[i].point.usableBytes);
            EXPECT_EQ(got.points[i].point.requestedBytes, want.points[i].point.requestedBytes);
            EXPECT_EQ(got.points[i].point.allocations, want.points[i].point.allocations);
            EXPECT_DOUBLE_EQ(got.points[i].point.usableBytesPerKey, want.points[i].point.usableBytesPerKey);
        }
    };
    // The intsets change encoding across the values: the sweep is not the same row three times.
    EXPECT_NE(result->limitSweep->points.front().collections, result->limitSweep->points.back().collections);
    const std::int64_t runId = store(*result);
    auto db = ResultsDb::open(path());
    ASSERT_TRUE(db);
    auto stored = loadStoredRun(**db, runId);
    ASSERT_TRUE(stored) << stored.error().describe();
    ASSERT_TRUE(stored->result.limitSweep);
    expectSame(*stored->result.limitSweep, *result->limitSweep);
    EXPECT_FALSE(loadStoredRun(**db, store(sweep()))->result.limitSweep); // a run without one has none

    const std::int64_t otherId = store(*result, "other.db");
    auto merged = ResultsDb::open(path("merged.db"));
    ASSERT_TRUE((*merged)->mergeFrom(path("other.db")));
    auto copied = loadStoredRun(**merged, otherId);
    ASSERT_TRUE(copied && copied->result.limitSweep);
    expectSame(*copied->result.limitSweep, *result->limitSweep);
    ASSERT_TRUE((*db)->deleteRuns({ runId }));
    EXPECT_TRUE((*db)->limitValues(runId)->empty());
}

TEST_F(ResultsDbTest, FailedAndInterruptedRunsAreNeverComplete) {
    auto db = ResultsDb::open(path());
    RunRecord r;
    r.kind = "sim";
    r.layout = "valkey";
    r.allocator = "jemalloc";
    r.parametersJson = "{}";
    r.toolVersion = "test";
    const auto interrupted = *(*db)->beginRun(r);
    const auto failed = *(*db)->beginRun(r);
    const auto live = *(*db)->beginRun(r);
    EXPECT_EQ((*db)->run(interrupted)->status, "running");
    EXPECT_TRUE((*db)->run(interrupted)->live); // this process owns it
    ASSERT_TRUE((*db)->interruptRun(interrupted));
    ASSERT_TRUE((*db)->failRun(failed, "no space"));
    EXPECT_EQ((*db)->run(interrupted)->status, "interrupted");
    EXPECT_FALSE((*db)->run(interrupted)->live);
    EXPECT_EQ((*db)->run(failed)->status, "failed");
    EXPECT_EQ((*db)->run(failed)->error, "no space");
    // completeRun only completes a running run once.
    const auto done = *(*db)->beginRun(r);
    ASSERT_TRUE((*db)->completeRun(done, sweep()));
    EXPECT_FALSE((*db)->completeRun(done, sweep()));
    const auto deletion = *(*db)->deleteIncompleteRuns();
    EXPECT_EQ(deletion.deleted, 2u);
    EXPECT_EQ(deletion.liveLeft, 1u); // a run its owner is computing stays
    EXPECT_EQ((*db)->listRuns()->size(), 2u);
    ASSERT_TRUE((*db)->interruptRun(live));
    EXPECT_EQ(*(*db)->deleteRuns({ done }), 1u);
    EXPECT_TRUE((*db)->points(done)->empty()); // cascaded
    EXPECT_TRUE((*db)->vacuum());
}

TEST_F(ResultsDbTest, RefusesNewerSchemasAndOtherFiles) {
    {
        auto db = ResultsDb::open(path());
        ASSERT_TRUE(db);
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path().c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    auto newer = ResultsDb::open(path());
    ASSERT_FALSE(newer);
    EXPECT_NE(newer.error().describe().find("newer"), std::string::npos) << newer.error().describe();

    std::ofstream(path("text.db")) << std::string(5000, 'x');
    auto text = ResultsDb::open(path("text.db"));
    ASSERT_FALSE(text);
    EXPECT_NE(text.error().describe().find("text.db"), std::string::npos) << text.error().describe();
}

TEST_F(ResultsDbTest, FileHashFollowsContent) {
    std::ofstream(path("a")) << "same";
    std::ofstream(path("b")) << "same";
    std::ofstream(path("c")) << "other";
    std::uint64_t size = 0;
    EXPECT_EQ(*hashFile(path("a"), &size), *hashFile(path("b")));
    EXPECT_EQ(size, 4u);
    EXPECT_NE(*hashFile(path("a")), *hashFile(path("c")));
    EXPECT_FALSE(hashFile(path("missing")));
}

} // namespace

namespace {

TEST_F(ResultsDbTest, MeasurementsReadBackPerThreshold) {
    auto db = ResultsDb::open(path());
    ASSERT_TRUE(db);
    RunRecord r;
    r.kind = "reference";
    r.layout = "valkey-9.1";
    r.allocator = "jemalloc";
    r.parametersJson = "{}";
    r.toolVersion = "test";
    auto runId = (*db)->beginRun(r);
    ASSERT_TRUE(runId);
    const std::vector<Measurement> measured {
        { 64u, "reference", "jemalloc 5.3.0", "allocated_bytes", 3494144, "bytes", R"({"bins":3})" },
        { 128u, "reference", "jemalloc 5.3.0", "ns_per_get", 41.5, "ns", "{}" },
        { std::nullopt, "reference", "", "load_seconds", 0.25, "s", "{}" },
    };
    ASSERT_TRUE((*db)->completeMeasuredRun(*runId, measured, R"({"requests":10})"));
    auto back = (*db)->measurements(*runId);
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(*back, measured);
    auto run = (*db)->run(*runId);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->status, "complete");
    EXPECT_EQ(run->replayJson, R"({"requests":10})");
}

TEST_F(ResultsDbTest, AVersionOneDatabaseIsMigrated) {
    // A database as layoutlab 0.x wrote it (schema 1: measurements had no threshold column, size classes
    // no payload column), holding one size-class row.
    {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(path().c_str(), &raw), SQLITE_OK);
        const char* v1 = "CREATE TABLE schema_version (version INTEGER NOT NULL);"
                         "INSERT INTO schema_version VALUES (1);"
                         "CREATE TABLE measurements (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, engine TEXT "
                         "NOT NULL, engine_version TEXT, metric TEXT NOT NULL, value REAL, unit TEXT, details_json "
                         "TEXT NOT NULL DEFAULT '{}');"
                         "CREATE TABLE size_classes (run_id INTEGER NOT NULL, point_index INTEGER NOT NULL, "
                         "class_bytes INTEGER NOT NULL, allocations INTEGER NOT NULL, requested_bytes INTEGER NOT "
                         "NULL, usable_bytes INTEGER NOT NULL, regions_per_slab INTEGER NOT NULL, slabs INTEGER NOT "
                         "NULL, PRIMARY KEY (run_id, point_index, class_bytes));"
                         "INSERT INTO size_classes VALUES (1, 0, 48, 10, 400, 480, 256, 1);"
                         "CREATE TABLE runs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, trace_id INTEGER, layout "
                         "TEXT NOT NULL, allocator TEXT NOT NULL, parameters_json TEXT NOT NULL, tool_version TEXT "
                         "NOT NULL, status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed')), error "
                         "TEXT, replay_json TEXT NOT NULL DEFAULT '{}', started_at TEXT NOT NULL, finished_at TEXT);"
                         "CREATE TABLE traces (id INTEGER PRIMARY KEY, source TEXT NOT NULL);"
                         "CREATE TABLE points (run_id INTEGER NOT NULL, point_index INTEGER NOT NULL);"
                         "INSERT INTO runs VALUES (1, 'sweep', NULL, 'valkey', 'jemalloc', "
                         "'{\"batch_cell\":\"k\"}', '0.1', 'running', NULL, '{}', '2026-01-01T00:00:00Z', NULL);";
        ASSERT_EQ(sqlite3_exec(raw, v1, nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(raw);
    }
    auto db = ResultsDb::open(path());
    ASSERT_TRUE(db) << db.error().describe();
    EXPECT_EQ((*db)->schemaVersion(), kResultsSchemaVersion);
    auto none = (*db)->measurements(1);
    ASSERT_TRUE(none) << none.error().describe();
    EXPECT_TRUE(none->empty());
    // Schema 4: the run is kept, with no owner (so nobody is at it any more) and its batch cell.
    auto old = (*db)->run(1);
    ASSERT_TRUE(old) << old.error().describe();
    EXPECT_EQ(old->status, "running");
    EXPECT_FALSE(old->live);
    EXPECT_EQ(old->batchCell, "k");
    ASSERT_TRUE((*db)->interruptRun(1));
    // Schema 3: the old row is kept, with no payload recorded.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path().c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT requested_bytes, payload_bytes FROM size_classes", -1, &st, nullptr),
        SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int64(st, 0), 400);
    EXPECT_EQ(sqlite3_column_int64(st, 1), 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
}

} // namespace
