// SPDX-License-Identifier: MIT
#pragma once

// Runs long work (import statistics, sweeps) on a worker thread, one task at a time, so the UI never
// blocks. The work reports progress through a layoutlab::ProgressSink, checks a std::stop_token that
// cancel() triggers, and ends with an error text (empty on success); finished() is delivered on the
// thread that owns the runner.

#include "layoutlab/sim/simulation.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>

namespace layoutlab::gui {

class TaskRunner final : public QObject {
    Q_OBJECT
public:
    // The work: returns an empty string on success, else the error text (as the CLI prints it).
    using Work = std::function<QString(ProgressSink& progress, std::stop_token stop)>;

    explicit TaskRunner(QObject* parent = nullptr);
    ~TaskRunner() override; // cancels and joins a running task

    // Starts `work` unless a task is already running (then returns false).
    bool start(const QString& label, Work work);
    void cancel();
    bool busy() const { return m_busy; }
    QString label() const { return m_label; }
    // Why a job on the trace at `tracePath` cannot start now (no trace is open, another task runs); empty
    // when it can.
    QString refusal(const QString& tracePath) const;
    // Processes events until the task has finished or `timeoutMs` passed; true when idle.
    bool waitForIdle(int timeoutMs);

signals:
    void started(const QString& label);
    // fraction in [0, 1], or negative when the total is unknown.
    // `detail` is for people ("load: 1,234 requests"); `phase` names the job's current phase (empty for a
    // job of one phase), so that a handler need not read it back out of the text.
    void progressed(double fraction, const QString& detail, const QString& phase);
    void finished(const QString& label, const QString& error, bool cancelled);

private:
    class Sink;
    void onFinished(const QString& error, bool cancelled);

    std::jthread m_thread;
    bool m_busy = false;
    QString m_label;
};

} // namespace layoutlab::gui
