// SPDX-License-Identifier: MIT
// Every table model of the GUI under QAbstractItemModelTester (fatal on any violation), filled from real
// results: a sweep of the seed dataset and a results database holding it.

#include "gui_test_support.h"
#include "library_models.h"
#include "result_models.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/store/jobs.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace layoutlab;
using namespace layoutlab::gui;

class ModelsTest : public QObject {
    Q_OBJECT
private slots:
    void sweepModelHoldsOneRowPerThreshold() {
        SweepTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
        const auto result
            = test::simulateForTest(test::seedTrace(), QStringLiteral("valkey-9.1"), QStringLiteral("16:256:16"), true);
        model.setResult(result);
        QCOMPARE(model.rowCount(), 16);
        const int bytes = model.columnOf(QStringLiteral("usable_bytes_per_key"));
        const int llc = model.columnOf(QStringLiteral("llc_misses_per_get"));
        QVERIFY(bytes > 0);
        QVERIFY(llc > 0);
        QVERIFY(model.hasCacheModel());
        for (int r = 0; r < model.rowCount(); ++r) {
            const auto& p = result.points[std::size_t(r)];
            QCOMPARE(model.value(r, 0), double(p.threshold));
            QCOMPARE(model.data(model.index(r, bytes), Qt::EditRole).toDouble(), p.usableBytesPerKey);
            QCOMPARE(model.value(r, llc), p.missesPerGet.back());
        }
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), 0);
    }

    void sweepModelWithoutCacheHasNoMissColumns() {
        SweepTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
        model.setResult(
            test::simulateForTest(test::seedTrace(), QStringLiteral("valkey-9.1"), QStringLiteral("64,128"), false));
        QCOMPARE(model.rowCount(), 2);
        QVERIFY(!model.hasCacheModel());
        QCOMPARE(model.columnOf(QStringLiteral("l1_misses_per_get")), -1);
    }

    void sweepModelWithLatenciesGivesEachPointsStall() {
        SweepTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
        const auto result
            = test::simulateForTest(test::seedTrace(), QStringLiteral("valkey-9.1"), QStringLiteral("64,128"), true);
        model.setResult(result);
        QCOMPARE(model.columnOf(QStringLiteral("stall_ns")), -1); // no latencies kept: no stall
        LoadLatencies latencies; // one per level the cache model has, then memory
        for (std::size_t level = 0; level < result.points.front().missesPerGet.size(); ++level) {
            latencies.levelNs.push_back(1.0 + 5.0 * double(level));
            latencies.levelUncertaintyNs.push_back(0.5);
        }
        latencies.memoryNs = 90;
        latencies.memoryUncertaintyNs = 4;
        model.setResult(result, latencies);
        const int stall = model.columnOf(QStringLiteral("stall_ns"));
        const int uncertainty = model.columnOf(QStringLiteral("stall_uncertainty_ns"));
        QVERIFY(stall > 0);
        QCOMPARE(uncertainty, stall + 1);
        for (int r = 0; r < model.rowCount(); ++r) {
            const auto expected = predictStall(result.points[std::size_t(r)], latencies);
            QVERIFY(expected.has_value());
            QVERIFY(expected->ns > 0);
            QCOMPARE(model.data(model.index(r, stall), Qt::EditRole).toDouble(), expected->ns);
            QCOMPARE(model.value(r, uncertainty), expected->uncertaintyNs);
        }
        QVERIFY(model.headerData(stall, Qt::Horizontal).toString().contains(QStringLiteral("stall")));
    }

    void sizeClassModelAddsUpToTheUsableBytes() {
        SizeClassTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
        const auto result
            = test::simulateForTest(test::seedTrace(), QStringLiteral("valkey-9.1"), QStringLiteral("64,128"), false);
        for (const auto& point : result.points) {
            model.setPoint(point);
            QCOMPARE(std::size_t(model.rowCount()), point.sizeClasses.size());
            std::uint64_t usable = 0, waste = 0, payload = 0, header = 0;
            for (int r = 0; r < model.rowCount(); ++r) {
                usable += model.data(model.index(r, SizeClassTableModel::UsableBytes), Qt::EditRole).toULongLong();
                waste += model.data(model.index(r, SizeClassTableModel::WasteBytes), Qt::EditRole).toULongLong();
                payload += model.data(model.index(r, SizeClassTableModel::PayloadBytes), Qt::EditRole).toULongLong();
                header += model.data(model.index(r, SizeClassTableModel::HeaderBytes), Qt::EditRole).toULongLong();
            }
            QCOMPARE(usable, point.usableBytes);
            QCOMPARE(waste, point.internalFragmentationBytes);
            QCOMPARE(payload, point.payloadBytes); // every key and value byte sits in some class
            QCOMPARE(payload + header + waste, point.usableBytes);
        }
    }

    void sizeClassModelShowsAMemcachedBudgetsPagesAndEvictions() {
        // What `sim --memory-limit` gives each class (held pages, items evicted) is in the table's last columns.
        SizeClassTableModel model;
        ThresholdPoint point;
        point.budget = BudgetUsage {};
        SizeClassUsage c;
        c.classBytes = 192;
        c.heldSlabs = 7;
        c.evictions = 33773;
        point.sizeClasses = { c };
        model.setPoint(point);
        QCOMPARE(model.data(model.index(0, SizeClassTableModel::HeldSlabs), Qt::EditRole).toULongLong(), 7ull);
        QCOMPARE(model.data(model.index(0, SizeClassTableModel::Evictions), Qt::EditRole).toULongLong(), 33773ull);
        QCOMPARE(
            model.headerData(SizeClassTableModel::Evictions, Qt::Horizontal).toString(), QStringLiteral("Evicted"));
    }

    void libraryModelsListTheDatabase() {
        QTemporaryDir dir;
        const std::string dbPath = dir.filePath(QStringLiteral("library.db")).toStdString();
        auto db = ResultsDb::open(dbPath);
        QVERIFY(db);
        auto models = parseLayoutAndAllocator("valkey-9.1", "");
        QVERIFY(models);
        SimulationJob job;
        job.tracePath = test::seedTrace().toStdString();
        job.config.layout = models->layout;
        job.config.allocator = models->allocator;
        job.config.thresholds = { 64, 128 };
        auto outcome = runSimulationJob(job, db->get());
        QVERIFY(outcome);

        TracesTableModel traces;
        RunsTableModel runs;
        QAbstractItemModelTester tracesTester(&traces, QAbstractItemModelTester::FailureReportingMode::Fatal);
        QAbstractItemModelTester runsTester(&runs, QAbstractItemModelTester::FailureReportingMode::Fatal);
        auto traceList = (*db)->listTraces();
        auto runList = (*db)->listRuns();
        QVERIFY(traceList && runList);
        traces.setRecords(*traceList);
        runs.setRecords(*runList);
        QCOMPARE(traces.rowCount(), 1);
        QCOMPARE(traces.data(traces.index(0, TracesTableModel::Format)).toString(), QStringLiteral("layoutlab"));
        QCOMPARE(runs.rowCount(), 1);
        QCOMPARE(runs.data(runs.index(0, RunsTableModel::Id)).toLongLong(), outcome->runId);
        QCOMPARE(runs.data(runs.index(0, RunsTableModel::Status)).toString(), QStringLiteral("complete"));
        QCOMPARE(runs.data(runs.index(0, RunsTableModel::Points), Qt::EditRole).toULongLong(), 2ull);
    }
};

QTEST_MAIN(ModelsTest)
#include "models_test.moc"
