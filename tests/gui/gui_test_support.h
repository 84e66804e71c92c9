// SPDX-License-Identifier: MIT
#pragma once

// Helpers of the GUI tests: a private settings store, the CLI's output for comparison, small traces.

#include "layoutlab/sim/results.h"

#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace layoutlab::gui {
class MainWindow;
}

namespace layoutlab::gui::test {

// Points QSettings at `dir` (IniFormat), so tests never read or write the user's settings.
void useScratchSettings(const QTemporaryDir& dir);

// What a GUI test starts from: a fresh directory holding its settings and its results database.
struct Scratch {
    Scratch() { useScratchSettings(dir); }
    QString path(const QString& name) const { return dir.filePath(name); }
    QString database() const { return path(QStringLiteral("gui.db")); }
    QTemporaryDir dir;
};

struct CliRun {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};
// Runs the `layoutlab` CLI with `arguments`.
CliRun runCli(const QStringList& arguments);

QString seedTrace();

// How many live child processes of this one run the program `name` (the servers a drive started).
int childProcessesNamed(const QString& name);

// Simulates `trace` with `layout` over `thresholds` (no database), as the GUI's models get it.
SimulationResult simulateForTest(const QString& trace, const QString& layout, const QString& thresholds, bool cache);

// Writes a synthetic binary trace of `keys` keys and `ops` operations after the load.
void writeSyntheticTrace(const QString& path, std::uint64_t keys, std::uint64_t ops);

// Opens the seed dataset and sweeps it on Valkey 9.1 with `thresholds`; fails the test on any error.
void sweepSeed(MainWindow& window, const QString& thresholds, bool cache);

} // namespace layoutlab::gui::test
