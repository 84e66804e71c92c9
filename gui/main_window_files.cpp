// SPDX-License-Identifier: MIT
// The main window's traces and databases: open, import and generate a trace (the file dialogs, drag and
// drop), and the recent-traces menu.
#include "main_window.h"

#include "generate_dialog.h"
#include "stored_job.h"
#include "sweep_page.h"
#include "task_runner.h"
#include "workload_page.h"

#include "layoutlab/store/jobs.h"

#include <QAction>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMimeData>
#include <QSettings>
#include <QTabWidget>

namespace layoutlab::gui {

namespace {
constexpr int kMaxRecentTraces = 8;
const QString kTraceFilter
    = QStringLiteral("Traces (*.lltrace *.csv *.zst *.bin *.oracleGeneral *.log *.txt *.monitor);;All files (*)");
} // namespace

void MainWindow::chooseAndOpenTrace() {
    QSettings settings;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Trace"), settings.value(QStringLiteral("traces/directory")).toString(), kTraceFilter);
    if (path.isEmpty())
        return;
    settings.setValue(QStringLiteral("traces/directory"), QFileInfo(path).absolutePath());
    openTrace(path);
}

void MainWindow::chooseAndImportTrace() {
    QSettings settings;
    const QString source = QFileDialog::getOpenFileName(this,
        tr("Import Trace (Twitter, CacheLib, oracleGeneral, "
           "MONITOR, memcached watch/metadump, RDB CSV)"),
        settings.value(QStringLiteral("traces/directory")).toString(), kTraceFilter);
    if (source.isEmpty())
        return;
    settings.setValue(QStringLiteral("traces/directory"), QFileInfo(source).absolutePath());
    const QFileInfo info(source);
    const QString output = QFileDialog::getSaveFileName(this, tr("Write layoutlab Trace"),
        info.absolutePath() + QLatin1Char('/') + info.completeBaseName() + QStringLiteral(".lltrace"),
        tr("layoutlab traces (*.lltrace)"));
    if (!output.isEmpty())
        importTrace(source, output);
}

bool MainWindow::importTrace(const QString& source, const QString& output) {
    if (m_runner->busy()) {
        showError(tr("Another task is running: %1.").arg(m_runner->label()));
        return false;
    }
    const std::string dbPath = m_databasePath.toStdString();
    const ImportJob job { source.toStdString(), {}, output.toStdString() };
    openWhenWritten(output);
    return m_runner->start(tr("import"),
        storedJob(
            dbPath, std::make_shared<TraceStats>(), [job](ResultsDb* db, ProgressSink& progress, std::stop_token stop) {
                return runImportJob(job, db, &progress, stop);
            }));
}

void MainWindow::openWhenWritten(const QString& path) {
    connect(
        m_runner, &TaskRunner::finished, this,
        [this, path](const QString&, const QString& error, bool cancelled) {
            if (cancelled)
                return;
            if (!error.isEmpty())
                showError(error);
            else
                openTrace(path);
        },
        Qt::SingleShotConnection);
}

void MainWindow::chooseAndGenerateTrace() {
    GenerateDialog dialog(this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    auto config = dialog.config();
    if (!config)
        showError(errorText(config.error()));
    else
        generateTrace(*config, dialog.outputPath());
}

bool MainWindow::generateTrace(const GeneratorConfig& config, const QString& path) {
    if (m_runner->busy()) {
        showError(tr("Another task is running: %1.").arg(m_runner->label()));
        return false;
    }
    openWhenWritten(path);
    const std::string output = path.toStdString();
    return m_runner->start(tr("generate"), [config, output](ProgressSink& progress, std::stop_token stop) {
        auto ok = runGenerateJob(config, output, &progress, stop);
        return ok ? QString() : errorText(ok.error());
    });
}

void MainWindow::chooseAndOpenDatabase() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Open Results Database"), m_databasePath,
        tr("layoutlab results (*.db);;All files (*)"), nullptr, QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty())
        openDatabase(path);
}

void MainWindow::rememberTrace(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    m_recentTraces.removeAll(absolute);
    m_recentTraces.prepend(absolute);
    while (m_recentTraces.size() > kMaxRecentTraces)
        m_recentTraces.removeLast();
    QSettings settings;
    settings.setValue(QStringLiteral("traces/recent"), m_recentTraces);
    settings.setValue(QStringLiteral("traces/last"), absolute);
}

void MainWindow::fillRecentMenu() {
    m_recentMenu->clear();
    for (const QString& path : m_recentTraces)
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openTrace(path); })->setToolTip(path);
    if (m_recentTraces.isEmpty())
        m_recentMenu->addAction(tr("(none yet)"))->setEnabled(false);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) {
        const QString path = urls.front().toLocalFile();
        if (path.endsWith(QStringLiteral(".toml"))) { // a layout file: sweep with it
            m_tabs->setCurrentWidget(m_sweep);
            m_sweep->setLayoutFile(path);
        } else {
            openTrace(path);
        }
    }
    event->acceptProposedAction();
}

} // namespace layoutlab::gui
