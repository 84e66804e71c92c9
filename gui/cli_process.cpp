// SPDX-License-Identifier: MIT
#include "cli_process.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>

namespace layoutlab::gui {

QString cliExecutable() {
    if (const QString env = qEnvironmentVariable("LAYOUTLAB_CLI"); !env.isEmpty())
        return env;
    const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/layoutlab");
    if (QFileInfo(beside).isExecutable())
        return beside;
#ifdef LAYOUTLAB_BUILD_TREE_CLI
    if (QFileInfo(QStringLiteral(LAYOUTLAB_BUILD_TREE_CLI)).isExecutable())
        return QStringLiteral(LAYOUTLAB_BUILD_TREE_CLI);
#endif
    return QStandardPaths::findExecutable(QStringLiteral("layoutlab"));
}

CliOutcome runCliCommand(const QStringList& arguments, ProgressSink& progress, std::stop_token stop) {
    CliOutcome outcome;
    const QString program = cliExecutable();
    if (program.isEmpty()) {
        outcome.error
            = QCoreApplication::translate("CliProcess", "the layoutlab command was not found (set LAYOUTLAB_CLI)");
        return outcome;
    }
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("LAYOUTLAB_PROGRESS"), QStringLiteral("lines"));
    process.setProcessEnvironment(environment);
    process.start(program, arguments);
    if (!process.waitForStarted(10000)) {
        outcome.error
            = QCoreApplication::translate("CliProcess", "cannot run %1: %2").arg(program, process.errorString());
        return outcome;
    }
    QByteArray pendingErr;
    const QByteArray errorPrefix = "layoutlab: error: ";
    auto readErr = [&] {
        pendingErr += process.readAllStandardError();
        qsizetype newline;
        while ((newline = pendingErr.indexOf('\n')) >= 0) {
            const QByteArray line = pendingErr.left(newline);
            pendingErr.remove(0, newline + 1);
            const QList<QByteArray> fields = line.split(' ');
            if (line.startsWith("progress ") && fields.size() == 4)
                progress.progress(fields[2].toDouble(), fields[3].toULongLong());
            else if (line.startsWith(errorPrefix))
                outcome.error = QString::fromUtf8(line.mid(errorPrefix.size()));
            else if (!line.isEmpty())
                outcome.notes << QString::fromUtf8(line);
        }
    };
    bool stopped = false;
    while (process.state() != QProcess::NotRunning) {
        if (stop.stop_requested() && !stopped) {
            process.terminate(); // drive stops the server it started on SIGTERM
            stopped = true;
            if (!process.waitForFinished(10000))
                process.kill();
        }
        process.waitForReadyRead(100);
        outcome.out += process.readAllStandardOutput();
        readErr();
    }
    process.waitForFinished(-1);
    outcome.out += process.readAllStandardOutput();
    pendingErr += '\n';
    readErr();
    outcome.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    if (stopped)
        outcome.error = QStringLiteral("cancelled");
    else if (outcome.exitCode != 0 && outcome.error.isEmpty())
        outcome.error = outcome.notes.isEmpty()
            ? QCoreApplication::translate("CliProcess", "layoutlab exited with status %1").arg(outcome.exitCode)
            : outcome.notes.join(QLatin1Char('\n'));
    return outcome;
}

} // namespace layoutlab::gui
