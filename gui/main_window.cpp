// SPDX-License-Identifier: MIT
#include "main_window.h"
#include "readable_palette.h"

#include "cache_curve_page.h"
#include "chart_panel.h"
#include "collections_page.h"
#include "compare_page.h"
#include "engine_page.h"
#include "generate_dialog.h"
#include "job_actions.h"
#include "library_page.h"
#include "size_class_page.h"
#include "stored_job.h"
#include "sweep_page.h"
#include "workload_page.h"

#include "layoutlab/store/jobs.h"
#include "layoutlab/store/stored_run.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace layoutlab::gui {

namespace {

// "40 s", "3 min 20 s", "1 h 5 min".
QString durationText(double seconds) {
    const auto s = static_cast<long long>(seconds + 0.5);
    if (s < 60)
        return QCoreApplication::translate("MainWindow", "%1 s").arg(s);
    if (s < 3600)
        return QCoreApplication::translate("MainWindow", "%1 min %2 s").arg(s / 60).arg(s % 60);
    return QCoreApplication::translate("MainWindow", "%1 h %2 min").arg(s / 3600).arg(s % 3600 / 60);
}
} // namespace

MainWindow::MainWindow(const QString& databasePath, QWidget* parent)
    : QMainWindow(parent)
    , m_runner(new TaskRunner(this))
    , m_tabs(new QTabWidget(this)) {
    setWindowTitle(tr("layoutlab"));
    setAcceptDrops(true);
    QSettings settings;
    m_databasePath = !databasePath.isEmpty()
        ? databasePath
        : settings.value(QStringLiteral("database/path"), defaultDatabasePath()).toString();
    m_recentTraces = settings.value(QStringLiteral("traces/recent")).toStringList();
    auto database = [this] { return m_databasePath; };
    m_library = new LibraryPage(this);
    m_workload = new WorkloadPage(*m_runner, database, this);
    m_sweep = new SweepPage(*m_runner, database, this);
    m_sizeClasses = new SizeClassPage(this);
    m_collections = new CollectionsPage(this);
    m_compare = new ComparePage(this);
    m_engine = new EnginePage(*m_runner, database, this);
    m_cacheCurve = new CacheCurvePage(*m_runner, database, this);
    m_jobs = new JobActions(*m_runner, database, this);
    m_tabs->addTab(m_library, tr("&Library"));
    m_tabs->addTab(m_workload, tr("&Workload"));
    m_tabs->addTab(m_sweep, tr("Threshold &sweep"));
    m_tabs->addTab(m_sizeClasses, tr("Size &classes"));
    m_tabs->addTab(m_cacheCurve, tr("Cache c&urve"));
    m_tabs->addTab(m_collections, tr("C&ollections"));
    m_tabs->addTab(m_engine, tr("&Engine"));
    m_tabs->addTab(m_compare, tr("Co&mpare"));
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);
    buildMenus();
    buildStatusBar();

    connect(m_library, &LibraryPage::openTraceRequested, this, &MainWindow::openTrace);
    connect(m_library, &LibraryPage::showRunRequested, this, &MainWindow::showRun);
    connect(m_library, &LibraryPage::failed, this, &MainWindow::showError);
    connect(m_library, &LibraryPage::compareRequested, this, [this](qint64 a, qint64 b) {
        if (m_compare->compare(a, b))
            m_tabs->setCurrentWidget(m_compare);
        else
            showError(
                tr("Runs %1 and %2 cannot be compared: only complete runs with threshold points can.").arg(a).arg(b));
    });
    connect(m_compare, &ComparePage::failed, this, &MainWindow::showError);
    connect(m_engine, &EnginePage::failed, this, &MainWindow::showError);
    connect(m_engine, &EnginePage::runsStored, this, [this] { refreshLibrary(); });
    connect(m_engine, &EnginePage::curveMeasured, this,
        [this](const std::vector<EngineSweepPoint>& points, const QString& trace, const QString& layout, qint64 run) {
            m_sweep->setMeasuredPoints(points, trace, layout, tr("run %1").arg(run));
        });
    connect(m_jobs, &JobActions::failed, this, &MainWindow::showError);
    connect(m_jobs, &JobActions::runsStored, this, [this] { refreshLibrary(); });
    connect(m_jobs, &JobActions::reportReady, this, &MainWindow::showReport);
    connect(m_workload, &WorkloadPage::failed, this, &MainWindow::showError);
    connect(m_workload, &WorkloadPage::statsReady, this, [this] { refreshLibrary(); });
    connect(m_sweep, &SweepPage::failed, this, &MainWindow::showError);
    connect(m_sweep, &SweepPage::resultChanged, m_sizeClasses, &SizeClassPage::setResult);
    connect(m_sweep, &SweepPage::cursorMoved, m_sizeClasses, &SizeClassPage::showThreshold);
    connect(m_sweep, &SweepPage::runStored, this, [this] { refreshLibrary(); });
    connect(m_cacheCurve, &CacheCurvePage::failed, this, &MainWindow::showError);
    connect(m_cacheCurve, &CacheCurvePage::runStored, this, [this] { refreshLibrary(); });

    m_sweep->restoreSettings();
    m_engine->restoreSettings();
    m_cacheCurve->restoreSettings();
    m_collections->restoreSettings();
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    for (QSplitter* splitter : findChildren<QSplitter*>())
        if (const auto state = settings.value(QStringLiteral("splitters/") + splitter->objectName()); state.isValid())
            splitter->restoreState(state.toByteArray());
    if (!settings.contains(QStringLiteral("window/geometry")))
        resize(1280, 800);
    m_tabs->setCurrentIndex(settings.value(QStringLiteral("window/tab"), 1).toInt());
    keepPlaceholdersReadable(*this);
    refreshLibrary();
}

