// SPDX-License-Identifier: MIT
// The main flows of layoutlab-gui, offscreen: open the bundled dataset, sweep it and compare the chart
// series with what the CLI prints, cancel a long sweep, show an import error as the CLI words it, export
// charts, keep choices across sessions, render the screenshots.

#include "chart_panel.h"
#include "compare_page.h"
#include "engine_page.h"
#include "generate_dialog.h"
#include "gui_test_support.h"
#include "job_actions.h"
#include "library_page.h"
#include "main_window.h"
#include "readable_palette.h"
#include "screenshot_tour.h"
#include "size_class_page.h"
#include "sweep_page.h"
#include "task_runner.h"
#include "workload_page.h"

#include "layoutlab/store/results_db.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPalette>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

using namespace layoutlab;
using namespace layoutlab::gui;

namespace {
// The first series of `panel` named `name`.
QLineSeries* seriesNamed(ChartPanel* panel, const QString& name) {
    for (auto* s : panel->chart()->series())
        if (s->name() == name)
            return qobject_cast<QLineSeries*>(s);
    return nullptr;
}

// The lightness of a chart's background as exported: a pixel of the top margin, mid-width.
int backgroundLightness(ChartPanel* chart) {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("chart.png"));
    if (!chart->exportPng(png, QSize(800, 400), 1))
        return -1;
    return QImage(png).pixelColor(400, 3).lightness();
}

