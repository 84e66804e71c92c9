// SPDX-License-Identifier: MIT
// The measured curve, offscreen: the Engine view measures real servers at several settings (memcached
// slab settings; Valkey built from its source archive at chosen thresholds) and the figures meet the
// predicted curve on the sweep chart, in Compare and when the stored run is shown again.

#include "gui_test_support.h"

#include "chart_panel.h"
#include "compare_page.h"
#include "engine_page.h"
#include "main_window.h"
#include "screenshot_tour.h"
#include "sweep_page.h"
#include "task_runner.h"

#include "../support/engine_manifest.h"

#include "layoutlab/store/results_db.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QMessageBox>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtCharts/QBarSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <QtTest>

#include <filesystem>
#include <memory>

using namespace layoutlab;
using namespace layoutlab::gui;

namespace {

QString mixedSizesTrace() {
    return QStringLiteral(LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace");
}

// The 8.1-layout source archive the engines.build fixture built (empty when the suite has none).
QString valkeySourceArchive() {
    for (const auto& b : layoutlab::test::readEngineManifest(LAYOUTLAB_ENGINE_MANIFEST))
        if (b.layout == "valkey-8.1" && b.label.find('+') == std::string::npos)
            for (const char* ext : { ".tar.xz", ".tar.gz" }) {
                const auto archive = std::filesystem::path(LAYOUTLAB_ENGINE_ARCHIVES) / (b.label + ext);
                if (std::filesystem::exists(archive))
                    return QString::fromStdString(archive.string());
            }
    return {};
}

std::vector<RunRecord> runsOfKind(const QString& database, const std::string& kind) {
    std::vector<RunRecord> out;
    auto db = ResultsDb::open(database.toStdString());
    if (!db)
        return out;
    if (auto runs = (*db)->listRuns())
        for (const auto& r : *runs)
            if (r.kind == kind)
                out.push_back(r);
    return out;
}

// The series of the chart named `name` (objectName).
QList<QAbstractSeries*> seriesNamed(ChartPanel* panel, const QString& name) {
    QList<QAbstractSeries*> out;
    for (QAbstractSeries* s : panel->chart()->series())
        if (s->objectName() == name)
            out << s;
    return out;
}

// Every row's measured and predicted bytes per key (the Engine view's table after a curve) within 1%.
void verifyRowsWithinOnePercent(const EnginePage* page) {
    const QStandardItemModel& rows = page->comparison();
    for (int r = 0; r < rows.rowCount(); ++r) {
        const double measured = rows.item(r, 1)->data(Qt::UserRole).toDouble();
        const double predicted = rows.item(r, 2)->data(Qt::UserRole).toDouble();
        QVERIFY2(measured > 0 && std::abs(predicted - measured) <= 0.01 * measured,
            qPrintable(QStringLiteral("%1: measured %2, predicted %3")
                           .arg(rows.item(r, 0)->text())
                           .arg(measured)
                           .arg(predicted)));
    }
}

} // namespace

class MeasuredCurveTest final : public QObject {
    Q_OBJECT

private slots:
    void init() {
        m_dir = std::make_unique<QTemporaryDir>();
        gui::test::useScratchSettings(*m_dir);
        m_db = m_dir->filePath(QStringLiteral("gui.db"));
    }
    void cleanup() {
        for (QWidget* w : QApplication::topLevelWidgets())
            if (qobject_cast<QMessageBox*>(w))
                w->close();
    }