MainWindow::~MainWindow() = default;

QString MainWindow::bundledSeedTrace() {
    return QStringLiteral(LAYOUTLAB_DATASETS_DIR "/traces/seed-k16-v96.lltrace");
}

QString MainWindow::defaultDatabasePath() {
    if (const QString env = qEnvironmentVariable("LAYOUTLAB_DB"); !env.isEmpty())
        return env;
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    QDir().mkpath(dir);
    return dir + QStringLiteral("/layoutlab.db");
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open Trace…"), QKeySequence::Open, this, &MainWindow::chooseAndOpenTrace);
    file->addAction(tr("&Import Trace…"), QKeySequence(tr("Ctrl+I")), this, &MainWindow::chooseAndImportTrace);
    file->addAction(tr("&Generate Trace…"), QKeySequence(tr("Ctrl+G")), this, &MainWindow::chooseAndGenerateTrace);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    file->addAction(tr("Open &Bundled Seed Dataset"), this, [this] { openTrace(bundledSeedTrace()); });
    file->addAction(tr("Open &Layout File…"), QKeySequence(tr("Ctrl+L")), this, [this] {
        m_tabs->setCurrentWidget(m_sweep);
        m_sweep->chooseLayoutFile();
    });
    file->addSeparator();
    file->addAction(tr("Open &Database…"), this, &MainWindow::chooseAndOpenDatabase);
    file->addSeparator();
    m_exportMenu = file->addMenu(tr("&Export"));
    connect(m_exportMenu, &QMenu::aboutToShow, this, &MainWindow::fillExportMenu);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(tr("Run &Sweep"), QKeySequence(tr("Ctrl+R")), this, [this] {
        QString error;
        if (m_sweep->startSweep(&error))
            m_tabs->setCurrentWidget(m_sweep);
        else
            showError(error);
    });
    run->addAction(tr("Run &Batch Plan…"), this, [this] {
        const QString plan = QFileDialog::getOpenFileName(
            this, tr("Run a batch plan"), QString(), tr("Batch plans (*.json *.toml);;All files (*)"));
        QString error;
        if (!plan.isEmpty() && !m_jobs->startBatch(plan, &error))
            showError(error);
    });
    run->addAction(tr("&Profile Against the Reference Engine"), this, [this] {
        QString error;
        if (!m_jobs->startProfile(
                m_sweep->tracePath(), m_sweep->currentLayoutSpec(), m_sweep->thresholdsEdit()->text(), &error))
            showError(error);
    });
    run->addSeparator();
    run->addAction(tr("&Cancel"), QKeySequence(tr("Esc")), m_runner, &TaskRunner::cancel);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About layoutlab"), this, [this] {
        QMessageBox::about(this, tr("About layoutlab"),
            tr("<b>layoutlab %1</b><p>A memory-layout simulator and profiler for in-memory key/value stores: "
               "what an object layout and the allocator's size classes do to memory and to the CPU.</p>"
               "<p>Results database: %2</p>")
                .arg(QStringLiteral(LAYOUTLAB_VERSION), m_databasePath.toHtmlEscaped()));
    });
}

