// SPDX-License-Identifier: MIT
#pragma once

// The Run menu's measurement and batch jobs: a batch plan (layoutlab/store/batch_job.h) and a profile
// against the reference engine (layoutlab/jobs/profile_job.h), run on the task runner's thread like a
// sweep, with progress and cancel. When one ends, its summary (the same table the CLI prints) is offered
// in a report, and its runs appear in the Library.

#include "task_runner.h"

#include <QObject>
#include <QString>

#include <functional>

namespace layoutlab::gui {

class JobActions final : public QObject {
    Q_OBJECT
public:
    JobActions(TaskRunner& runner, std::function<QString()> databasePath, QObject* parent = nullptr);

    // Runs the plan at `planPath` into the results database (a batch always stores its runs).
    bool startBatch(const QString& planPath, QString* error = nullptr);
    // Profiles `tracePath` with `layout` (a spec or a layout file's) at `thresholds` (as typed; empty: the
    // layout's own) against the reference engine.
    bool startProfile(
        const QString& tracePath, const QString& layout, const QString& thresholds, QString* error = nullptr);

    // The program cachegrind runs for the profile's replay: $LAYOUTLAB_CLI, else the `layoutlab` beside
    // this program, else the one on PATH.
    static QString replayProgram();

signals:
    // A job ended: its title and the summary the CLI would print.
    void reportReady(const QString& title, const QString& text);
    void failed(const QString& error);
    void runsStored();

private:
    bool begin(QString* error);
    // When the task about to start ends: the runs refreshed, then its report (`titleAndText`) or its error.
    void reportWhenDone(std::function<std::pair<QString, QString>()> titleAndText);

    TaskRunner& m_runner;
    std::function<QString()> m_databasePath;
};

} // namespace layoutlab::gui
