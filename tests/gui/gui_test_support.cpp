// SPDX-License-Identifier: MIT
#include "gui_test_support.h"

#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/generator.h"
#include "layoutlab/trace/trace_file.h"

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

} // namespace layoutlab::gui::test