    // memcached at three slab settings: one row per setting, each within 1%, bars of measured and
    // predicted per setting; the run reaches the Library and Compare, and shows again from the Library.
    void memcachedSlabSettingsInTheEngineView() {
        if (QStandardPaths::findExecutable(QStringLiteral("memcached")).isEmpty())
            QSKIP("memcached is not on PATH (scripts/install-deps installs it)");
        MainWindow window(m_db);
        window.openTrace(mixedSizesTrace());
        QVERIFY(window.runner().waitForIdle(60000));
        EnginePage* page = window.enginePage();
        page->engineBox()->setCurrentText(QStringLiteral("memcached"));
        page->runRequestsBox()->setValue(0);
        page->slabSettingsEdit()->setText(QStringLiteral("1.25:48,1.08:48,1.25:96"));
        QStringList phases;
        connect(
            &window.runner(), &TaskRunner::progressed, this, [&phases](double, const QString&, const QString& phase) {
                if (!phase.isEmpty() && (phases.isEmpty() || phases.back() != phase))
                    phases << phase;
            });
        QString error;
        QVERIFY2(page->startCurve(&error), qPrintable(error));
        QVERIFY(page->summaryText().contains(QStringLiteral("Measuring memcached at 3 settings")));
        QVERIFY(window.runner().waitForIdle(180000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        QCOMPARE(page->comparison().rowCount(), 3);
        verifyRowsWithinOnePercent(page);
        QCOMPARE(page->comparison().item(1, 0)->text(), QStringLiteral("-f 1.08 -n 48"));
        // Progress named each setting's phases, in order.
        QVERIFY2(phases.contains(QStringLiteral("-f 1.25 -n 48: load"))
                && phases.indexOf(QStringLiteral("-f 1.25 -n 48: load"))
                    < phases.indexOf(QStringLiteral("-f 1.08 -n 48: load")),
            qPrintable(phases.join(QStringLiteral(", "))));
        QCOMPARE(seriesNamed(page->charts()[0], QString()).size(), 1);
        QVERIFY(qobject_cast<QBarSeries*>(page->charts()[0]->chart()->series().front()));
        QVERIFY(page->charts()[0]->chart()->title().contains(QStringLiteral("hash index not included")));
        // Stored as one measured run, which the Library lists and shows again in the Engine view.
        const auto runs = runsOfKind(m_db, kEngineSweepKind);
        QCOMPARE(runs.size(), std::size_t(1));
        page->showReport({});
        QCOMPARE(page->comparison().rowCount(), 0);
        window.showRun(runs.front().id);
        QCOMPARE(page->comparison().rowCount(), 3);
        QCOMPARE(window.tabs()->currentWidget(), page);
        // memcached's settings have no threshold: its points are not drawn on a sweep.
        QVERIFY(window.sweepPage()->shownMeasuredPoints().empty());
    }

    // Valkey built from source at four thresholds: the rows within 1%, the rings on the Engine view's
    // chart and, once the same trace is swept with the same layout, on the sweep's memory chart with the
    // error beside each; not on a sweep of another layout; in Compare against the predicted sweep; and
    // again when the stored engine sweep is shown from the Library.
    void valkeyBuildsOnTheSweepChart() {
        const QString source = valkeySourceArchive();
        if (source.isEmpty())
            QSKIP("no source archive of the 8.1 layout among the engines.build builds (../shared/engines)");
        MainWindow window(m_db);
        window.openTrace(mixedSizesTrace());
        QVERIFY(window.runner().waitForIdle(60000));
        EnginePage* page = window.enginePage();
        page->engineBox()->setCurrentText(QStringLiteral("valkey"));
        page->runRequestsBox()->setValue(0);
        page->sourceEdit()->setText(source);
        page->buildThresholdsEdit()->setText(QStringLiteral("32,64,96,128"));
        page->quickBuildBox()->setChecked(true);
        QString error;
        QVERIFY2(page->startCurve(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(900000));
        QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
        QCOMPARE(page->comparison().rowCount(), 4);
        verifyRowsWithinOnePercent(page);
        // Rings of the measured bytes per key and of the allocator's active bytes per key, each labelled.
        QCOMPARE(seriesNamed(page->charts()[0], QStringLiteral("measured")).size(), 2);
        QCOMPARE(seriesNamed(page->charts()[0], QStringLiteral("measured-label")).size(), 8);

        SweepPage* sweep = window.sweepPage();
        sweep->layoutBox()->setCurrentText(QStringLiteral("valkey-8.1"));
        sweep->thresholdsEdit()->setText(QStringLiteral("16:160:16"));
        QVERIFY2(sweep->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QCOMPARE(sweep->shownMeasuredPoints().size(), std::size_t(4));
        const auto rings = seriesNamed(sweep->charts()[0], QStringLiteral("measured"));
        QCOMPARE(rings.size(), 1);
        QCOMPARE(qobject_cast<QScatterSeries*>(rings.front())->count(), 4);
        const auto labels = seriesNamed(sweep->charts()[0], QStringLiteral("measured-label"));
        QCOMPARE(labels.size(), 4);
        QVERIFY(qobject_cast<QScatterSeries*>(labels.front())->pointLabelsFormat().endsWith(QStringLiteral(" %")));
        QVERIFY2(sweep->measuredText().contains(QStringLiteral("Worst error")), qPrintable(sweep->measuredText()));
        // Every ring is on the chart's y range (the axis widened if it had to).
        auto* y = qobject_cast<QValueAxis*>(sweep->charts()[0]->chart()->axes(Qt::Vertical).front());
        for (const QPointF& p : qobject_cast<QScatterSeries*>(rings.front())->points())
            QVERIFY(p.y() >= y->min() && p.y() <= y->max());

        // Another layout's sweep does not carry them.
        sweep->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
        QVERIFY2(sweep->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        QVERIFY(sweep->shownMeasuredPoints().empty());
        QVERIFY(seriesNamed(sweep->charts()[0], QStringLiteral("measured")).isEmpty());
        QVERIFY(sweep->measuredText().isEmpty());

        // The stored engine sweep shows on its predicted sweep (four points).
        const auto measured = runsOfKind(m_db, kEngineSweepKind);
        QCOMPARE(measured.size(), std::size_t(1));
        window.showRun(measured.front().id);
        QCOMPARE(window.tabs()->currentWidget(), sweep);
        QCOMPARE(sweep->model().rowCount(), 4);
        QCOMPARE(sweep->shownMeasuredPoints().size(), std::size_t(4));

        // Compare: the predicted sweep against the measured run, bytes per key at each threshold.
        const auto predicted = QJsonDocument::fromJson(QByteArray::fromStdString(measured.front().parametersJson))
                                   .object()
                                   .value(QStringLiteral("prediction_run"))
                                   .toInteger();
        QVERIFY(predicted > 0);
        ComparePage* compare = window.comparePage();
        QVERIFY(compare->compare(predicted, measured.front().id));
        compare->metricBox()->setCurrentIndex(compare->metricBox()->findText(QStringLiteral("Bytes per key")));
        QVERIFY(compare->metricBox()->currentIndex() >= 0);
        const CompareTableModel& rows = compare->model();
        QCOMPARE(rows.rowCount(), 4);
        for (int r = 0; r < rows.rowCount(); ++r) {
            QVERIFY(rows.value(r, false) && rows.value(r, true));
            QVERIFY(std::abs(*rows.value(r, true) - *rows.value(r, false)) <= 0.01 * *rows.value(r, true));
        }
    }

    // --screenshot with a Valkey source archive also renders the sweep with the measured points on it.
    void screenshotsIncludeTheMeasuredSweep() {
        const QString source = valkeySourceArchive();
        if (source.isEmpty())
            QSKIP("no source archive of the 8.1 layout among the engines.build builds (../shared/engines)");
        MainWindow window(m_db);
        const QString dir = m_dir->filePath(QStringLiteral("shots"));
        QString error;
        QVERIFY2(renderScreenshots(window, dir, &error, mixedSizesTrace(), source), qPrintable(error));
        for (const char* name : { "sweep-measured", "engine-curve", "compare-measured", "sweep", "engine" }) {
            const QImage image(dir + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".png"));
            QVERIFY2(!image.isNull() && image.width() == 1280, name);
        }
        // The last view drawn is the layout file's sweep: the measured sweep was the one before it, so
        // the curve it measured is the Engine view's, four points within 1%.
        QCOMPARE(window.enginePage()->comparison().rowCount(), 4);
        verifyRowsWithinOnePercent(window.enginePage());
    }

    // The form's refusals name its fields in its own words.
    void refusalsUseTheFormsWords() {
        MainWindow window(m_db);
        window.openTrace(mixedSizesTrace());
        QVERIFY(window.runner().waitForIdle(60000));
        EnginePage* page = window.enginePage();
        page->engineBox()->setCurrentText(QStringLiteral("valkey"));
        page->sourceEdit()->clear();
        page->buildsEdit()->clear();
        QString error;
        QVERIFY(!page->startCurve(&error));
        QVERIFY2(error.startsWith(QStringLiteral("Valkey source: ")), qPrintable(error));
        page->buildsEdit()->setText(QStringLiteral("64"));
        QVERIFY(!page->startCurve(&error));
        QVERIFY2(error.startsWith(QStringLiteral("Builds: ")), qPrintable(error));
        page->buildsEdit()->clear();
        page->sourceEdit()->setText(mixedSizesTrace());
        page->buildThresholdsEdit()->setText(QStringLiteral("64,sixty"));
        QVERIFY(!page->startCurve(&error));
        QVERIFY2(error.startsWith(QStringLiteral("Thresholds to build: ")), qPrintable(error));
        page->engineBox()->setCurrentText(QStringLiteral("memcached"));
        page->slabSettingsEdit()->setText(QStringLiteral("1.25:48"));
        QVERIFY(!page->startCurve(&error));
        QVERIFY2(error.startsWith(QStringLiteral("Slab settings: ")), qPrintable(error));
        QVERIFY(!error.contains(QStringLiteral("--")));
        // The core's refusals elsewhere: a layout that needs another allocator, a file of no known format.
        window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("memcached-1.6"));
        window.sweepPage()->allocatorBox()->setCurrentText(QStringLiteral("jemalloc"));
        window.sweepPage()->thresholdsEdit()->clear();
        QVERIFY(!window.sweepPage()->startSweep(&error));
        QVERIFY2(error.startsWith(QStringLiteral("Allocator: ")) && !error.contains(QStringLiteral("--")),
            qPrintable(error));
        window.openTrace(QStringLiteral(LAYOUTLAB_DATASETS_DIR "/traces/regenerate.sh"));
        QVERIFY(window.runner().waitForIdle(60000));
        QVERIFY2(
            window.lastError().contains(QStringLiteral("name it with the command line's layoutlab import --format")),
            qPrintable(window.lastError()));
    }

    // The threshold axis is labelled: its tick labels are drawn under the plot (they were lost once to a
    // label format Qt does not localise).
    void thresholdAxesAreLabelled() {
        MainWindow window(m_db);
        window.resize(1280, 800);
        window.show();
        window.openTrace(gui::test::seedTrace());
        QVERIFY(window.runner().waitForIdle(60000));
        QString error;
        QVERIFY2(window.sweepPage()->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        window.tabs()->setCurrentWidget(window.sweepPage());
        QApplication::processEvents();
        ChartPanel* panel = window.sweepPage()->charts()[0];
        const QImage image = panel->grab().toImage();
        const QRectF plot = panel->chart()->plotArea();
        const QPoint origin = panel->mapFromScene(panel->chart()->mapToScene(plot.bottomLeft()));
        int dark = 0;
        for (int x = origin.x(); x < origin.x() + int(plot.width()) && x < image.width(); ++x)
            for (int y = origin.y() + 3; y < origin.y() + 18 && y < image.height(); ++y)
                if (QColor(image.pixel(x, y)).lightness() < 110)
                    ++dark;
        QVERIFY2(dark > 40, qPrintable(QStringLiteral("%1 dark pixels under the plot").arg(dark)));
    }

    // Byte quantities in the unit that keeps them readable: sizes labelled with their own unit, and the
    // sweep's per-key axes in KiB once values reach ten of them (the Dalli trace's 100 kB to 1 MB values).
    void byteQuantitiesInReadableUnits() {
        QCOMPARE(byteLabel(96), QStringLiteral("96 B"));
        QCOMPARE(byteLabel(1536), QStringLiteral("1.5 KiB"));
        QCOMPARE(byteLabel(524288), QStringLiteral("512 KiB"));
        QCOMPARE(byteLabel(1048576), QStringLiteral("1 MiB"));
        QCOMPARE(byteUnit(9000).name, QStringLiteral("B"));
        QCOMPARE(byteUnit(589874).name, QStringLiteral("KiB"));
        QCOMPARE(byteUnit(20.0 * 1024 * 1024).divisor, 1024.0 * 1024);
        MainWindow window(m_db);
        window.openTrace(QStringLiteral(LAYOUTLAB_DATASETS_DIR "/traces/dalli-large-values.lltrace"));
        QVERIFY(window.runner().waitForIdle(60000));
        SweepPage* sweep = window.sweepPage();
        sweep->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
        sweep->thresholdsEdit()->setText(QStringLiteral("64,128"));
        QString error;
        QVERIFY2(sweep->startSweep(&error), qPrintable(error));
        QVERIFY(window.runner().waitForIdle(120000));
        auto* y = qobject_cast<QValueAxis*>(sweep->charts()[0]->chart()->axes(Qt::Vertical).front());
        QCOMPARE(y->titleText(), QStringLiteral("KiB/key"));
        const double bytes = sweep->model().result().points.front().usableBytesPerKey;
        QVERIFY(bytes > 100 * 1024);
        QVERIFY(y->max() > bytes / 1024 && y->max() < 2 * bytes / 1024); // the axis is in KiB, not bytes
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_db;
};

QTEST_MAIN(MeasuredCurveTest)
#include "measured_curve_test.moc"
