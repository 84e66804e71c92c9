// SPDX-License-Identifier: MIT
// The metric table is the one list of a point's metrics: the database's points columns, --json, --csv
// and the human table all follow it.
#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/reporter.h"
#include "layoutlab/sim/point_metrics.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/store/results_db.h"
#include "layoutlab/trace/generator.h"
#include "scratch_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sqlite3.h>

using namespace layoutlab;

namespace {

class PointMetricsTest : public ScratchDirTest {
protected:
    // A sweep with the cache model at `geometry` (empty: without it), and the slab model if `slabs`.
    static SimulationResult sweep(const std::string& geometry, bool slabs = false) {
        auto cfg = makeGeneratorConfig(
            1500, 4000, "uniform:8:40", "lognormal:4:1:1:3000", 0.2, 0.05, 0.7, 0.05, "zipf:0.9", 5);
        SyntheticTrace trace(*cfg);
        auto models = parseLayoutAndAllocator("valkey-9.1", "");
        SimulationConfig config { models->layout, models->allocator, { 16, 64, 128 } };
        if (!geometry.empty()) {
            auto cache = CacheGeometry::parse(geometry);
            EXPECT_TRUE(cache) << cache.error().describe();
            config.cache = *cache;
        }
        if (slabs)
            config.slabs = SlabModelOptions {};
        auto result = simulate(config, trace);
        EXPECT_TRUE(result) << result.error().describe();
        return *result;
    }

    std::set<std::string> pointColumns(const std::string& dbPath) {
        sqlite3* db = nullptr;
        EXPECT_EQ(sqlite3_open(dbPath.c_str(), &db), SQLITE_OK);
        sqlite3_stmt* s = nullptr;
        sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info('points')", -1, &s, nullptr);
        std::set<std::string> out;
        while (sqlite3_step(s) == SQLITE_ROW)
            out.insert(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
        sqlite3_finalize(s);
        sqlite3_close(db);
        return out;
    }

    std::int64_t store(ResultsDb& db, const SimulationResult& result) {
        RunRecord r;
        r.kind = "sweep";
        r.layout = result.layoutSpec;
        r.allocator = result.allocatorSpec;
        r.parametersJson = "{}";
        r.toolVersion = "test";
        auto id = db.beginRun(r);
        EXPECT_TRUE(id);
        EXPECT_TRUE(db.completeRun(*id, result));
        return *id;
    }
};

TEST_F(PointMetricsTest, TheStoredMetricsAreExactlyThePointsTablesColumns) {
    const auto path = (m_dir / "results.db").string();
    ASSERT_TRUE(ResultsDb::open(path));
    std::set<std::string> stored { "run_id", "point_index", "threshold" };
    for (const auto* m : metricsWith(kMetricStored))
        stored.insert(std::string(m->name));
    EXPECT_EQ(pointColumns(path), stored);
}

TEST_F(PointMetricsTest, EveryStoredMetricReadsBackByNameWithAndWithoutEachCacheLevel) {
    auto db = ResultsDb::open((m_dir / "results.db").string());
    ASSERT_TRUE(db);
    for (const std::string geometry : { "", "32K:8,1M:16", "32K:8,256K:8,2M:16" })
        for (const bool slabs : { false, true }) {
            SCOPED_TRACE(geometry + (slabs ? " with the slab model" : ""));
            const auto result = sweep(geometry, slabs);
            const auto back = (*db)->points(store(**db, result));
            ASSERT_TRUE(back);
            ASSERT_EQ(back->size(), result.points.size());
            for (std::size_t i = 0; i < back->size(); ++i) {
                const auto& a = result.points[i];
                const auto& b = (*back)[i];
                EXPECT_EQ(a.missesPerGet, b.missesPerGet);
                EXPECT_EQ(a.arena, b.arena);
                for (const auto* m : metricsWith(kMetricStored)) {
                    SCOPED_TRACE(std::string(m->name));
                    EXPECT_EQ(m->get(a), m->get(b));
                }
            }
        }
}

TEST_F(PointMetricsTest, JsonAndCsvCarryExactlyTheOutputMetricsAPointHas) {
    for (const std::string geometry : { "", "32K:8,1M:16", "32K:8,256K:8,2M:16" })
        for (const bool slabs : { false, true }) {
            SCOPED_TRACE(geometry + (slabs ? " with the slab model" : ""));
            const auto result = sweep(geometry, slabs);
            const std::size_t levels = result.points.front().missesPerGet.size();
            std::set<std::string> expected { "threshold", "size_classes" };
            std::string csvHeader = "threshold";
            for (const auto* m : metricsWith(kMetricOutput, levels, slabs, false)) {
                expected.insert(std::string(m->name));
                csvHeader += "," + std::string(m->name);
            }
            EXPECT_EQ(expected.count("l2_misses_per_get"), levels == 3 ? 1u : 0u);
            EXPECT_EQ(expected.count("llc_misses_per_get"), levels ? 1u : 0u);
            EXPECT_EQ(expected.count("active_bytes"), slabs ? 1u : 0u);
            const auto json = toJson(result);
            for (const auto& point : json["points"]) {
                std::set<std::string> keys;
                for (const auto& [key, value] : point.items())
                    keys.insert(key);
                EXPECT_EQ(keys, expected);
            }
            const auto csv = renderCsv(result);
            EXPECT_EQ(csv.substr(0, csv.find('\n')), csvHeader);
        }
}

TEST_F(PointMetricsTest, TheHumanTableHasAColumnPerTableMetric) {
    const auto result = sweep("32K:8,1M:16");
    const auto table = renderTable(result, false);
    for (const auto* m : tableColumns(2))
        EXPECT_NE(table.find(std::string(m->tableHeader)), std::string::npos) << m->name;
    const auto* perKey = findPointMetric("usable_bytes_per_key");
    ASSERT_TRUE(perKey);
    EXPECT_NE(table.find(formatForTable(*perKey, result.points.front().usableBytesPerKey)), std::string::npos);
    for (const auto& m : pointMetricTable()) {
        EXPECT_FALSE(m.description.empty()) << m.name;
        EXPECT_FALSE(m.unit.empty()) << m.name;
        EXPECT_EQ(findPointMetric(m.name), &m);
    }
}

} // namespace