// The Engine view with the seed dataset open, set to drive `engine` with a run phase of `runRequests` GETs
// (nullptr when the trace did not open).
EnginePage* seedInEngineView(MainWindow& window, const QString& engine, int runRequests) {
    window.openTrace(test::seedTrace());
    if (!window.runner().waitForIdle(60000))
        return nullptr;
    EnginePage* page = window.enginePage();
    page->engineBox()->setCurrentText(engine);
    page->runRequestsBox()->setValue(runRequests);
    return page;
}

} // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        // The profile's replay runs this build's `layoutlab` under cachegrind.
        qputenv("LAYOUTLAB_CLI", QByteArrayLiteral(LAYOUTLAB_CLI));
    }
    void init() {
        m_dir = std::make_unique<QTemporaryDir>();
        test::useScratchSettings(*m_dir);
        m_db = m_dir->filePath(QStringLiteral("gui.db"));
    }
    void cleanup() {
        // Dialogs left open by a test must not leak into the next one.
        for (QWidget* w : QApplication::topLevelWidgets())
            if (qobject_cast<QMessageBox*>(w))
                w->close();
        m_dir.reset();
    }

    void sweepChartsHoldWhatTheCliPrints() {
        MainWindow window(m_db);
        test::sweepSeed(window, QStringLiteral("16:256:16"), true);
        const auto cli = test::runCli({ QStringLiteral("sweep"), test::seedTrace(), QStringLiteral("--layout"),
            QStringLiteral("valkey-9.1"), QStringLiteral("--thresholds"), QStringLiteral("16:256:16"),
            QStringLiteral("--cache"), QStringLiteral("--json"), QStringLiteral("--no-db") });
        QCOMPARE(cli.exitCode, 0);
        const QJsonArray points = QJsonDocument::fromJson(cli.out).object().value(QStringLiteral("points")).toArray();
        QCOMPARE(points.size(), 16);

        const auto charts = window.sweepPage()->charts();
        struct Check {
            ChartPanel* chart;
            QString series;
            QString cliName;
        };
        const Check checks[] {
            { charts[0], QStringLiteral("bytes per key"), QStringLiteral("usable_bytes_per_key") },
            { charts[0], QStringLiteral("overhead per key"), QStringLiteral("overhead_bytes_per_key") },
            { charts[2], QStringLiteral("lines touched"), QStringLiteral("lines_touched_per_get") },
            { charts[2], QStringLiteral("dependent loads"), QStringLiteral("dependent_loads_per_get") },
            { charts[3], QStringLiteral("LLC"), QStringLiteral("llc_misses_per_get") },
            { charts[3], QStringLiteral("L1"), QStringLiteral("l1_misses_per_get") },
        };
        for (const Check& c : checks) {
            QLineSeries* series = seriesNamed(c.chart, c.series);
            QVERIFY2(series, qPrintable(c.series));
            QCOMPARE(series->count(), points.size());
            for (int i = 0; i < points.size(); ++i) {
                const QJsonObject p = points[i].toObject();
                QCOMPARE(series->at(i).x(), p.value(QStringLiteral("threshold")).toDouble());
                // The CLI rounds to 4 decimals.
                QVERIFY2(std::abs(series->at(i).y() - p.value(c.cliName).toDouble()) < 0.5e-4 + 1e-9,
                    qPrintable(QStringLiteral("%1 at %2: chart %3, CLI %4")
                                   .arg(c.cliName)
                                   .arg(i)
                                   .arg(series->at(i).y())
                                   .arg(p.value(c.cliName).toDouble())));
            }
        }
        QLineSeries* waste = seriesNamed(charts[1], QStringLiteral("internal fragmentation"));
        QVERIFY(waste);
        for (int i = 0; i < points.size(); ++i) {
            const QJsonObject p = points[i].toObject();
            const double perKey = p.value(QStringLiteral("internal_fragmentation_bytes")).toDouble()
                / p.value(QStringLiteral("keys")).toDouble();
            QVERIFY(std::abs(waste->at(i).y() - perKey) < 1e-9);
        }
        // Markers at 64, 128 and the leanest threshold.
        const auto& result = window.sweepPage()->model().result();
        const auto leanest = result.points[leanestPoint(result.points)].threshold;
        QCOMPARE(leanest, 128u); // the seed case: 16-byte keys, 96-byte values embed at 128
        QLineSeries* at64 = seriesNamed(charts[0], QStringLiteral("64"));
        QLineSeries* atBest = seriesNamed(charts[0], QStringLiteral("128 = leanest"));
        QVERIFY(at64 && atBest);
        QVERIFY(at64->pen().style() != atBest->pen().style()); // told apart without colour
        // Each marker is labelled on the chart, not only in the legend.
        QStringList labels;
        for (auto* series : charts[0]->chart()->series())
            if (auto* label = qobject_cast<QScatterSeries*>(series); label && label->pointLabelsVisible())
                labels << label->pointLabelsFormat();
        labels.sort();
        QCOMPARE(labels, (QStringList { QStringLiteral("128 = leanest"), QStringLiteral("64") }));
        // One quantity per axis: both memory lines on one bytes-per-key axis; lines touched and dependent
        // loads on axes of their own.
        auto yAxisOf = [](QLineSeries* series) {
            for (QAbstractAxis* axis : series->attachedAxes())
                if (axis->orientation() == Qt::Vertical)
                    return axis;
            return static_cast<QAbstractAxis*>(nullptr);
        };
        QCOMPARE(yAxisOf(seriesNamed(charts[0], QStringLiteral("bytes per key"))),
            yAxisOf(seriesNamed(charts[0], QStringLiteral("overhead per key"))));
        QVERIFY(yAxisOf(seriesNamed(charts[2], QStringLiteral("lines touched")))
            != yAxisOf(seriesNamed(charts[2], QStringLiteral("dependent loads"))));
        // The first and last thresholds sit inside the x axis, not on its edge.
        for (auto* axis : charts[0]->chart()->axes(Qt::Horizontal)) {
            auto* x = qobject_cast<QValueAxis*>(axis);
            QVERIFY(x && x->min() < 16 && x->max() > 256);
        }
        QVERIFY(charts[0]->chart()->title().contains(QStringLiteral("hash index included")));
        // The seed case: at 128 the value is embedded, one dependent load fewer than at 64.
        QLineSeries* loads = seriesNamed(charts[2], QStringLiteral("dependent loads"));
        QVERIFY(loads->at(7).y() < loads->at(3).y()); // thresholds 128 and 64

        // The run is stored, the library lists it, and the size-class view follows the sweep.
        QCOMPARE(window.libraryPage()->runs().rowCount(), 1);
        QCOMPARE(QString::fromStdString(window.libraryPage()->runs().run(0).status), QStringLiteral("complete"));
        QCOMPARE(window.sizeClassPage()->thresholdBox()->count(), 16);
        window.sizeClassPage()->showThreshold(128);
        QCOMPARE(window.sizeClassPage()->thresholdBox()->currentText(), QStringLiteral("128"));
        QVERIFY(window.sizeClassPage()->model().rowCount() > 0);
    }

    void storedRunReopensWithTheSamePoints() {
        MainWindow window(m_db);
        test::sweepSeed(window, QStringLiteral("64,128"), false);
        const auto before = window.sweepPage()->model().result().points;
        window.sweepPage()->showResult({});
        QCOMPARE(window.sweepPage()->model().rowCount(), 0);
        // Choices made since are not the run's: showing it puts its own back in the form.
        window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("redis-7.0"));
        window.sweepPage()->thresholdsEdit()->setText(QStringLiteral("16:48:16"));
        window.sweepPage()->cacheBox()->setChecked(true);
        window.showRun(window.libraryPage()->runs().run(0).id);
        QVERIFY(window.sweepPage()->layoutBox()->currentText().startsWith(QStringLiteral("valkey:")));
        QCOMPARE(window.sweepPage()->thresholdsEdit()->text(), QStringLiteral("64,128"));
        QVERIFY(!window.sweepPage()->cacheBox()->isChecked());
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        const auto after = window.sweepPage()->model().result().points;
        QCOMPARE(after.size(), before.size());
        for (std::size_t i = 0; i < after.size(); ++i) {
            QCOMPARE(after[i].threshold, before[i].threshold);
            QCOMPARE(after[i].usableBytes, before[i].usableBytes);
            QCOMPARE(after[i].sizeClasses, before[i].sizeClasses);
        }
    }

    void engineViewPutsMeasuredBesidePredicted_data() {
        QTest::addColumn<QString>("engine");
        QTest::addColumn<QString>("binary");
        QTest::newRow("redis") << QStringLiteral("redis") << QStringLiteral("redis-server");
        QTest::newRow("memcached") << QStringLiteral("memcached") << QStringLiteral("memcached");
    }
    void engineViewPutsMeasuredBesidePredicted() {
        QFETCH(QString, engine);
        QFETCH(QString, binary);
        if (QStandardPaths::findExecutable(binary).isEmpty())
            QSKIP(qPrintable(QStringLiteral("%1 is not on PATH (scripts/install-deps installs it)").arg(binary)));
        MainWindow window(m_db);
        EnginePage* page = seedInEngineView(window, engine, 20000);
        QVERIFY(page);
        QSignalSpy progressed(&window.runner(), &TaskRunner::progressed);
        QString error;
        QVERIFY2(page->startDrive(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(180000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        QVERIFY(progressed.count() > 0); // the load reported its progress
        const QJsonObject report = page->report();
        QCOMPARE(report.value(QStringLiteral("engine")).toString(), engine);
        // The table shows the report's figures; the model matches the real server within 1%.
        const auto& table = page->comparison();
        // The figure says whether the hash index is in it (memcached's chunks hold items only).
        QCOMPARE(table.item(0, 0)->text(),
            engine == QLatin1String("memcached") ? QStringLiteral("Chunk bytes per item (hash index not included)")
                                                 : QStringLiteral("Bytes per key (used_memory, hash index included)"));
        const double measured = table.item(0, 1)->data(Qt::UserRole).toDouble();
        const double predicted = table.item(0, 2)->data(Qt::UserRole).toDouble();
        QCOMPARE(measured, report.value(QStringLiteral("measured_bytes_per_key")).toDouble());
        QCOMPARE(predicted, report.value(QStringLiteral("predicted_bytes_per_key")).toDouble());
        QVERIFY2(std::abs(predicted - measured) <= 0.01 * measured,
            qPrintable(QStringLiteral("measured %1, predicted %2").arg(measured).arg(predicted)));
        QVERIFY(report.value(QStringLiteral("run")).toObject().value(QStringLiteral("ops_per_sec")).toDouble() > 0);
        // The allocator's figures beside them: rows 2 and 3 (allocated, then active), as the report has them.
        QCOMPARE(table.item(3, 1)->data(Qt::UserRole).toDouble(),
            report.value(QStringLiteral("measured_active_bytes")).toDouble());
        QCOMPARE(table.item(3, 2)->data(Qt::UserRole).toDouble(),
            report.value(QStringLiteral("predicted_active_bytes")).toDouble());
        QVERIFY(table.item(3, 0)->text().contains(engine == QLatin1String("memcached")
                ? QStringLiteral("total_malloced")
                : QStringLiteral("allocator_active")));
        for (ChartPanel* chart : page->charts())
            QVERIFY(!chart->chart()->series().isEmpty());
        // Both runs are stored, and the library shows them.
        int drives = 0;
        for (const auto& run : window.libraryPage()->runs().all())
            drives += run.kind == "drive" && run.status == "complete";
        QCOMPARE(drives, 1);
    }

    // No label shows a mnemonic's '&' as a literal: a label with one has a buddy that takes the shortcut.
    void noLabelShowsALiteralAmpersand() {
        MainWindow window(m_db);
        GenerateDialog dialog(&window);
        for (QWidget* root : { static_cast<QWidget*>(&window), static_cast<QWidget*>(&dialog) })
            for (QLabel* label : root->findChildren<QLabel*>()) {
                const QString text = label->text();
                const bool rich = label->textFormat() == Qt::RichText
                    || (label->textFormat() == Qt::AutoText && Qt::mightBeRichText(text));
                if (rich || !text.contains(QRegularExpression(QStringLiteral("&[^&\\s]"))))
                    continue;
                QVERIFY2(label->buddy(), qPrintable(QStringLiteral("a literal '&' in \"%1\"").arg(text)));
            }
    }

    // Under a dark palette the charts are dark too (white charts with dark labels on it are unreadable).
    void chartsFollowADarkPalette() {
        const QPalette light = QApplication::palette();
        QPalette dark = light;
        dark.setColor(QPalette::Window, QColor(0x30, 0x30, 0x30));
        dark.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
        dark.setColor(QPalette::Base, QColor(0x20, 0x20, 0x20));
        dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
        QApplication::setPalette(dark);
        {
            MainWindow window(m_db);
            test::sweepSeed(window, QStringLiteral("64,128"), false);
            for (ChartPanel* chart : window.sweepPage()->charts())
                QCOMPARE(chart->chart()->theme(), QChart::ChartThemeDark);
            QVERIFY(backgroundLightness(window.sweepPage()->charts().front()) < 128);
            // Placeholders stand out from the dark fields (the light palette's grey would not).
            for (QLineEdit* edit : window.findChildren<QLineEdit*>()) {
                const QPalette& p = edit->palette();
                const QColor shown = blended(p.color(QPalette::PlaceholderText), p.color(QPalette::Base));
                QVERIFY2(std::abs(shown.lightnessF() - p.color(QPalette::Base).lightnessF()) >= 0.3,
                    qPrintable(edit->placeholderText()));
            }
        }
        QApplication::setPalette(light);
        MainWindow window(m_db);
        test::sweepSeed(window, QStringLiteral("64,128"), false);
        QCOMPARE(window.sweepPage()->charts().front()->chart()->theme(), QChart::ChartThemeLight);
        QVERIFY(backgroundLightness(window.sweepPage()->charts().front()) > 128);
    }

    // Latencies in a unit that keeps their numbers readable, on a log scale when they span decades.
    void latencyChartPicksItsUnitAndScale() {
        MainWindow window(m_db);
        EnginePage* page = window.enginePage();
        auto report = [](double p50, double p99, double p999) {
            QJsonObject latency { { QStringLiteral("p50"), p50 }, { QStringLiteral("p99"), p99 },
                { QStringLiteral("p99.9"), p999 } };
            QJsonObject run { { QStringLiteral("latency_us"), latency }, { QStringLiteral("ops_per_sec"), 1000.0 },
                { QStringLiteral("connections"), 4 }, { QStringLiteral("pipeline"), 16 } };
            return QJsonObject { { QStringLiteral("engine"), QStringLiteral("redis") }, { QStringLiteral("run"), run },
                { QStringLiteral("measured_bytes_per_key"), 100.0 },
                { QStringLiteral("predicted_bytes_per_key"), 100.0 } };
        };
        auto yAxis = [&]() {
            const auto axes = page->charts()[1]->chart()->axes(Qt::Vertical);
            return axes.isEmpty() ? nullptr : axes.front();
        };
        page->showReport(report(52.0, 4100.0, 318767.0)); // 52 µs to 319 ms
        QVERIFY(qobject_cast<QLogValueAxis*>(yAxis()));
        QVERIFY2(yAxis()->titleText().contains(QStringLiteral("(ms)")), qPrintable(yAxis()->titleText()));
        bool msRow = false;
        for (int r = 0; r < page->comparison().rowCount(); ++r)
            msRow = msRow || page->comparison().item(r, 0)->text() == QStringLiteral("Latency p99.9 (ms)");
        QVERIFY(msRow);
        page->showReport(report(120.0, 180.0, 260.0)); // all within one decade, in µs
        QVERIFY(qobject_cast<QValueAxis*>(yAxis()));
        QVERIFY2(yAxis()->titleText().contains(QStringLiteral("(µs)")), qPrintable(yAxis()->titleText()));
    }

    // The threshold cursor: a click on any chart puts it at the nearest threshold; every chart draws it, the
    // table selects its row, its figures show, and the size classes follow. Picking a row moves it too.
    void aClickPutsTheThresholdCursorEverywhere() {
        MainWindow window(m_db);
        window.resize(1280, 800);
        window.show();
        test::sweepSeed(window, QStringLiteral("16:256:16"), false);
        window.tabs()->setCurrentWidget(window.sweepPage());
        QApplication::processEvents();
        ChartPanel* panel = window.sweepPage()->charts()[2];
        QChart* chart = panel->chart();
        const QPointF inPlot = chart->mapToPosition(QPointF(97, 0)); // nearest swept threshold: 96
        const QPoint at = panel->mapFromScene(QPointF(inPlot.x(), chart->plotArea().center().y()));
        QTest::mouseClick(panel->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(window.sweepPage()->cursorThreshold(), std::optional<std::uint32_t>(96));
        for (ChartPanel* c : window.sweepPage()->charts()) {
            QLineSeries* cursor = nullptr;
            for (auto* series : c->chart()->series())
                if (series->objectName() == QLatin1String("cursor"))
                    cursor = qobject_cast<QLineSeries*>(series);
            QVERIFY2(cursor, qPrintable(c->exportName()));
            QCOMPARE(cursor->at(0).x(), 96.0);
        }
        QCOMPARE(window.sweepPage()->findChild<QTableView*>()->currentIndex().row(), 5); // 16, 32, ... 96
        QVERIFY(window.sweepPage()->cursorText().contains(QStringLiteral("Cursor at 96")));
        QCOMPARE(window.sizeClassPage()->thresholdBox()->currentText(), QStringLiteral("96"));
        // A row picked in the table moves it.
        auto* table = window.sweepPage()->findChild<QTableView*>();
        table->setCurrentIndex(table->model()->index(7, 0)); // 128
        QCOMPARE(window.sweepPage()->cursorThreshold(), std::optional<std::uint32_t>(128));
        QCOMPARE(window.sizeClassPage()->thresholdBox()->currentText(), QStringLiteral("128"));
    }

    // memcached's slab classes, many with long sizes, get slanted labels instead of overlapping, cut ones.
    void manySlabClassLabelsAreSlanted() {
        MainWindow window(m_db);
        QJsonArray classes;
        for (double chunk = 96; chunk <= 524288; chunk *= 1.9)
            classes.append(QJsonObject { { QStringLiteral("chunk_bytes"), std::floor(chunk) },
                { QStringLiteral("measured_chunks"), 10 }, { QStringLiteral("predicted_chunks"), 10 },
                { QStringLiteral("measured_items"), 10 } });
        QVERIFY(classes.size() > 10);
        window.enginePage()->showReport(QJsonObject { { QStringLiteral("engine"), QStringLiteral("memcached") },
            { QStringLiteral("classes"), classes }, { QStringLiteral("measured_bytes_per_key"), 100.0 },
            { QStringLiteral("predicted_bytes_per_key"), 100.0 } });
        const auto axes = window.enginePage()->charts()[0]->chart()->axes(Qt::Horizontal);
        QVERIFY(!axes.isEmpty());
        auto* x = qobject_cast<QBarCategoryAxis*>(axes.front());
        QVERIFY(x);
        QCOMPARE(x->count(), int(classes.size()));
        QCOMPARE(x->labelsAngle(), -45);
    }

    // A sweep over thresholds that embed nothing names no leanest threshold and says so.
    void aFlatSweepSaysTheThresholdHasNoEffect() {
        MainWindow window(m_db);
        test::sweepSeed(window, QStringLiteral("16:48:16"), false); // 96-byte values never embed below 48
        QVERIFY(!seriesNamed(window.sweepPage()->charts()[0], QStringLiteral("leanest (16)")));
        for (auto* series : window.sweepPage()->charts()[0]->chart()->series())
            QVERIFY2(!series->name().contains(QStringLiteral("leanest")), qPrintable(series->name()));
        QVERIFY(window.sweepPage()->summaryText().contains(QStringLiteral("no effect in this range")));
    }

    // The status bar names the phase, gives its percentage and, after a second of it, the time left,
    // timed from the phase's own start.
    void statusBarGivesPhasePercentageAndTimeLeft() {
        MainWindow window(m_db);
        TaskRunner& runner = window.runner();
        emit runner.progressed(-1.0, QStringLiteral("load"), QStringLiteral("load"));
        QVERIFY2(window.statusText().contains(QStringLiteral("load")), qPrintable(window.statusText()));
        emit runner.progressed(0.5, QStringLiteral("load: 10 requests"), QStringLiteral("load"));
        QVERIFY2(window.statusText().contains(QStringLiteral("50%")), qPrintable(window.statusText()));
        QVERIFY(!window.statusText().contains(QStringLiteral("left"))); // too soon to tell
        QTest::qWait(1200);
        emit runner.progressed(0.25, QStringLiteral("load: 5 requests"), QStringLiteral("load"));
        QVERIFY2(window.statusText().contains(QStringLiteral("25%")), qPrintable(window.statusText()));
        QVERIFY2(window.statusText().contains(QStringLiteral("left")), qPrintable(window.statusText()));
        // A new phase starts its own clock: no time left until a second of it has passed.
        emit runner.progressed(0.5, QStringLiteral("run"), QStringLiteral("run"));
        QVERIFY(!window.statusText().contains(QStringLiteral("left")));
    }

    void cancelStopsALongSweep() {
        const QString trace = m_dir->filePath(QStringLiteral("long.lltrace"));
        test::writeSyntheticTrace(trace, 400000, 12000000);
        MainWindow window(m_db);
        window.sweepPage()->setTracePath(trace);
        window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
        window.sweepPage()->thresholdsEdit()->setText(QStringLiteral("16:512:16"));
        window.sweepPage()->cacheBox()->setChecked(true);
        QSignalSpy progressed(&window.runner(), &TaskRunner::progressed);
        QSignalSpy finished(&window.runner(), &TaskRunner::finished);
        QString error;
        QVERIFY2(window.sweepPage()->startSweep(&error), qPrintable(error));
        // The page says it is running; the status bar gives the percentage (the time left is timed in
        // statusBarGivesPhasePercentageAndTimeLeft: how soon it shows depends on the machine).
        QVERIFY(window.sweepPage()->summaryText().startsWith(QStringLiteral("Sweeping long.lltrace")));
        QVERIFY(progressed.wait(30000)); // under way
        QVERIFY2(window.statusText().contains(QLatin1Char('%')), qPrintable(window.statusText()));
        window.runner().cancel();
        QVERIFY2(window.runner().waitForIdle(10000), "the sweep did not stop within 10 s of Cancel");
        QVERIFY(window.sweepPage()->summaryText().startsWith(QStringLiteral("The sweep was cancelled.")));
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.front().at(2).toBool(), true); // cancelled
        QCOMPARE(window.sweepPage()->model().rowCount(), 0); // no result shown
        auto db = ResultsDb::open(m_db.toStdString());
        QVERIFY(db);
        auto runs = (*db)->listRuns();
        QVERIFY(runs);
        QCOMPARE(runs->size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(runs->front().status), QStringLiteral("interrupted"));
    }

    // The drive job runs on the runner's thread like a sweep: its phases show as progress, Cancel stops it
    // within seconds, the server it started goes with it, and its two runs are marked interrupted.
    void cancelStopsADriveAndItsServer() {
        if (QStandardPaths::findExecutable(QStringLiteral("redis-server")).isEmpty())
            QSKIP("redis-server is not on PATH (scripts/install-deps installs it)");
        MainWindow window(m_db);
        EnginePage* page
            = seedInEngineView(window, QStringLiteral("redis"), 100000000); // a run phase far longer than the test
        QVERIFY(page);
        QStringList phases;
        connect(&window.runner(), &TaskRunner::progressed, this, [&phases](double, const QString& detail) {
            const QString phase = detail.section(QLatin1Char(':'), 0, 0);
            if (phases.isEmpty() || phases.back() != phase)
                phases.append(phase);
        });
        QSignalSpy finished(&window.runner(), &TaskRunner::finished);
        QString error;
        QVERIFY2(page->startDrive(&error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(phases.contains(QStringLiteral("run")), 120000);
        QVERIFY2(phases.indexOf(QStringLiteral("load")) >= 0
                && phases.indexOf(QStringLiteral("load")) < phases.indexOf(QStringLiteral("run")),
            qPrintable(phases.join(QStringLiteral(", "))));
        window.runner().cancel();
        QVERIFY2(window.runner().waitForIdle(15000), "the drive did not stop within 15 s of Cancel");
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.front().at(2).toBool(), true); // cancelled
        QVERIFY(page->report().isEmpty()); // nothing shown
        QCOMPARE(test::childProcessesNamed(QStringLiteral("redis-server")), 0);
        auto db = ResultsDb::open(m_db.toStdString());
        QVERIFY(db);
        auto runs = (*db)->listRuns();
        QVERIFY(runs);
        QCOMPARE(runs->size(), std::size_t(2));
        for (const auto& run : *runs)
            QCOMPARE(QString::fromStdString(run.status), QStringLiteral("interrupted"));
    }

    // A drive that fails clears the previous engine's figures and says why, instead of leaving them on show.
    void aFailedDriveClearsThePreviousEnginesResults() {
        if (QStandardPaths::findExecutable(QStringLiteral("memcached")).isEmpty())
            QSKIP("memcached is not on PATH (scripts/install-deps installs it)");
        MainWindow window(m_db);
        EnginePage* page = seedInEngineView(window, QStringLiteral("memcached"), 1000);
        QVERIFY(page);
        QString error;
        QVERIFY2(page->startDrive(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QVERIFY(page->comparison().rowCount() > 0);
        // Now a server that is not there: port 1 on loopback refuses.
        page->engineBox()->setCurrentText(QStringLiteral("redis"));
        page->attachButton()->setChecked(true);
        page->connectEdit()->setText(QStringLiteral("127.0.0.1:1"));
        QVERIFY2(page->startDrive(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(60000));
        QVERIFY(!window.lastError().isEmpty());
        QCOMPARE(page->comparison().rowCount(), 0);
        QVERIFY(page->report().isEmpty());
        QVERIFY2(page->summaryText().contains(QStringLiteral("failed")), qPrintable(page->summaryText()));
    }

    // Run → Run Batch Plan: the batch job on the runner's thread; its summary is the CLI's table, and its
    // runs reach the Library.
    void batchPlanRunsOnTheWorkerAndItsRunsReachTheLibrary() {
        const QString plan = m_dir->filePath(QStringLiteral("plan.json"));
        QFile file(plan);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            QStringLiteral(R"({ "traces": ["%1"], "layouts": ["valkey-9.1", "redis-7.0"], "thresholds": "64,128" })")
                .arg(test::seedTrace())
                .toUtf8());
        file.close();
        MainWindow window(m_db);
        QSignalSpy progressed(&window.runner(), &TaskRunner::progressed);
        QString error;
        QVERIFY2(window.jobs()->startBatch(plan, &error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        QVERIFY2(window.lastReport().contains(QStringLiteral("2 cells: 2 ran")), qPrintable(window.lastReport()));
        QVERIFY(progressed.count() > 0);
        int sweeps = 0;
        for (const auto& run : window.libraryPage()->runs().all())
            sweeps += run.kind == "sweep" && run.status == "complete";
        QCOMPARE(sweeps, 2);
        // Run again: both cells are complete already.
        QVERIFY2(window.jobs()->startBatch(plan, &error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QVERIFY2(
            window.lastReport().contains(QStringLiteral("0 ran, 2 already complete")), qPrintable(window.lastReport()));
    }

    // Run → Profile: the profile job on the runner's thread, against the reference engine; both runs stored.
    void profileRunsOnTheWorkerAndStoresBothRuns() {
        const QString trace = m_dir->filePath(QStringLiteral("small.lltrace"));
        test::writeSyntheticTrace(trace, 2000, 8000);
        MainWindow window(m_db);
        QString error;
        QVERIFY2(window.jobs()->startProfile(trace, QStringLiteral("valkey-9.1"), QStringLiteral("64,128"), &error),
            qPrintable(error));
        QVERIFY(window.runner().waitForIdle(300000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        QVERIFY2(window.lastReport().contains(QStringLiteral("profile of")), qPrintable(window.lastReport()));
        QStringList kinds;
        for (const auto& run : window.libraryPage()->runs().all())
            if (run.status == "complete")
                kinds << QString::fromStdString(run.kind);
        kinds.sort();
        QCOMPARE(kinds, (QStringList { QStringLiteral("profile"), QStringLiteral("reference") }));
        // A layout the reference engine cannot build is refused in the GUI's words.
        QVERIFY(window.jobs()->startProfile(trace, QStringLiteral("memcached-1.6"), QString(), &error));
        QVERIFY(window.runner().waitForIdle(30000));
        QVERIFY2(window.lastError().startsWith(QStringLiteral("Layout: ")), qPrintable(window.lastError()));
    }

    void importErrorShowsTheSameErrorInGuiWords() {
        const QString bad = m_dir->filePath(QStringLiteral("bad.csv"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("1,key1,4,10,1,get,0\n2,key2,4,10,1,frobnicate,0\n");
        file.close();
        MainWindow window(m_db);
        window.openTrace(bad);
        QVERIFY(window.runner().waitForIdle(30000));
        const auto cli
            = test::runCli({ QStringLiteral("import"), bad, QStringLiteral("--stats"), QStringLiteral("--no-db") });
        QCOMPARE(cli.exitCode, 1);
        QVERIFY(!window.lastError().isEmpty());
        // The same error, each front end giving the hint in its own words: the CLI its flag, the GUI what
        // to do (the GUI has no skip option of its own).
        const QString cliText = QString::fromUtf8(cli.err);
        const QString hint = QStringLiteral("; --on-error=skip counts and skips such lines");
        QVERIFY2(cliText.contains(hint), qPrintable(cliText));
        const QString shared = cliText.mid(0, cliText.indexOf(hint)).remove(QStringLiteral("layoutlab: error: "));
        QVERIFY2(window.lastError().startsWith(shared), qPrintable(window.lastError()));
        QVERIFY(window.lastError().contains(QStringLiteral("fix or remove the line")));
        QVERIFY(window.lastError().contains(QStringLiteral("unknown op")));
        QMessageBox* box = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"));
        QVERIFY(box);
        QVERIFY(box->isVisible());
        QCOMPARE(box->text(), window.lastError());
    }

    void importAndGenerateOpenTheirTraces() {
        MainWindow window(m_db);
        // Import: the bundled Twitter sample into a binary trace, opened and recorded with its statistics.
        const QString imported = m_dir->filePath(QStringLiteral("twitter.lltrace"));
        QVERIFY(window.importTrace(QStringLiteral(LAYOUTLAB_DATASETS_DIR "/samples/mixed.twitter.csv"), imported));
        QVERIFY(window.runner().waitForIdle(60000));
        QVERIFY(window.runner().waitForIdle(60000)); // then the opened trace's statistics
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        QVERIFY(QFileInfo(imported).size() > 0);
        QCOMPARE(window.sweepPage()->tracePath(), imported);
        const auto cli = test::runCli(
            { QStringLiteral("import"), QStringLiteral(LAYOUTLAB_DATASETS_DIR "/samples/mixed.twitter.csv"),
                QStringLiteral("--stats"), QStringLiteral("--json"), QStringLiteral("--no-db") });
        QCOMPARE(cli.exitCode, 0);
        const QJsonObject stats = QJsonDocument::fromJson(cli.out).object();
        QVERIFY(window.libraryPage()->traces().rowCount() >= 2); // the CSV and the binary trace
        bool found = false;
        for (int row = 0; row < window.libraryPage()->traces().rowCount(); ++row) {
            const auto& trace = window.libraryPage()->traces().trace(row);
            if (trace.format == "twitter") {
                found = true;
                QCOMPARE(double(trace.requests), stats.value(QStringLiteral("ops")).toDouble());
                QCOMPARE(double(trace.distinctKeys), stats.value(QStringLiteral("distinct_keys")).toDouble());
            }
        }
        QVERIFY(found);

        // Generate: what `gen` writes for the same options, opened.
        const QString generated = m_dir->filePath(QStringLiteral("generated.lltrace"));
        auto config = makeGeneratorConfig(1000, 5000, "16", "uniform:50:200", 0.1, 0, 0.8, 0.05, "zipf:0.9", 3);
        QVERIFY(config);
        QVERIFY(window.generateTrace(*config, generated));
        QVERIFY(window.runner().waitForIdle(60000));
        QVERIFY(window.runner().waitForIdle(60000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        const QString byCli = m_dir->filePath(QStringLiteral("by-cli.lltrace"));
        QCOMPARE(
            test::runCli(
                { QStringLiteral("gen"), QStringLiteral("-o"), byCli, QStringLiteral("--keys"), QStringLiteral("1000"),
                    QStringLiteral("--ops"), QStringLiteral("5000"), QStringLiteral("--value-size"),
                    QStringLiteral("uniform:50:200"), QStringLiteral("--ttl-fraction"), QStringLiteral("0.1"),
                    QStringLiteral("--get-fraction"), QStringLiteral("0.8"), QStringLiteral("--delete-fraction"),
                    QStringLiteral("0.05"), QStringLiteral("--popularity"), QStringLiteral("zipf:0.9"),
                    QStringLiteral("--seed"), QStringLiteral("3") })
                .exitCode,
            0);
        QFile a(generated), b(byCli);
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QVERIFY(a.readAll() == b.readAll());
        QCOMPARE(window.sweepPage()->tracePath(), generated);
    }

    void chartsExportAsPngSvgAndCsv() {
        MainWindow window(m_db);
        window.resize(1280, 800);
        window.show();
        test::sweepSeed(window, QStringLiteral("16:256:16"), false);
        const QString png = m_dir->filePath(QStringLiteral("chart.png"));
        const QString svg = m_dir->filePath(QStringLiteral("chart.svg"));
        const QString csv = m_dir->filePath(QStringLiteral("chart.csv"));
        ChartPanel* chart = window.sweepPage()->charts().front();
        QVERIFY(chart->exportPng(png));
        QVERIFY(chart->exportSvg(svg));
        QVERIFY(chart->exportCsv(csv));
        QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 640);
        // At any size asked, the chart is laid out for it and fills the image: something is drawn in its
        // bottom tenth (the x axis title) and its right tenth (the plot, the axis), whatever the shape.
        for (const QSize size : { QSize(1600, 400), QSize(600, 900), QSize(1000, 500) }) {
            const QString sized = m_dir->filePath(QStringLiteral("sized.png"));
            QVERIFY(chart->exportPng(sized, size, 1));
            const QImage drawn(sized);
            QCOMPARE(drawn.size(), size);
            const QRgb background = drawn.pixel(0, 0);
            auto inked = [&](QRect area) {
                for (int y = area.top(); y <= area.bottom(); ++y)
                    for (int x = area.left(); x <= area.right(); ++x)
                        if (drawn.pixel(x, y) != background)
                            return true;
                return false;
            };
            const int w = size.width(), h = size.height();
            QVERIFY2(inked(QRect(0, h * 9 / 10, w, h / 10 - 1)),
                qPrintable(QStringLiteral("bottom of %1x%2").arg(w).arg(h)));
            QVERIFY2(
                inked(QRect(w * 9 / 10, 0, w / 10 - 1, h)), qPrintable(QStringLiteral("right of %1x%2").arg(w).arg(h)));
            QVERIFY(chart->exportSvg(svg, size));
            QFile sizedSvg(svg);
            QVERIFY(sizedSvg.open(QIODevice::ReadOnly));
            QVERIFY(sizedSvg.readAll().contains(QStringLiteral("viewBox=\"0 0 %1 %2\"").arg(w).arg(h).toUtf8()));
        }
        QFile svgFile(svg);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QByteArray svgText = svgFile.readAll();
        QVERIFY(svgText.contains("<svg"));
        QVERIFY(svgText.contains("Memory per key"));
        QFile csvFile(csv);
        QVERIFY(csvFile.open(QIODevice::ReadOnly | QIODevice::Text));
        const QList<QByteArray> lines = csvFile.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 17); // header + 16 thresholds
        QVERIFY(lines[0].startsWith("Threshold (bytes),Bytes per key"));
        QVERIFY(lines[1].startsWith("16,"));
        // Every chart of every view exports.
        for (int tab = 0; tab < window.tabs()->count(); ++tab) {
            window.tabs()->setCurrentIndex(tab);
            for (ChartPanel* c : window.currentCharts()) {
                const QString base = m_dir->filePath(c->exportName());
                QVERIFY2(c->exportPng(base + QStringLiteral(".png")), qPrintable(c->exportName()));
                QVERIFY2(c->exportSvg(base + QStringLiteral(".svg")), qPrintable(c->exportName()));
                QVERIFY2(c->exportCsv(base + QStringLiteral(".csv")), qPrintable(c->exportName()));
                // Axis labels with thousands separators (150,000), as the tables show them.
                QVERIFY2(c->chart()->localizeNumbers(), qPrintable(c->exportName()));
                QVERIFY(QFileInfo(base + QStringLiteral(".csv")).size() > 0);
            }
        }
    }

    void choicesPersistAcrossSessions() {
        int splitterTop = 0;
        {
            MainWindow window(m_db);
            window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("redis-7.0"));
            window.sweepPage()->thresholdsEdit()->setText(QStringLiteral("32:96:8"));
            window.sweepPage()->cacheBox()->setChecked(false);
            window.tabs()->setCurrentIndex(3);
            window.openTrace(test::seedTrace());
            QVERIFY(window.runner().waitForIdle(60000));
            window.show();
            window.tabs()->setCurrentWidget(window.sweepPage());
            QApplication::processEvents();
            auto* splitter = window.findChild<QSplitter*>(QStringLiteral("sweep-splitter"));
            QVERIFY(splitter);
            const int total = splitter->sizes().value(0) + splitter->sizes().value(1);
            splitter->setSizes({ total / 3, total - total / 3 }); // as a user drags it
            splitterTop = splitter->sizes().value(0);
            window.tabs()->setCurrentIndex(3);
            window.close();
        }
        MainWindow again; // no --db: the last database
        QCOMPARE(again.databasePath(), m_db);
        QCOMPARE(again.sweepPage()->layoutBox()->currentText(), QStringLiteral("redis-7.0"));
        QCOMPARE(again.sweepPage()->thresholdsEdit()->text(), QStringLiteral("32:96:8"));
        QVERIFY(!again.sweepPage()->cacheBox()->isChecked());
        QCOMPARE(again.tabs()->currentIndex(), 3);
        again.show();
        again.tabs()->setCurrentWidget(again.sweepPage());
        QApplication::processEvents();
        QCOMPARE(again.findChild<QSplitter*>(QStringLiteral("sweep-splitter"))->sizes().value(0), splitterTop);
        again.tabs()->setCurrentIndex(3);
        again.openInitialTrace();
        QCOMPARE(QFileInfo(again.sweepPage()->tracePath()).canonicalFilePath(),
            QFileInfo(test::seedTrace()).canonicalFilePath());
        QVERIFY(again.runner().waitForIdle(60000));
    }

    void screenshotsRenderEveryView() {
        MainWindow window(m_db);
        const QString dir = m_dir->filePath(QStringLiteral("shots"));
        QString error;
        QVERIFY2(renderScreenshots(window, dir, &error), qPrintable(error));
        for (const char* name : { "library", "workload", "sweep", "size-classes", "compare" }) {
            QImage image(dir + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".png"));
            QVERIFY2(!image.isNull(), name);
            QCOMPARE(image.size(), QSize(1280, 800));
        }
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_db;
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
