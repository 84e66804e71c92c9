// SPDX-License-Identifier: MIT
#pragma once

// The main window: the library, workload, threshold-sweep and size-class views over one results
// database and one open trace; long work on a TaskRunner with progress and Cancel in the status bar;
// errors in a dialog with the text the CLI prints; layout, recent traces and choices kept in QSettings.

#include "layoutlab/trace/generator.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QStringList>

class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace layoutlab::gui {

class ChartPanel;
class CacheCurvePage;
class ComparePage;
class EnginePage;
class JobActions;
class LibraryPage;
class SizeClassPage;
class CollectionsPage;
class SweepPage;
class TaskRunner;
class WorkloadPage;

class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    // `databasePath`: the results database to open (empty: the last one, else the default).
    explicit MainWindow(const QString& databasePath = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a trace of any importable format: its workload statistics are read at once.
    void openTrace(const QString& path);
    // Opens the trace of the last session, or the bundled seed dataset on first start.
    void openInitialTrace();
    void openDatabase(const QString& path);
    // Imports `source` (any importable format) into layoutlab's trace at `output` on the task runner,
    // recording it with its statistics, then opens the result.
    bool importTrace(const QString& source, const QString& output);
    // Writes the synthetic trace `config` describes to `path` on the task runner, then opens it.
    bool generateTrace(const GeneratorConfig& config, const QString& path);
    // Loads a stored run's points into the sweep and size-class views.
    void showRun(qint64 runId);
    // Shows `text` in an error dialog (window-modal, not blocking the event loop).
    void showError(const QString& text);
    // The status bar's text: the task running with its phase, percentage and time left.
    QString statusText() const;
    // Shows a job's summary (a batch's, a profile's) in a dialog of its own.
    void showReport(const QString& title, const QString& text);

    QString databasePath() const { return m_databasePath; }
    QString lastError() const { return m_lastError; }
    TaskRunner& runner() const { return *m_runner; }
    QTabWidget* tabs() const { return m_tabs; }
    LibraryPage* libraryPage() const { return m_library; }
    WorkloadPage* workloadPage() const { return m_workload; }
    SweepPage* sweepPage() const { return m_sweep; }
    SizeClassPage* sizeClassPage() const { return m_sizeClasses; }
    CollectionsPage* collectionsPage() const { return m_collections; }
    ComparePage* comparePage() const { return m_compare; }
    EnginePage* enginePage() const { return m_engine; }
    CacheCurvePage* cacheCurvePage() const { return m_cacheCurve; }
    JobActions* jobs() const { return m_jobs; }
    // The title and text of the last job report shown (a batch's or a profile's summary).
    QString lastReport() const { return m_lastReport; }
    // The charts of the view on show.
    std::vector<ChartPanel*> currentCharts() const;

    static QString bundledSeedTrace();
    static QString defaultDatabasePath();

protected:
    void changeEvent(QEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void buildStatusBar();
    void chooseAndOpenTrace();
    void chooseAndImportTrace();
    void chooseAndGenerateTrace();
    // Opens the trace at `path` when the task about to start has written it without error.
    void openWhenWritten(const QString& path);
    void chooseAndOpenDatabase();
    void rememberTrace(const QString& path);
    void fillRecentMenu();
    void fillExportMenu();
    void refreshLibrary();
    void showProgress(double fraction, const QString& detail, const QString& phase);
    void saveSettings() const;

    QString m_databasePath;
    QString m_lastError;
    QStringList m_recentTraces;
    TaskRunner* m_runner;
    QTabWidget* m_tabs;
    LibraryPage* m_library;
    WorkloadPage* m_workload;
    SweepPage* m_sweep;
    SizeClassPage* m_sizeClasses;
    CollectionsPage* m_collections;
    ComparePage* m_compare;
    EnginePage* m_engine;
    CacheCurvePage* m_cacheCurve;
    JobActions* m_jobs;
    QString m_lastReport;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_exportMenu = nullptr;
    QLabel* m_statusText = nullptr;
    QProgressBar* m_progress = nullptr;
    QString m_phase; // of the running task, when it has phases
    QElapsedTimer m_phaseClock;
    QPushButton* m_cancel = nullptr;
};

} // namespace layoutlab::gui