void MainWindow::buildStatusBar() {
    m_statusText = new QLabel(tr("Ready"), this);
    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(240);
    m_progress->setRange(0, 1000);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->hide();
    statusBar()->addWidget(m_statusText, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    connect(m_cancel, &QPushButton::clicked, m_runner, &TaskRunner::cancel);
    connect(m_runner, &TaskRunner::started, this, [this](const QString& label) {
        m_statusText->setText(tr("Running %1…").arg(label));
        m_progress->setRange(0, 0); // busy until the first progress report
        m_progress->show();
        m_cancel->show();
        m_phase.clear();
        m_phaseClock.start();
    });
    connect(m_runner, &TaskRunner::progressed, this, &MainWindow::showProgress);
    connect(m_runner, &TaskRunner::finished, this, [this](const QString& label, const QString& error, bool cancelled) {
        m_progress->hide();
        m_cancel->hide();
        m_statusText->setText(cancelled ? tr("%1 cancelled").arg(label)
                : error.isEmpty()       ? tr("%1 finished").arg(label)
                                        : tr("%1 failed").arg(label));
    });
}

void MainWindow::openTrace(const QString& path) {
    if (!QFileInfo::exists(path)) {
        showError(tr("%1: no such file").arg(path));
        return;
    }
    QString error;
    if (!m_workload->loadTrace(path, &error)) {
        showError(error);
        return;
    }
    m_sweep->setTracePath(path);
    m_engine->setTracePath(path);
    m_cacheCurve->setTracePath(path);
    rememberTrace(path);
    setWindowTitle(tr("%1 — layoutlab").arg(QFileInfo(path).fileName()));
}

void MainWindow::openInitialTrace() {
    const QString last = QSettings().value(QStringLiteral("traces/last")).toString();
    openTrace(!last.isEmpty() && QFileInfo::exists(last) ? last : bundledSeedTrace());
}

void MainWindow::openDatabase(const QString& path) {
    m_databasePath = path;
    refreshLibrary();
    QSettings().setValue(QStringLiteral("database/path"), path);
}

void MainWindow::refreshLibrary() {
    if (const QString error = m_library->reload(m_databasePath); !error.isEmpty())
        showError(error);
    m_compare->setRuns(m_databasePath, m_library->runs().all());
}

void MainWindow::showRun(qint64 runId) {
    auto db = ResultsDb::open(m_databasePath.toStdString());
    if (!db) {
        showError(errorText(db.error()));
        return;
    }
    auto stored = loadStoredRun(**db, runId);
    if (!stored) {
        showError(errorText(stored.error()));
        return;
    }
    // An engine sweep: its servers in the Engine view, and on its predicted sweep when it has one. A sweep
    // with an engine sweep beside it: that sweep's servers on its memory chart.
    std::optional<EngineSweepReport> measured = storedEngineSweep(*stored);
    if (measured) {
        m_engine->showCurve(*measured);
        if (!measured->predictionRun) {
            m_tabs->setCurrentWidget(m_engine);
            return;
        }
        if (auto predicted = loadStoredRun(**db, measured->predictionRun); predicted)
            stored = std::move(predicted);
    } else if (const qint64 beside = engineSweepBeside(m_library->runs().all(), runId))
        if (auto run = loadStoredRun(**db, beside); run)
            measured = storedEngineSweep(*run);
    if (stored->result.points.empty()) {
        showError(tr("Run %1 (%2, %3) has no threshold points to show.")
                      .arg(runId)
                      .arg(QString::fromStdString(stored->run.kind), QString::fromStdString(stored->run.status)));
        return;
    }
    // A curve (points at more than one budget): the Cache curve view, with the drives measured beside it.
    const auto& points = stored->result.points;
    if (!points.empty() && points.front().budget
        && std::any_of(points.begin(), points.end(), [&](const ThresholdPoint& p) {
               return p.budget && p.budget->maxmemoryBytes != points.front().budget->maxmemoryBytes;
           })) {
        m_cacheCurve->showResult(stored->result);
        m_tabs->setCurrentWidget(m_cacheCurve);
        return;
    }
    m_sweep->showStoredRun(*stored);
    if (measured)
        m_sweep->setMeasuredPoints(measured->points, QString::fromStdString(measured->trace),
            QString::fromStdString(measured->layout), tr("run %1").arg(measured->measuredRun));
    m_tabs->setCurrentWidget(m_sweep);
}

void MainWindow::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange)
        keepPlaceholdersReadable(*this);
    QMainWindow::changeEvent(event);
}

