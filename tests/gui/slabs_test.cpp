// SPDX-License-Identifier: MIT
// The slab model in the Sweep view, offscreen: a sweep with "Allocator's pages" checked charts active bytes
// per key beside allocated on axes fitted to each, and the timeline of allocated beside active bytes at
// the cursor's threshold, the same figures the CLI's `sweep --slabs --timeline` gives.

#include "chart_panel.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "result_models.h"
#include "sweep_page.h"
#include "task_runner.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QTest>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <nlohmann/json.hpp>

#include <memory>

using namespace layoutlab;
using namespace layoutlab::gui;

namespace {
QLineSeries* seriesNamed(QChart* chart, const QString& name) {
    for (QAbstractSeries* s : chart->series())
        if (s->name() == name)
            return qobject_cast<QLineSeries*>(s);
    return nullptr;
}
} // namespace

class SlabsTest : public QObject {
    Q_OBJECT
private slots:
    void init() { m_scratch = std::make_unique<test::Scratch>(); }
    void cleanup() { m_scratch.reset(); }

    void activeBytesAndTheTimelineAreChartedAsTheCliGivesThem() {
        // Keys loaded, then deletes: the allocator keeps most slabs while the keys go.
        const QString trace = m_scratch->path(QStringLiteral("churn.lltrace"));
        const auto gen = test::runCli({ QStringLiteral("gen"), QStringLiteral("-o"), trace, QStringLiteral("--keys"),
            QStringLiteral("20000"), QStringLiteral("--ops"), QStringLiteral("14000"), QStringLiteral("--get-fraction"),
            QStringLiteral("0"), QStringLiteral("--delete-fraction"), QStringLiteral("1"), QStringLiteral("--seed"),
            QStringLiteral("3") });
        QCOMPARE(gen.exitCode, 0);
        MainWindow window(m_scratch->database());
        window.openTrace(trace);
        QVERIFY(window.runner().waitForIdle(60000));
        SweepPage* sweep = window.sweepPage();
        QVERIFY(sweep->timelineChart()->isHidden());
        sweep->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
        sweep->allocatorBox()->setCurrentText(QString());
        sweep->thresholdsEdit()->setText(QStringLiteral("48:160:16"));
        sweep->cacheBox()->setChecked(false);
        sweep->slabsBox()->setChecked(true);
        QString error;
        QVERIFY2(sweep->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));

        // The CLI's figures for the same sweep.
        const auto cli
            = test::runCli({ QStringLiteral("sweep"), trace, QStringLiteral("--layout"), QStringLiteral("valkey-9.1"),
                QStringLiteral("--thresholds"), QStringLiteral("48:160:16"), QStringLiteral("--timeline"),
                QString::number(SweepPage::kTimelineSamples), QStringLiteral("--json"), QStringLiteral("--no-db") });
        QCOMPARE(cli.exitCode, 0);
        const auto j = nlohmann::json::parse(cli.out.toStdString());
        const auto& model = sweep->model();
        const int active = model.columnOf(QStringLiteral("active_bytes_per_key"));
        QVERIFY2(active > 0, "the sweep table has active bytes per key");
        for (int r = 0; r < model.rowCount(); ++r)
            QVERIFY(std::abs(model.value(r, active) - j["points"][r]["active_bytes_per_key"].get<double>()) < 1e-3);

        // The memory chart: allocated on the left, active on a right axis fitted to its line (not from zero).
        QChart* memory = sweep->charts()[0]->chart();
        QLineSeries* activeLine = seriesNamed(memory, QStringLiteral("active per key"));
        QVERIFY(activeLine);
        const auto axes = activeLine->attachedAxes();
        QValueAxis* right = nullptr;
        for (QAbstractAxis* a : axes)
            if (a->alignment() == Qt::AlignRight)
                right = qobject_cast<QValueAxis*>(a);
        QVERIFY(right);
        double low = 1e300;
        for (const QPointF& p : activeLine->points())
            low = std::min(low, p.y());
        QVERIFY2(right->min() > 0.5 * low, "the active axis is fitted to its line");
        QVERIFY(right->min() <= low && right->max() >= low);

        // The timeline: shown, and at the cursor's threshold the CLI's samples.
        QVERIFY(!sweep->timelineChart()->isHidden());
        sweep->setCursorThreshold(128);
        QChart* timeline = sweep->timelineChart()->chart();
        QVERIFY2(timeline->title().contains(QStringLiteral("threshold 128")), qPrintable(timeline->title()));
        QLineSeries* activeOverTime = seriesNamed(timeline, QStringLiteral("active"));
        QLineSeries* keys = seriesNamed(timeline, QStringLiteral("live keys"));
        QVERIFY(activeOverTime && keys);
        const auto& samples = j["timeline"]["samples"];
        QCOMPARE(qsizetype(activeOverTime->count()), qsizetype(samples.size()));
        std::size_t at128 = 0;
        for (std::size_t i = 0; i < j["timeline"]["thresholds"].size(); ++i)
            if (j["timeline"]["thresholds"][i] == 128)
                at128 = i;
        double largest = 0;
        for (const auto& sample : samples)
            largest = std::max({ largest, sample["active_bytes"][at128].get<double>(),
                sample["allocated_bytes"][at128].get<double>() });
        const double divisor = byteUnit(largest).divisor; // the chart's unit
        for (std::size_t k = 0; k < samples.size(); ++k) {
            QCOMPARE(activeOverTime->at(int(k)).x(), samples[k]["requests"].get<double>());
            QVERIFY(std::abs(activeOverTime->at(int(k)).y() - samples[k]["active_bytes"][at128].get<double>() / divisor)
                < 1e-9);
            QCOMPARE(keys->at(int(k)).y(), samples[k]["live_keys"].get<double>());
        }
        // The deletes take the keys down; the active bytes stay.
        QVERIFY(keys->points().back().y() < 0.7 * keys->points()[int(samples.size() / 2)].y());
        // Kept in the settings, and the CSV of the timeline chart is its data.
        sweep->saveSettings();
        sweep->slabsBox()->setChecked(false);
        sweep->restoreSettings();
        QVERIFY(sweep->slabsBox()->isChecked());
        const QString csv = m_scratch->path(QStringLiteral("timeline.csv"));
        QVERIFY(writeCsv(*sweep->timelineChart()->dataModel(), csv));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll().count('\n'), qsizetype(samples.size() + 1));
    }

private:
    std::unique_ptr<test::Scratch> m_scratch;
};

QTEST_MAIN(SlabsTest)
#include "slabs_test.moc"
