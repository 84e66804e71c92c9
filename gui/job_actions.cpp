// SPDX-License-Identifier: MIT
#include "job_actions.h"

#include "stored_job.h"

#include "layoutlab/store/batch_job.h"

#if LAYOUTLAB_HAVE_JEMALLOC
#include "layoutlab/jobs/profile_job.h"
#endif

#include <QCoreApplication>
#include <QFileInfo>
#include <QStandardPaths>

#include <memory>
#include <nlohmann/json.hpp>

namespace layoutlab::gui {

JobActions::JobActions(TaskRunner& runner, std::function<QString()> databasePath, QObject* parent)
    : QObject(parent)
    , m_runner(runner)
    , m_databasePath(std::move(databasePath)) { }

QString JobActions::replayProgram() {
    if (const QString fromEnv = qEnvironmentVariable("LAYOUTLAB_CLI"); !fromEnv.isEmpty())
        return fromEnv;
    for (const QString beside : { QCoreApplication::applicationDirPath() + QStringLiteral("/layoutlab"),
             QCoreApplication::applicationDirPath() + QStringLiteral("/../cli/layoutlab") }) // the build tree
        if (QFileInfo(beside).isExecutable())
            return QFileInfo(beside).canonicalFilePath();
    const QString onPath = QStandardPaths::findExecutable(QStringLiteral("layoutlab"));
    return onPath.isEmpty() ? QStringLiteral("layoutlab") : onPath;
}

bool JobActions::begin(QString* error) {
    if (m_runner.busy()) {
        if (error)
            *error = tr("Another task is running: %1.").arg(m_runner.label());
        return false;
    }
    return true;
}

void JobActions::reportWhenDone(std::function<std::pair<QString, QString>()> titleAndText) {
    connect(
        &m_runner, &TaskRunner::finished, this,
        [this, titleAndText = std::move(titleAndText)](const QString&, const QString& failure, bool cancelled) {
            emit runsStored(); // complete, failed or interrupted, the runs are in the database
            if (cancelled)
                return;
            if (!failure.isEmpty()) {
                emit failed(failure);
                return;
            }
            const auto [title, text] = titleAndText();
            emit reportReady(title, text);
        },
        Qt::SingleShotConnection);
}

bool JobActions::startBatch(const QString& planPath, QString* error) {
    if (!begin(error))
        return false;
    const QString db = m_databasePath();
    if (db.isEmpty()) {
        if (error)
            *error = tr("A batch stores its runs: open a results database first (File → Open Database).");
        return false;
    }
    auto plan = readBatchPlan(planPath.toStdString());
    if (!plan) {
        if (error)
            *error = errorText(plan.error());
        return false;
    }
    auto request = std::make_shared<BatchRequest>();
    request->plan = std::move(*plan);
    request->dbPath = db.toStdString();
    request->toolVersion = LAYOUTLAB_VERSION;
    auto text = std::make_shared<QString>();
    reportWhenDone([text, title = tr("Batch %1").arg(QFileInfo(planPath).fileName())] {
        return std::pair { title, *text };
    });
    m_runner.start(tr("batch %1").arg(QFileInfo(planPath).fileName()),
        [request, text](ProgressSink& progress, std::stop_token stop) -> QString {
            request->cellDone = [&progress](const BatchCellResult&, std::size_t done, std::size_t total) {
                progress.progress(total ? double(done) / double(total) : 1.0, 0);
            };
            progress.phase("cells");
            auto outcome = runBatchJob(*request, stop);
            request->cellDone = nullptr;
            if (!outcome)
                return errorText(outcome.error());
            if (outcome->interrupted)
                return {}; // cancelled: the runner says so
            *text = QString::fromStdString(renderBatchTable(*outcome, *request));
            return {};
        });
    return true;
}

bool JobActions::startProfile(
    const QString& tracePath, const QString& layout, const QString& thresholds, QString* error) {
#if LAYOUTLAB_HAVE_JEMALLOC
    if (!begin(error))
        return false;
    if (tracePath.isEmpty()) {
        if (error)
            *error = tr("Open a trace first (File → Open Trace).");
        return false;
    }
    ProfileRequest request;
    request.tracePath = tracePath.toStdString();
    request.layout = layout.toStdString();
    request.thresholdsText = thresholds.trimmed().toStdString();
    request.replayProgram = replayProgram().toStdString();
    request.toolVersion = LAYOUTLAB_VERSION;
    auto report = std::make_shared<ProfileReport>();
    reportWhenDone([report] {
        return std::pair { tr("Profile of %1").arg(QFileInfo(QString::fromStdString(report->trace)).fileName()),
            QString::fromStdString(renderProfileTable(*report)) };
    });
    m_runner.start(tr("profile %1").arg(layout),
        storedJob(m_databasePath().toStdString(), report,
            [request](ResultsDb* db, ProgressSink& progress, std::stop_token stop) {
                return runProfileJob(request, db, &progress, stop);
            }));
    return true;
#else
    (void)tracePath;
    (void)layout;
    (void)thresholds;
    if (error)
        *error = tr("This build has no reference engine (it needs jemalloc).");
    return false;
#endif
}

} // namespace layoutlab::gui
