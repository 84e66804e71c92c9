// SPDX-License-Identifier: MIT
#pragma once

// Runs a `layoutlab` command as a child process on the task runner's thread: the GUI's Engine view
// drives real servers through `layoutlab drive`, so it does exactly what the CLI does (the server is
// started, measured and stopped by the same code). Progress comes from LAYOUTLAB_PROGRESS=lines; a stop
// request terminates the command (SIGTERM), which stops any server it started.

#include "layoutlab/sim/simulation.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <stop_token>

namespace layoutlab::gui {

struct CliOutcome {
    int exitCode = -1;
    QByteArray out;
    QString error; // the command's error message (without "layoutlab: error: "), or why it did not run
    QStringList notes; // other lines it wrote to stderr
};

// The `layoutlab` executable: $LAYOUTLAB_CLI, else beside this program, else the build tree's, else PATH.
QString cliExecutable();

// Runs `layoutlab arguments...`; reports its progress lines to `progress`. `error` is set on a non-zero
// exit, a start failure or a stop.
CliOutcome runCliCommand(const QStringList& arguments, ProgressSink& progress, std::stop_token stop);

} // namespace layoutlab::gui
