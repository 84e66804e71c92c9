// SPDX-License-Identifier: MIT
#include "gui_test_support.h"

#include "main_window.h"
#include "sweep_page.h"
#include "task_runner.h"

#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/trace_file.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QProcess>
#include <QSettings>
#include <QTest>

namespace layoutlab::gui::test {

void useScratchSettings(const QTemporaryDir& dir) {
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir.path());
    QSettings().clear();
}

CliRun runCli(const QStringList& arguments) {
    QProcess process;
    process.start(QStringLiteral(LAYOUTLAB_CLI), arguments);
    CliRun run;
    if (!process.waitForFinished(120000))
        return run;
    run.exitCode = process.exitCode();
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

QString seedTrace() {
    return QStringLiteral(LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace");
}

SimulationResult simulateForTest(const QString& trace, const QString& layout, const QString& thresholds, bool cache) {
    auto models = parseLayoutAndAllocator(layout.toStdString(), "");
    if (!models)
        qFatal("%s", models.error().describe().c_str());
    SimulationConfig config;
    config.layout = models->layout;
    config.allocator = models->allocator;
    auto list = parseThresholds(thresholds.toStdString(), *models->layout->threshold());
    if (!list)
        qFatal("%s", list.error().describe().c_str());
    config.thresholds = *list;
    if (cache)
        config.cache = CacheGeometry::detect();
    auto reader = openTrace(trace.toStdString());
    if (!reader)
        qFatal("%s", reader.error().describe().c_str());
    auto result = simulate(config, **reader);
    if (!result)
        qFatal("%s", result.error().describe().c_str());
    return *result;
}

void writeSyntheticTrace(const QString& path, std::uint64_t keys, std::uint64_t ops) {
    auto config = makeGeneratorConfig(
        keys, ops, "lognormal:3:0.5:4:200", "lognormal:5:1:1:4000", 0.2, 0, 0.8, 0.02, "zipf:0.99", 7);
    if (!config)
        qFatal("%s", config.error().describe().c_str());
    SyntheticTrace trace(*config);
    if (auto ok = writeTrace(trace, path.toStdString()); !ok)
        qFatal("%s", ok.error().describe().c_str());
}

int childProcessesNamed(const QString& name) {
    int count = 0;
    const QDir proc(QStringLiteral("/proc"));
    for (const QString& entry : proc.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile stat(proc.filePath(entry) + QStringLiteral("/stat"));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        // pid (comm) state ppid ...: comm may hold spaces, so split after its closing parenthesis.
        const QByteArray line = stat.readAll();
        const auto open = line.indexOf('('), close = line.lastIndexOf(')');
        if (open < 0 || close < open)
            continue;
        const QByteArray comm = line.mid(open + 1, close - open - 1);
        const QList<QByteArray> rest = line.mid(close + 2).split(' ');
        if (rest.size() > 1 && rest[0] != "Z" && rest[1].toLongLong() == QCoreApplication::applicationPid()
            && QString::fromUtf8(comm) == name)
            ++count;
    }
    return count;
}

void sweepSeed(MainWindow& window, const QString& thresholds, bool cache) {
    window.openTrace(seedTrace());
    QVERIFY(window.runner().waitForIdle(60000));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
    window.sweepPage()->layoutBox()->setCurrentText(QStringLiteral("valkey-9.1"));
    window.sweepPage()->allocatorBox()->setCurrentText(QString());
    window.sweepPage()->thresholdsEdit()->setText(thresholds);
    window.sweepPage()->cacheBox()->setChecked(cache);
    QString error;
    QVERIFY2(window.sweepPage()->startSweep(&error), qPrintable(error));
    // A sweep with the cache model takes 40 s of this 2-core VM alone, three times that beside the suite's
    // other tests, and past 240 s on a slow day: a limit for a hang, not a timing (ctest stops the test at 480 s).
    QVERIFY(window.runner().waitForIdle(420000));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
}

} // namespace layoutlab::gui::test
