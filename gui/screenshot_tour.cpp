// SPDX-License-Identifier: MIT
#include "screenshot_tour.h"

#include "limit_sweep_panel.h"

#include "cache_curve_page.h"
#include "collections_page.h"
#include "compare_page.h"
#include "engine_page.h"
#include "library_page.h"
#include "main_window.h"
#include "migration_view.h"
#include "size_class_page.h"
#include "sweep_page.h"
#include "task_runner.h"
#include "workload_page.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QListWidget>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>

#include <map>

namespace layoutlab::gui {

namespace {

// Valkey builds of `source` at four thresholds, then the sweep they are measured against.
bool measureValkeyCurve(MainWindow& window, const QString& source, const QString& directory, QString* error) {
    auto fail = [error](const QString& text) {
        if (error)
            *error = text;
        return false;
    };
    EnginePage* engine = window.enginePage();
    engine->engineBox()->setCurrentText(QStringLiteral("valkey"));
    engine->sourceEdit()->setText(source);
    engine->buildThresholdsEdit()->setText(QStringLiteral("32,64,96,128"));
    engine->quickBuildBox()->setChecked(true);
    engine->runRequestsBox()->setValue(0);
    QString curveError;
    if (!engine->startCurve(&curveError))
        return fail(curveError);
    if (!window.runner().waitForIdle(1200000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("measuring the curve timed out") : window.lastError());
    window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("valkey-8.1"));
    if (!window.sweepPage()->startSweep(&curveError))
        return fail(curveError);
    if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("the sweep timed out") : window.lastError());
    window.sweepPage()->setCursorThreshold(96);
    if (const auto& curve = engine->curve(); curve && curve->predictionRun)
        window.comparePage()->compare(curve->predictionRun, curve->measuredRun);
    const std::pair<QWidget*, QString> views[] { { window.sweepPage(), QStringLiteral("sweep-measured") },
        { engine, QStringLiteral("engine-curve") }, { window.comparePage(), QStringLiteral("compare-measured") } };
    for (const auto& [page, name] : views) {
        window.tabs()->setCurrentWidget(page);
        QApplication::processEvents();
        const QString path = directory + QLatin1Char('/') + name + QStringLiteral(".png");
        if (!window.grab().save(path, "PNG"))
            return fail(QObject::tr("cannot write %1").arg(path));
    }
    return true;
}

// The Collections view's example: a hash of 8-byte fields and 20-byte values growing to 1,024 fields, on
// four engine lines, jumping at hash-max-listpack-entries (512).
void showHashGrowing(CollectionsPage& collections) {
    collections.typeBox()->setCurrentIndex(0);
    collections.elementBytesBox()->setValue(8);
    collections.valueBytesBox()->setValue(20);
    collections.maxEntriesBox()->setValue(1024);
    collections.entriesLimitBox()->setValue(512);
    for (int i = 0; i < collections.layoutsList()->count(); ++i) {
        const QString name = collections.layoutsList()->item(i)->text();
        const bool shown = name == QStringLiteral("redis-7.0") || name == QStringLiteral("valkey-8.0")
            || name == QStringLiteral("valkey-8.1") || name == QStringLiteral("valkey-9.1");
        collections.layoutsList()->item(i)->setCheckState(shown ? Qt::Checked : Qt::Unchecked);
    }
}

// The Sweep view with a collection limit swept on the bundled RDB file: bytes per key and lines per HGET at each
// value of hash-max-listpack-entries, beside the thresholds.
bool limitSweepScreenshot(MainWindow& window, const QString& directory, QString* error) {
    auto fail = [error](const QString& text) {
        if (error)
            *error = text;
        return false;
    };
    window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
    window.openTrace(QStringLiteral(LAYOUTLAB_DATASETS_DIR "/samples/keyspace.rdb"));
    if (!window.runner().waitForIdle(120000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("reading the RDB file timed out") : window.lastError());
    QComboBox* limit = window.sweepPage()->limitControls()->limitBox();
    limit->setCurrentIndex(limit->findData(QStringLiteral("hash-max-listpack-entries")));
    window.sweepPage()->limitControls()->valuesEdit()->setText(QStringLiteral("1,2,4,6,8,10,12,16,32,64,128,512"));
    if (QString limitError; !window.sweepPage()->startSweep(&limitError))
        return fail(limitError);
    if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("the sweep timed out") : window.lastError());
    window.sweepPage()->setCursorThreshold(128);
    QApplication::processEvents();
    if (const QString swept = directory + QStringLiteral("/sweep-limit.png"); !window.grab().save(swept, "PNG"))
        return fail(QObject::tr("cannot write %1").arg(swept));
    limit->setCurrentIndex(0);
    return true;
}

} // namespace

