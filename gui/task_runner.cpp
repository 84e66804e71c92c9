// SPDX-License-Identifier: MIT
#include "task_runner.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QLocale>
#include <QMetaObject>

namespace layoutlab::gui {

// Forwards progress to the runner's thread, at most every 50 ms so a fast replay does not flood the
// event loop.
class TaskRunner::Sink final : public ProgressSink {
public:
    explicit Sink(TaskRunner* runner)
        : m_runner(runner) {
        m_sinceLast.start();
    }
    void progress(double fraction, std::uint64_t requestsDone) override {
        if (fraction < 1.0 && m_sinceLast.elapsed() < 50 && !m_phaseChanged)
            return;
        m_sinceLast.restart();
        m_phaseChanged = false;
        QString detail = requestsDone
            ? QCoreApplication::translate("TaskRunner", "%1 requests").arg(QLocale().toString(qulonglong(requestsDone)))
            : QString();
        if (!m_phase.isEmpty())
            detail = detail.isEmpty() ? m_phase : m_phase + QStringLiteral(": ") + detail;
        QMetaObject::invokeMethod(
            m_runner,
            [runner = m_runner, fraction, detail, phase = m_phase] {
                emit runner->progressed(fraction, detail, phase);
            },
            Qt::QueuedConnection);
    }

    void phase(std::string_view name) override {
        m_phase = QString::fromUtf8(name.data(), qsizetype(name.size()));
        m_phaseChanged = true;
        progress(-1.0, 0); // the new phase shows at once
    }

private:
    TaskRunner* m_runner;
    QElapsedTimer m_sinceLast;
    QString m_phase;
    bool m_phaseChanged = false;
};

TaskRunner::TaskRunner(QObject* parent)
    : QObject(parent) { }

TaskRunner::~TaskRunner() {
    if (m_thread.joinable()) {
        m_thread.request_stop();
        m_thread.join();
    }
}

bool TaskRunner::start(const QString& label, Work work) {
    if (m_busy)
        return false;
    if (m_thread.joinable())
        m_thread.join(); // the previous task has already delivered its result
    m_busy = true;
    m_label = label;
    emit started(label);
    m_thread = std::jthread([this, work = std::move(work)](std::stop_token stop) {
        Sink sink(this);
        const QString error = work(sink, stop);
        const bool cancelled = stop.stop_requested();
        QMetaObject::invokeMethod(
            this, [this, error, cancelled] { onFinished(error, cancelled); }, Qt::QueuedConnection);
    });
    return true;
}

void TaskRunner::cancel() {
    if (m_busy)
        m_thread.request_stop();
}

void TaskRunner::onFinished(const QString& error, bool cancelled) {
    m_busy = false;
    if (m_thread.joinable())
        m_thread.join();
    emit finished(m_label, error, cancelled);
}

bool TaskRunner::waitForIdle(int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    while (m_busy && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return !m_busy;
}

QString TaskRunner::refusal(const QString& tracePath) const {
    if (tracePath.isEmpty())
        return tr("Open a trace first (File → Open Trace).");
    if (m_busy)
        return tr("Another task is running: %1.").arg(m_label);
    return {};
}

} // namespace layoutlab::gui
