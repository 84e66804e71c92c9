// SPDX-License-Identifier: MIT
// An engine sweep's points go into a run's measurements and come back whole; other runs' measurements
// are not mistaken for them.

#include "layoutlab/store/engine_sweep_points.h"
#include "scratch_dir.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

class EngineSweepPointsTest : public ScratchDirTest { };

std::vector<EngineSweepPoint> valkeyPoints() {
    EngineSweepPoint a;
    a.setting = "threshold 32";
    a.threshold = 32;
    a.engine = "valkey";
    a.version = "255.255.255";
    a.server = "/cache/x-embed-threshold-32/bin/valkey-server";
    a.build = "embed-threshold=32";
    a.model = "valkey-8.1:threshold=32";
    a.measuredBytesPerKey = 241.88;
    a.predictedBytesPerKey = 241.79;
    a.keys = 47685;
    EngineSweepPoint b = a;
    b.setting = "threshold 128";
    b.threshold = 128;
    b.build.clear(); // a binary the user picked
    b.measuredBytesPerKey = 242.13;
    b.predictedBytesPerKey = 242.02;
    b.getsPerSecond = 81234.5;
    return { a, b };
}

TEST_F(EngineSweepPointsTest, StoredPointsReadBackWhole) {
    auto db = ResultsDb::open((m_dir / "results.db").string());
    ASSERT_TRUE(db);
    RunRecord r;
    r.kind = kEngineSweepKind;
    r.layout = "valkey-8.1";
    r.allocator = "jemalloc:quantum=8,page=4096";
    r.parametersJson = "{}";
    r.toolVersion = "test";
    auto id = (*db)->beginRun(r);
    ASSERT_TRUE(id);
    const auto points = valkeyPoints();
    ASSERT_TRUE((*db)->completeMeasuredRun(*id, engineSweepMeasurements(points), "{}"));
    auto measurements = (*db)->measurements(*id);
    ASSERT_TRUE(measurements);
    const auto back = engineSweepPoints(*measurements);
    ASSERT_EQ(back.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(back[i].setting, points[i].setting);
        EXPECT_EQ(back[i].threshold, points[i].threshold);
        EXPECT_EQ(back[i].engine, "valkey");
        EXPECT_EQ(back[i].version, "255.255.255");
        EXPECT_EQ(back[i].server, points[i].server);
        EXPECT_EQ(back[i].build, points[i].build);
        EXPECT_EQ(back[i].model, points[i].model);
        EXPECT_DOUBLE_EQ(back[i].measuredBytesPerKey, points[i].measuredBytesPerKey);
        EXPECT_DOUBLE_EQ(back[i].predictedBytesPerKey, points[i].predictedBytesPerKey);
        EXPECT_EQ(back[i].keys, 47685u);
        EXPECT_EQ(back[i].getsPerSecond, points[i].getsPerSecond);
    }
    EXPECT_NEAR(back[1].relativeError(), (242.02 - 242.13) / 242.13, 1e-12);
    EXPECT_NEAR(worstError(back), (242.02 - 242.13) / 242.13, 1e-12); // the larger by magnitude, with its sign
}

TEST_F(EngineSweepPointsTest, AMemcachedSettingHasNoThreshold) {
    EngineSweepPoint p;
    p.setting = "-f 1.08 -n 48";
    p.engine = "memcached";
    p.measuredBytesPerKey = 250.43;
    p.predictedBytesPerKey = 250.43;
    const auto back = engineSweepPoints(engineSweepMeasurements({ p }));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_FALSE(back[0].threshold);
    EXPECT_EQ(back[0].setting, "-f 1.08 -n 48");
    EXPECT_EQ(back[0].relativeError(), 0.0);
}

TEST_F(EngineSweepPointsTest, ADrivesMeasurementsAreNotAnEngineSweeps) {
    // What a single drive stores (collectors/jobs/drive_report.cpp driveMeasurements): no setting.
    const std::vector<Measurement> drive {
        { std::nullopt, "redis-server", "7.0.15", "bytes_per_key", 211.6, "bytes", "{}" },
        { std::nullopt, "redis-server", "7.0.15", "gets_per_sec", 90000, "ops/s", R"({"connections":4})" },
    };
    EXPECT_TRUE(engineSweepPoints(drive).empty());
    EXPECT_EQ(worstError({}), 0.0);
}

} // namespace