bool renderScreenshots(
    MainWindow& window, const QString& directory, QString* error, const QString& trace, const QString& engineSource) {
    auto fail = [error](const QString& text) {
        if (error)
            *error = text;
        return false;
    };
    if (!QDir().mkpath(directory))
        return fail(QObject::tr("cannot create %1").arg(directory));
    window.resize(1280, 800);
    window.show();
    window.openTrace(trace.isEmpty() ? MainWindow::bundledSeedTrace() : trace);
    if (!window.runner().waitForIdle(120000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("reading the trace timed out") : window.lastError());
    // Redis 7.0 and memcached (for the engines side by side), Valkey 8.1, then 9.1 (the one the other views
    // show), for the compare view.
    for (const QString& layout : { QStringLiteral("redis-7.0"), QStringLiteral("memcached-1.6"),
             QStringLiteral("valkey-8.1"), QStringLiteral("valkey-9.1") }) {
        window.sweepPage()->layoutBox()->setCurrentText(layout);
        // The sweep the views show predicts the memory stall per GET too (this machine's latencies).
        window.sweepPage()->stallBox()->setChecked(layout == QStringLiteral("valkey-9.1"));
        QString sweepError;
        if (!window.sweepPage()->startSweep(&sweepError))
            return fail(sweepError);
        if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
            return fail(window.lastError().isEmpty() ? QObject::tr("the sweep timed out") : window.lastError());
    }
    // The engine view with a real Redis, when one is installed.
    const bool withEngine = !QStandardPaths::findExecutable(QStringLiteral("redis-server")).isEmpty();
    if (withEngine) {
        window.enginePage()->engineBox()->setCurrentText(QStringLiteral("redis"));
        QString driveError;
        if (!window.enginePage()->startDrive(&driveError))
            return fail(driveError);
        if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
            return fail(window.lastError().isEmpty() ? QObject::tr("driving Redis timed out") : window.lastError());
    }
    // The cache curve of the trace on Redis 7.0, with Redis measured at two budgets when it is installed and
    // the trace is the seed dataset, a look-aside cache's plain strings (first, so that the curve counts the
    // server's own memory and allocator the drives found).
    {
        CacheCurvePage* curve = window.cacheCurvePage();
        curve->layoutEdit()->setText(QStringLiteral("redis-7.0"));
        curve->thresholdsEdit()->setText(QStringLiteral("44"));
        curve->budgetsEdit()->setText(QStringLiteral("4mb:16mb:7"));
        curve->policyBox()->setCurrentText(QStringLiteral("allkeys-lru"));
        curve->rawSizesBox()->setChecked(false);
        curve->sampleRateBox()->setValue(1.0);
        curve->baseMemoryEdit()->clear();
        curve->allocatorEdit()->clear();
        curve->engineBox()->setCurrentText(QStringLiteral("redis"));
        curve->measureAtEdit()->setText(QStringLiteral("8mb,16mb"));
        QString curveError;
        if (withEngine && trace.isEmpty() && !curve->startMeasuring(&curveError))
            return fail(curveError);
        if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
            return fail(window.lastError().isEmpty() ? QObject::tr("measuring Redis timed out") : window.lastError());
        if (!curve->startCurve(&curveError)) // with the server's own memory the drives found
            return fail(curveError);
        if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
            return fail(window.lastError().isEmpty() ? QObject::tr("the curve timed out") : window.lastError());
    }
    window.sizeClassPage()->showThreshold(128);
    showHashGrowing(*window.collectionsPage());
    // Compare: Valkey 8.1 against 9.1; the engines side by side against Redis 7.0 (the sweeps above).
    std::map<std::string, std::int64_t> sweepOf;
    for (const auto& r : window.libraryPage()->runs().all())
        if (r.kind == "sweep" || r.kind == "sim")
            sweepOf.emplace(r.layoutName, r.id);
    window.comparePage()->compare(sweepOf["valkey-8.1"], sweepOf["valkey-9.1"]);
    const std::pair<QWidget*, QString> views[] { { window.libraryPage(), QStringLiteral("library") },
        { window.workloadPage(), QStringLiteral("workload") }, { window.sweepPage(), QStringLiteral("sweep") },
        { window.sizeClassPage(), QStringLiteral("size-classes") },
        { window.cacheCurvePage(), QStringLiteral("cache-curve") },
        { window.collectionsPage(), QStringLiteral("collections") }, { window.enginePage(), QStringLiteral("engine") },
        { window.comparePage(), QStringLiteral("compare") } };
    for (const auto& [page, name] : views) {
        if (page == window.enginePage() && !withEngine)
            continue;
        window.tabs()->setCurrentWidget(page);
        QApplication::processEvents();
        const QString path = directory + QLatin1Char('/') + name + QStringLiteral(".png");
        if (!window.grab().save(path, "PNG"))
            return fail(QObject::tr("cannot write %1").arg(path));
    }
    // Engines side by side, against Redis 7.0.
    if (window.comparePage()->compare(sweepOf["redis-7.0"], sweepOf["valkey-9.1"])) {
        window.comparePage()->tabs()->setCurrentWidget(window.comparePage()->migration());
        window.tabs()->setCurrentWidget(window.comparePage());
        QApplication::processEvents();
        const QString path = directory + QStringLiteral("/compare-engines.png");
        if (!window.grab().save(path, "PNG"))
            return fail(QObject::tr("cannot write %1").arg(path));
        window.comparePage()->tabs()->setCurrentIndex(0);
    }
    if (!engineSource.isEmpty() && !measureValkeyCurve(window, engineSource, directory, error))
        return false;
    // The slab model on the bundled mixed trace (its deletes and overwrites leave slabs partly empty): active
    // beside allocated bytes per key, and the timeline at the cursor's threshold.
    window.openTrace(QStringLiteral(LAYOUTLAB_DATASETS_DIR "/traces/mixed-sizes.lltrace"));
    if (!window.runner().waitForIdle(120000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("reading the trace timed out") : window.lastError());
    window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
    window.sweepPage()->stallBox()->setChecked(false);
    window.sweepPage()->slabsBox()->setChecked(true);
    if (QString slabError; !window.sweepPage()->startSweep(&slabError))
        return fail(slabError);
    if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("the sweep timed out") : window.lastError());
    window.sweepPage()->setCursorThreshold(128);
    window.tabs()->setCurrentWidget(window.sweepPage());
    QApplication::processEvents();
    if (const QString slabs = directory + QStringLiteral("/sweep-slabs.png"); !window.grab().save(slabs, "PNG"))
        return fail(QObject::tr("cannot write %1").arg(slabs));
    window.sweepPage()->slabsBox()->setChecked(false);
    // The same trace as a cache under a budget of about a third of its keyspace: the hit ratio and the
    // evictions at every threshold.
    window.sweepPage()->maxmemoryEdit()->setText(QStringLiteral("4mb"));
    window.sweepPage()->policyBox()->setCurrentText(QStringLiteral("allkeys-lru"));
    window.sweepPage()->fillOnMissBox()->setChecked(true);
    if (QString budgetError; !window.sweepPage()->startSweep(&budgetError))
        return fail(budgetError);
    if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("the sweep timed out") : window.lastError());
    window.sweepPage()->setCursorThreshold(128);
    QApplication::processEvents();
    if (const QString budget = directory + QStringLiteral("/sweep-budget.png"); !window.grab().save(budget, "PNG"))
        return fail(QObject::tr("cannot write %1").arg(budget));
    window.sweepPage()->maxmemoryEdit()->clear();
    // The sweep of a bundled what-if layout file (the views above show the built-in models).
    window.sweepPage()->setLayoutFile(QStringLiteral(LAYOUTLAB_DATASETS_DIR "/layouts/valkey-no-value-pointer.toml"));
    QString sweepError;
    if (!window.sweepPage()->startSweep(&sweepError))
        return fail(sweepError);
    if (!window.runner().waitForIdle(300000) || !window.lastError().isEmpty())
        return fail(window.lastError().isEmpty() ? QObject::tr("the sweep timed out") : window.lastError());
    window.tabs()->setCurrentWidget(window.sweepPage());
    QApplication::processEvents();
    const QString path = directory + QStringLiteral("/sweep-layout-file.png");
    if (!window.grab().save(path, "PNG"))
        return fail(QObject::tr("cannot write %1").arg(path));
    // Last, a collection limit swept on the bundled RDB file.
    return limitSweepScreenshot(window, directory, error);
}

} // namespace layoutlab::gui
