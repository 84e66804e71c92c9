// SPDX-License-Identifier: MIT
// The predicted memory stall per GET in the Sweep view, offscreen: a sweep that measures this machine's
// load latencies first shows each threshold's stall and the change to the leanest, keeps the latencies with
// the run, and shows the same again when the run is opened from the library.

#include "gui_test_support.h"
#include "library_page.h"
#include "main_window.h"
#include "result_models.h"
#include "sweep_page.h"
#include "task_runner.h"

#include "layoutlab/report/get_time.h"
#include "layoutlab/store/results_db.h"
#include "layoutlab/store/run_parameters.h"
#include "layoutlab/store/stored_run.h"

#include <QCheckBox>
#include <QLabel>
#include <QSpinBox>
#include <QTest>

#include <nlohmann/json.hpp>

#include <memory>

using namespace layoutlab;
using namespace layoutlab::gui;

class StallTest : public QObject {
    Q_OBJECT
private slots:
    void init() { m_scratch = std::make_unique<test::Scratch>(); }
    void cleanup() { m_scratch.reset(); }

    void sweepWithTheStallBoxPredictsAndKeepsIt() {
        MainWindow window(m_scratch->database());
        SweepPage* sweep = window.sweepPage();
        sweep->cacheBox()->setChecked(false);
        QVERIFY(!sweep->stallBox()->isEnabled()); // the stall comes from the cache model's misses
        sweep->cacheBox()->setChecked(true);
        QVERIFY(sweep->stallBox()->isEnabled());
        QVERIFY(!sweep->getPipelineBox()->isEnabled());
        sweep->stallBox()->setChecked(true);
        // Ten pipelined GETs, which Valkey 9.1 (the page's layout) looks up together.
        QVERIFY(sweep->getPipelineBox()->isEnabled());
        sweep->getPipelineBox()->setValue(10);
        test::sweepSeed(window, QStringLiteral("64,128"), true);

        const auto& model = sweep->model();
        const int stall = model.columnOf(QStringLiteral("stall_ns"));
        QVERIFY2(stall > 0, "the sweep shows a stall column");
        QVERIFY(model.latencies().has_value());
        QCOMPARE(model.latencies()->overlappedLookups, 10u);
        for (int r = 0; r < model.rowCount(); ++r)
            QCOMPARE(
                model.value(r, stall), predictStall(model.result().points[std::size_t(r)], *model.latencies())->ns);
        QVERIFY2(
            sweep->summaryText().contains(QStringLiteral("Memory stall per GET")), qPrintable(sweep->summaryText()));

        // Kept with the run: opening it again shows the same stall, with no new measurement.
        const auto& runs = window.libraryPage()->runs().all();
        QCOMPARE(runs.size(), std::size_t(1));
        auto db = ResultsDb::open(m_scratch->database().toStdString());
        QVERIFY(db.hasValue());
        auto stored = loadStoredRun(**db, runs[0].id);
        QVERIFY(stored.hasValue());
        const auto parameters = RunParameters::fromJson(stored->run.parametersJson);
        QVERIFY(parameters.hasValue() && parameters->extra.contains("load_latencies"));
        const double shown = model.value(0, stall);
        sweep->stallBox()->setChecked(false);
        sweep->getPipelineBox()->setValue(1);
        sweep->showStoredRun(*stored);
        QVERIFY(sweep->stallBox()->isChecked());
        QCOMPARE(sweep->getPipelineBox()->value(), 10);
        QCOMPARE(sweep->model().value(0, sweep->model().columnOf(QStringLiteral("stall_ns"))), shown);
    }

private:
    std::unique_ptr<test::Scratch> m_scratch;
};

QTEST_MAIN(StallTest)
#include "stall_test.moc"