void MainWindow::showError(const QString& text) {
    m_lastError = text;
    auto* box = new QMessageBox(QMessageBox::Warning, tr("layoutlab"), text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->open();
}

void MainWindow::showProgress(double fraction, const QString& detail, const QString& phase) {
    // Each phase has its own fraction, so its own clock for the time left.
    if (phase != m_phase) {
        m_phase = phase;
        m_phaseClock.start();
    }
    QString text = tr("Running %1…").arg(m_runner->label());
    if (!detail.isEmpty())
        text += QLatin1Char(' ') + detail;
    if (fraction >= 0) {
        m_progress->setRange(0, 1000);
        m_progress->setValue(int(fraction * 1000));
        text += tr(" · %1%").arg(QLocale().toString(100.0 * fraction, 'f', 0));
        const double seconds = m_phaseClock.elapsed() / 1000.0;
        if (fraction >= 0.02 && fraction < 1.0 && seconds >= 1.0)
            text += tr(" · about %1 left").arg(durationText(seconds * (1.0 - fraction) / fraction));
    } else {
        m_progress->setRange(0, 0); // the total is unknown: busy
    }
    m_statusText->setText(text);
}

QString MainWindow::statusText() const {
    return m_statusText->text();
}

void MainWindow::showReport(const QString& title, const QString& text) {
    m_lastReport = title + QLatin1Char('\n') + text;
    auto* dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setObjectName(QStringLiteral("reportDialog"));
    dialog->setWindowTitle(title);
    auto* view = new QPlainTextEdit(text, dialog);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(new QLabel(tr("Its runs are in the Library."), dialog));
    layout->addWidget(view);
    layout->addWidget(buttons);
    dialog->resize(960, 420);
    dialog->open();
}

std::vector<ChartPanel*> MainWindow::currentCharts() const {
    QWidget* page = m_tabs->currentWidget();
    if (page == m_workload)
        return m_workload->charts();
    if (page == m_sweep)
        return m_sweep->charts();
    if (page == m_sizeClasses)
        return { m_sizeClasses->chart() };
    if (page == m_compare)
        return { m_compare->shownChart() };
    if (page == m_engine)
        return m_engine->charts();
    if (page == m_cacheCurve)
        return { m_cacheCurve->chart() };
    return {};
}

void MainWindow::fillExportMenu() {
    m_exportMenu->clear();
    const auto charts = currentCharts();
    if (charts.empty()) {
        m_exportMenu->addAction(tr("(this view has no charts)"))->setEnabled(false);
        return;
    }
    for (ChartPanel* chart : charts) {
        const QString title = chart->chart()->title().isEmpty() ? chart->exportName() : chart->chart()->title();
        QMenu* sub = m_exportMenu->addMenu(title);
        sub->addAction(tr("Chart as PNG…"), chart, [chart] { chart->exportInteractively(QStringLiteral("png")); });
        sub->addAction(tr("Chart as SVG…"), chart, [chart] { chart->exportInteractively(QStringLiteral("svg")); });
        sub->addAction(tr("Data as CSV…"), chart, [chart] { chart->exportInteractively(QStringLiteral("csv")); });
    }
}

void MainWindow::saveSettings() const {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/tab"), m_tabs->currentIndex());
    settings.setValue(QStringLiteral("database/path"), m_databasePath);
    m_sweep->saveSettings();
    m_engine->saveSettings();
    m_cacheCurve->saveSettings();
    m_collections->saveSettings();
    // Every view's splitter, by its object name.
    for (const QSplitter* splitter : findChildren<QSplitter*>())
        if (!splitter->objectName().isEmpty())
            settings.setValue(QStringLiteral("splitters/") + splitter->objectName(), splitter->saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    m_runner->cancel();
    m_runner->waitForIdle(5000);
    saveSettings();
    event->accept();
}

} // namespace layoutlab::gui
