// SPDX-License-Identifier: MIT
#include "sweep_page.h"

#include "kept_splitter.h"

#include "chart_panel.h"
#include "limit_sweep_panel.h"
#include "stored_job.h"

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/memory_latency.h"
#include "layoutlab/layout/layout_file.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/store/jobs.h"
#include "layoutlab/store/run_parameters.h"
#include "layoutlab/store/simulation_request.h"
#include "layoutlab/store/stored_run.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSettings>

#include <QSpinBox>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <memory>

namespace layoutlab::gui {

namespace {
// Thresholds as the form takes them: FIRST:LAST:STEP when evenly spaced (three or more), else a list.
QString thresholdsText(const std::vector<std::uint32_t>& thresholds) {
    if (thresholds.size() >= 3) {
        const std::uint32_t step = thresholds[1] - thresholds[0];
        bool even = step > 0;
        for (std::size_t i = 1; even && i < thresholds.size(); ++i)
            even = thresholds[i] - thresholds[i - 1] == step;
        if (even)
            return QStringLiteral("%1:%2:%3").arg(thresholds.front()).arg(thresholds.back()).arg(step);
    }
    QStringList parts;
    for (const auto t : thresholds)
        parts << QString::number(t);
    return parts.join(QLatin1Char(','));
}

QString qt(const std::string& s) {
    return QString::fromStdString(s);
}

// The predicted memory stall per GET at the leanest threshold, and how much more (or less) the layout's own
// threshold and the usual marks (64, 128) stall, for the summary ("" without latencies).
QString stallSummary(const SimulationResult& result, const std::optional<LoadLatencies>& latencies) {
    if (!latencies || result.points.empty())
        return {};
    const ThresholdPoint& leanest = result.points[leanestPoint(result.points)];
    const auto stall = predictStall(leanest, *latencies);
    if (!stall)
        return {};
    auto tr = [](const char* text) { return QCoreApplication::translate("SweepPage", text); };
    QLocale locale;
    QString text = tr(" Memory stall per GET on this machine: %1 ± %2 ns at %3")
                       .arg(locale.toString(stall->ns, 'f', 0), locale.toString(stall->uncertaintyNs, 'f', 0))
                       .arg(leanest.threshold);
    std::vector<const ThresholdPoint*> others;
    if (const ThresholdPoint* shipped = shippedPoint(result))
        others.push_back(shipped);
    for (const auto& p : result.points)
        if ((p.threshold == 64 || p.threshold == 128) && std::find(others.begin(), others.end(), &p) == others.end())
            others.push_back(&p);
    for (const ThresholdPoint* other : others) {
        const auto change = other != &leanest ? predictStallChange(leanest, *other, *latencies) : std::nullopt;
        if (!change)
            continue;
        text += tr("; at %1, %2%3 ± %4 ns%5")
                    .arg(other->threshold)
                    .arg(change->ns > 0 ? QStringLiteral("+") : QString(), locale.toString(change->ns, 'f', 0),
                        locale.toString(change->uncertaintyNs, 'f', 0),
                        std::abs(change->ns) <= change->uncertaintyNs ? tr(" (within the uncertainty)") : QString());
    }
    return text + QLatin1Char('.');
}

} // namespace

// Whether the threshold changes nothing here: every point uses the same memory.
bool flatSweep(const std::vector<ThresholdPoint>& points) {
    return points.size() > 1 && std::all_of(points.begin(), points.end(), [&](const ThresholdPoint& p) {
        return p.usableBytes == points.front().usableBytes;
    });
}

SweepPage::SweepPage(TaskRunner& runner, std::function<QString()> databasePath, QWidget* parent)
    : QWidget(parent)
    , m_runner(runner)
    , m_databasePath(std::move(databasePath))
    , m_layout(new QComboBox(this))
    , m_allocator(new QComboBox(this))
    , m_thresholds(new QLineEdit(QStringLiteral("16:512:16"), this))
    , m_cache(new QCheckBox(tr("Cache model (misses per GET)"), this))
    , m_stall(new QCheckBox(tr("Predict the memory stall per GET"), this))
    , m_getPipeline(new QSpinBox(this))
    , m_slabs(new QCheckBox(tr("Allocator's pages (slab model, timeline)"), this))
    , m_maxmemory(new QLineEdit(this))
    , m_policy(new QComboBox(this))
    , m_fillOnMiss(new QCheckBox(tr("fill misses"), this))
    , m_layoutFileButton(new QToolButton(this))
    , m_rerunOnChange(new QCheckBox(tr("Re-run when the layout file changes"), this))
    , m_watcher(new QFileSystemWatcher(this))
    , m_reloadDelay(new QTimer(this))
    , m_run(new QPushButton(tr("Run sweep"), this))
    , m_summary(new QLabel(this))
    , m_table(new QTableView(this))
    , m_cursorLine(new QLabel(this))
    , m_measuredLine(new QLabel(this))
    , m_timelineChart(nullptr)
    , m_limitControls(new LimitSweepControls(this))
    , m_limitChart(nullptr) {
    m_layout->setEditable(true);
    for (const auto& l : listLayouts()) {
        m_layout->addItem(qt(l.name), qt(l.spec));
        m_layout->setItemData(m_layout->count() - 1, qt(l.description), Qt::ToolTipRole);
    }
    m_layout->setCurrentText(QStringLiteral("valkey-9.1"));
    m_layout->setToolTip(tr("A preset, a layout with parameters (valkey:threshold=128,header=8), or file:PATH for "
                            "a layout file"));
    m_layoutFileButton->setText(tr("File…"));
    m_layoutFileButton->setToolTip(
        tr("Open a layout file (TOML, docs/layout-files.md; examples in datasets/layouts/)"));
    m_rerunOnChange->setChecked(true);
    m_rerunOnChange->setToolTip(tr("Sweep again whenever the chosen layout file is saved"));
    m_reloadDelay->setSingleShot(true);
    m_reloadDelay->setInterval(300);
    m_allocator->setEditable(true);
    m_allocator->addItem(QString(), tr("the layout's engine default"));
    for (const auto& a : listAllocators())
        m_allocator->addItem(qt(a.parameters.empty() ? a.name : a.name + ":" + a.parameters), qt(a.description));
    m_allocator->setToolTip(
        tr("Empty: the engine's default. jemalloc is the linked library; jemalloc:quantum=8,page=4096 emulates "
           "the build Valkey and Redis bundle"));
    m_allocator->lineEdit()->setPlaceholderText(tr("engine default"));
    m_thresholds->setToolTip(tr("FIRST:LAST:STEP (e.g. 16:512:16) or a list (64,128)"));
    m_cache->setChecked(true);
    m_cache->setToolTip(tr("Replay the trace's last GETs through an L1/L2/LLC model of this machine's caches"));
    m_stall->setToolTip(tr("Measure this machine's load latency at each cache level and from memory (a pointer "
                           "chase of a few seconds) before the sweep, and predict each threshold's memory stall per "
                           "GET from the cache model's misses, with its uncertainty (needs the cache model)"));
    m_stall->setEnabled(m_cache->isChecked());
    m_getPipeline->setRange(1, static_cast<int>(kMaxGetPipeline));
    m_getPipeline->setPrefix(tr("pipeline "));
    m_getPipeline->setToolTip(tr("GETs each client sends per round trip. Valkey 9.0 and later look up a pipeline's "
                                 "keys together (up to 16), which overlaps their misses"));
    m_getPipeline->setEnabled(false);
    connect(m_stall, &QCheckBox::toggled, m_getPipeline, &QWidget::setEnabled);
    m_slabs->setToolTip(tr("Play the trace into a model of the allocator's memory at every threshold (jemalloc's "
                           "slabs, memcached's pages): the active bytes it keeps after deletes and overwrites, and a "
                           "timeline of them over the trace"));
    connect(m_cache, &QCheckBox::toggled, m_stall, &QWidget::setEnabled);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* controls = new QHBoxLayout;
    auto* form = new QFormLayout;
    auto* layoutRow = new QHBoxLayout;
    layoutRow->addWidget(m_layout, 1);
    layoutRow->addWidget(m_layoutFileButton);
    auto* layoutLabel = new QLabel(tr("&Layout:"), this);
    layoutLabel->setBuddy(m_layout);
    form->addRow(layoutLabel, layoutRow);
    form->addRow(tr("&Allocator:"), m_allocator);
    auto* form2 = new QFormLayout;
    form2->addRow(tr("&Thresholds:"), m_thresholds);
    form2->addRow(QString(), m_cache);
    auto* stallRow = new QHBoxLayout;
    stallRow->addWidget(m_stall, 1);
    stallRow->addWidget(m_getPipeline);
    form2->addRow(QString(), stallRow);
    form2->addRow(QString(), m_slabs);
    auto* budgetLabel = new QLabel(tr("&maxmemory:"), this);
    budgetLabel->setBuddy(m_maxmemory);
    form->addRow(budgetLabel, budgetRow());
    auto* limitLabel = new QLabel(tr("Collection li&mit:"), this);
    limitLabel->setBuddy(m_limitControls->limitBox());
    form->addRow(limitLabel, m_limitControls);
    form2->addRow(QString(), m_rerunOnChange);
    controls->addLayout(form, 2);
    controls->addLayout(form2, 1);
    controls->addWidget(m_run, 0, Qt::AlignBottom);

    auto* chartGrid = new QWidget(this);
    auto* grid = new QGridLayout(chartGrid);
    grid->setContentsMargins(0, 0, 0, 0);
    const QStringList names { QStringLiteral("memory-per-key"), QStringLiteral("internal-fragmentation"),
        QStringLiteral("get-access-path"), QStringLiteral("cache-misses") };
    for (int i = 0; i < names.size(); ++i) {
        auto* chart = new ChartPanel(names[i], chartGrid);
        chart->setDataModel(&m_model);
        chart->setToolTip(tr("Click or drag to move the threshold cursor"));
        connect(chart, &ChartPanel::pointerAt, this, &SweepPage::setCursorThreshold);
        grid->addWidget(chart, i / 2, i % 2);
        m_charts.push_back(chart);
    }
    m_timelineChart = new ChartPanel(QStringLiteral("allocator-over-the-trace"), chartGrid);
    m_timelineChart->setDataModel(&m_timelineData);
    m_timelineChart->hide();
    m_limitChart = new LimitSweepChart(chartGrid);
    m_chartGrid = grid; // the two are placed beside the four charts when the result has them

    m_table->setModel(&m_model);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->hide();
    m_table->setAlternatingRowColors(true);
    auto* splitter = keptSplitter(Qt::Vertical, QStringLiteral("sweep-splitter"), chartGrid, 3, m_table, 1, this);
    splitter->setSizes({ 510, 170 }); // room for several rows of the table at 1280×800

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_summary);
    layout->addWidget(m_cursorLine);
    layout->addWidget(m_measuredLine);
    m_measuredLine->setWordWrap(true);
    m_measuredLine->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_measuredLine->hide();
    layout->addWidget(splitter, 1);
    m_cursorLine->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    connect(
        m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
            if (current.isValid())
                setCursorThreshold(m_model.value(current.row(), 0));
        });

    connect(m_run, &QPushButton::clicked, this, [this] {
        QString error;
        if (!startSweep(&error))
            emit failed(error);
    });
    connect(&m_runner, &TaskRunner::started, this, [this] { m_run->setEnabled(false); });
    connect(&m_runner, &TaskRunner::finished, this, [this] {
        m_run->setEnabled(true);
        if (m_reloadPending) // the file changed while the runner was busy
            m_reloadDelay->start();
    });
    connect(m_layoutFileButton, &QToolButton::clicked, this, &SweepPage::chooseLayoutFile);
    connect(m_layout, &QComboBox::currentTextChanged, this, &SweepPage::watchLayoutFile);
    // Atomic saves replace the file: the watcher drops it, so it is watched again after every change.
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this, [this] {
        watchLayoutFile();
        m_reloadDelay->start();
    });
    connect(m_reloadDelay, &QTimer::timeout, this, &SweepPage::layoutFileChanged);
    redraw();
}

QHBoxLayout* SweepPage::budgetRow() {
    m_maxmemory->setPlaceholderText(tr("no budget (e.g. 64mb)"));
    m_maxmemory->setToolTip(tr("A cache under maxmemory: each threshold keeps the keyspace within this budget as "
                               "the server does, evicting by the policy, and reports its hit ratio and evictions. "
                               "As the server reads it: 64mb is 64 MiB, 64m is 64,000,000 bytes. For a memcached "
                               "layout it is -m, and the policy box does not apply: memcached evicts each slab "
                               "class's own LRU. Not together with the cache model or the slab model"));
    for (const char* policy : { "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu",
             "volatile-random", "volatile-ttl", "noeviction", "exact-lru" })
        m_policy->addItem(QString::fromLatin1(policy));
    m_policy->setToolTip(tr("maxmemory-policy (exact-lru: the least recently used key exactly, no server's)"));
    m_fillOnMiss->setChecked(true);
    m_fillOnMiss->setToolTip(tr("Look-aside cache: a GET that misses is followed by a SET of the key"));
    auto budgetSet = [this] {
        // The cache and slab models do not run under a budget: their boxes say so by being off.
        const bool budget = !m_maxmemory->text().trimmed().isEmpty();
        m_policy->setEnabled(budget);
        m_fillOnMiss->setEnabled(budget);
        m_cache->setEnabled(!budget);
        m_stall->setEnabled(!budget && m_cache->isChecked());
        m_slabs->setEnabled(!budget);
    };
    connect(m_maxmemory, &QLineEdit::textChanged, this, budgetSet);
    budgetSet();
    auto* row = new QHBoxLayout;
    row->addWidget(m_maxmemory, 1);
    row->addWidget(m_policy);
    row->addWidget(m_fillOnMiss);
    return row;
}

QString SweepPage::currentLayoutSpec() const {
    // A layout file is listed by its file name; its item carries the spec.
    const QString text = m_layout->currentText().trimmed();
    const int index = m_layout->currentIndex();
    if (index >= 0 && m_layout->itemText(index) == text && m_layout->itemData(index, kSpecRole).isValid())
        return m_layout->itemData(index, kSpecRole).toString();
    return text;
}

QString SweepPage::layoutFile() const {
    return qt(layoutFilePath(currentLayoutSpec().toStdString()));
}

void SweepPage::setLayoutFile(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const QString spec = qt(layoutFileSpec(absolute.toStdString()));
    int index = m_layout->findData(spec, kSpecRole);
    if (index < 0) {
        m_layout->addItem(tr("%1 (layout file)").arg(QFileInfo(path).fileName()));
        index = m_layout->count() - 1;
        m_layout->setItemData(index, spec, kSpecRole);
        m_layout->setItemData(index, tr("Layout file %1").arg(absolute), Qt::ToolTipRole);
    }
    m_layout->setCurrentIndex(index);
}

void SweepPage::chooseLayoutFile() {
    const QString start = layoutFile().isEmpty() ? QSettings().value(QStringLiteral("sweep/layoutFileDir")).toString()
                                                 : QFileInfo(layoutFile()).absolutePath();
    const QString path
        = QFileDialog::getOpenFileName(this, tr("Open Layout File"), start, tr("Layout files (*.toml);;All files (*)"));
    if (path.isEmpty())
        return;
    QSettings().setValue(QStringLiteral("sweep/layoutFileDir"), QFileInfo(path).absolutePath());
    setLayoutFile(path);
    // Checked at once, so a malformed file is reported when it is chosen, not when it is run.
    if (auto layout = parseLayout(currentLayoutSpec().toStdString()); !layout)
        emit failed(errorText(layout.error()));
}

void SweepPage::watchLayoutFile() {
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    const QString path = layoutFile();
    if (!path.isEmpty() && QFileInfo::exists(path))
        m_watcher->addPath(path);
}

void SweepPage::layoutFileChanged() {
    m_reloadPending = false;
    // Only a file that was swept here, still chosen, and with re-runs on.
    if (!m_rerunOnChange->isChecked() || m_sweptLayoutFile.isEmpty() || layoutFile() != m_sweptLayoutFile)
        return;
    if (m_runner.busy()) {
        m_reloadPending = true;
        return;
    }
    QString error;
    if (!startSweep(&error)) {
        // Shown in place, not in a dialog: the file is being edited, and the next save may fix it.
        m_summary->setText(tr("<b>The layout file changed but cannot be used:</b> %1").arg(error.toHtmlEscaped()));
        emit layoutFileReloaded(error);
        return;
    }
    m_summary->setText(tr("The layout file changed: sweeping again…"));
    emit layoutFileReloaded(QString());
}

void SweepPage::setTracePath(const QString& path) {
    m_tracePath = path;
    m_summary->setText(
        tr("Trace: %1. Choose a layout and thresholds, then Run sweep.").arg(QFileInfo(path).fileName()));
}

bool SweepPage::startSweep(QString* error) {
    auto fail = [error](const QString& text) {
        if (error)
            *error = text;
        return false;
    };
    if (const QString why = m_runner.refusal(m_tracePath); !why.isEmpty())
        return fail(why);
    SimulationRequest request;
    request.tracePath = m_tracePath.toStdString();
    request.layout = currentLayoutSpec().toStdString();
    request.allocator = m_allocator->currentText().trimmed().toStdString();
    request.thresholds = m_thresholds->text().trimmed().toStdString();
    request.layoutWithoutThresholdRunsOnce = true; // memcached stores every item whole: one point
    request.withShippedThreshold
        = SimulationRequest::Shipped::WithinRange; // in range: Compare meets layouts at their shipped settings
    request.cache = m_cache->isChecked();
    request.getPipeline = static_cast<std::uint32_t>(m_getPipeline->value());
    request.slabs = m_slabs->isChecked();
    request.slabsWhereCovered = true; // glibc has no slab model: the sweep runs without it
    request.timeline = m_slabs->isChecked() ? kTimelineSamples : 0;
    if (const QString budget = m_maxmemory->text().trimmed(); !budget.isEmpty()) {
        if (budget.contains(QLatin1Char(':')) || budget.contains(QLatin1Char(',')))
            return fail(tr("The Sweep view takes one budget; a miss-ratio curve over several is the Cache curve "
                           "view's"));
        // The budget is replayed threshold by threshold: without the cache and slab models. memcached's is its
        // -m, with its own per-class LRU and no policy to choose.
        if (currentLayoutSpec().startsWith(QLatin1String("memcached"))) {
            request.memoryLimit = budget.toStdString();
        } else {
            request.maxmemory = budget.toStdString();
            request.evictionPolicy = m_policy->currentText().toStdString();
        }
        request.fillOnMiss = m_fillOnMiss->isChecked();
        request.cache = false;
        request.slabs = false;
        request.timeline = 0;
    }
    request.limitSweep = m_limitControls->parameter().toStdString();
    request.toolVersion = LAYOUTLAB_VERSION;
    auto built = buildSimulationJob(request);
    if (!built)
        return fail(errorText(built.error()));
    m_sweptLayoutFile = layoutFile();
    const SimulationJob job = std::move(*built);
    const bool predictStall = m_stall->isChecked() && job.config.cache.has_value();
    auto outcome = std::make_shared<SimulationJobOutcome>();
    auto latencies = std::make_shared<std::optional<LoadLatencies>>();
    const std::string dbPath = m_databasePath().toStdString();
    connect(
        &m_runner, &TaskRunner::finished, this,
        [this, outcome, latencies, before = m_summary->text()](const QString&, const QString& failure, bool cancelled) {
            if (cancelled || !failure.isEmpty()) { // what was shown before stays, and says why
                m_summary->setText(
                    (cancelled ? tr("The sweep was cancelled.") : tr("The sweep failed.")) + QLatin1Char(' ') + before);
                if (!cancelled)
                    emit failed(failure);
                return;
            }
            showResult(outcome->result, *latencies);
            if (outcome->runId)
                emit runStored(outcome->runId);
        },
        Qt::SingleShotConnection);
    m_summary->setText(tr("Sweeping %1 with %2 over thresholds %3… (progress and Cancel in the status bar)")
                           .arg(QFileInfo(m_tracePath).fileName().toHtmlEscaped(), currentLayoutSpec().toHtmlEscaped(),
                               m_thresholds->text().trimmed().toHtmlEscaped()));
    m_runner.start(tr("sweep"),
        storedJob(dbPath, outcome,
            [job, predictStall, latencies](
                ResultsDb* db, ProgressSink& progress, std::stop_token stop) -> Expected<SimulationJobOutcome> {
                SimulationJob measured = job;
                if (predictStall) { // first, so that the sweep's own work does not disturb the timing
                    progress.phase("measuring load latencies");
                    auto kept = measureAndKeepLoadLatencies(measured, stop);
                    if (!kept)
                        return kept.error();
                    *latencies = *kept;
                }
                return runSimulationJob(measured, db, &progress, stop);
            }));
    return true;
}

void SweepPage::showResult(const SimulationResult& result, const std::optional<LoadLatencies>& latencies) {
    m_model.setResult(result, latencies);
    m_cursor.reset();
    m_cursorLine->setText(result.points.size() > 1 ? tr("Click or drag on a chart (or pick a row) to put the "
                                                        "threshold cursor there.")
                                                   : QString());
    const auto& t = result.trace;
    QLocale locale;
    QString text = tr("<b>%1</b> on %2 with %3: %4 requests, %5 live keys, %6 distinct shapes.")
                       .arg(qt(layoutLabel(result.layoutSpec)).toHtmlEscaped(),
                           QFileInfo(qt(result.traceName)).fileName().toHtmlEscaped(),
                           qt(result.allocatorSpec).toHtmlEscaped(), locale.toString(qulonglong(t.requests)),
                           locale.toString(qulonglong(t.liveKeys)), locale.toString(qulonglong(t.distinctShapes)));
    if (flatSweep(result.points)) {
        text += tr(" The threshold has <b>no effect in this range</b>: %1 bytes per key at every threshold.")
                    .arg(locale.toString(result.points.front().usableBytesPerKey, 'f', 2));
    } else if (!result.points.empty() && !result.thresholdName.empty()) {
        const ThresholdPoint& best = result.points[leanestPoint(result.points)];
        text += tr(" Leanest threshold: <b>%1</b> (%2 bytes per key).")
                    .arg(best.threshold)
                    .arg(locale.toString(best.usableBytesPerKey, 'f', 2));
        for (const std::uint32_t mark : { 64u, 128u })
            for (const auto& p : result.points)
                if (p.threshold == mark && mark != best.threshold)
                    text += tr(" At %1: %2 bytes per key (%3%4).")
                                .arg(mark)
                                .arg(locale.toString(p.usableBytesPerKey, 'f', 2))
                                .arg(p.usableBytesPerKey >= best.usableBytesPerKey ? QStringLiteral("+") : QString())
                                .arg(locale.toString(p.usableBytesPerKey - best.usableBytesPerKey, 'f', 2));
    }
    text += tr(" Bytes per key include the hash index tables.");
    if (!result.points.empty() && result.points.front().budget) {
        // A cache: what decides is the hit ratio the budget gives each threshold.
        const ThresholdPoint* best = &result.points.front();
        for (const auto& p : result.points)
            if (p.budget->hitRatio() > best->budget->hitRatio())
                best = &p;
        const bool memcached = result.layoutSpec.rfind("memcached", 0) == 0;
        text += tr(" Under %1 %2 (%3): best hit ratio <b>%4%</b> at %5, %6 keys held.")
                    .arg(memcached ? QStringLiteral("-m") : QStringLiteral("maxmemory"),
                        qt(bytesText(double(best->budget->maxmemoryBytes))), qt(result.budgetPolicy).toHtmlEscaped())
                    .arg(locale.toString(100 * best->budget->hitRatio(), 'f', 2))
                    .arg(result.thresholdName.empty() ? tr("its one setting") : QString::number(best->threshold))
                    .arg(locale.toString(qulonglong(best->keys)));
        for (const std::uint32_t mark : { 64u, 128u })
            for (const auto& p : result.points)
                if (p.threshold == mark && &p != best)
                    text += tr(" At %1: %2%, %3 keys.")
                                .arg(mark)
                                .arg(locale.toString(100 * p.budget->hitRatio(), 'f', 2))
                                .arg(locale.toString(qulonglong(p.keys)));
    }
    if (!result.slabTable.empty() && !result.points.empty()) {
        // What the allocator keeps: the leanest by active bytes, when it is another threshold.
        std::size_t leanestActive = 0;
        for (std::size_t i = 1; i < result.points.size(); ++i)
            if (result.points[i].arena && result.points[leanestActive].arena
                && result.points[i].arena->activeBytes < result.points[leanestActive].arena->activeBytes)
                leanestActive = i;
        const ThresholdPoint& a = result.points[leanestActive];
        if (a.arena && a.keys)
            text += tr(" Allocator's pages: %1 active bytes per key at %2 (%3× what is allocated).")
                        .arg(locale.toString(double(a.arena->activeBytes) / double(a.keys), 'f', 2))
                        .arg(result.thresholdName.empty() ? tr("its one setting") : QString::number(a.threshold))
                        .arg(locale.toString(a.arena->fragRatio(), 'f', 3));
    }
    if (!result.cacheGeometry.empty())
        text += tr(" Cache model: %1, %2 GETs sampled.")
                    .arg(qt(result.cacheGeometry))
                    .arg(locale.toString(qulonglong(result.cacheSampledGets)));
    text += stallSummary(result, latencies);
    m_summary->setText(text);
    redraw();
    emit resultChanged(result);
}

void SweepPage::showStoredRun(const StoredRun& stored) {
    // The form says what the run shown was made with, so that Run sweep repeats it, not stale choices.
    if (auto parameters = RunParameters::fromJson(stored.run.parametersJson)) {
        if (parameters->layoutFile && QFileInfo::exists(qt(parameters->layoutFile->path)))
            setLayoutFile(qt(parameters->layoutFile->path));
        else
            m_layout->setCurrentText(qt(parameters->layout));
        m_allocator->setCurrentText(qt(parameters->allocator));
        m_thresholds->setText(thresholdsText(parameters->thresholds));
        m_cache->setChecked(parameters->cacheGeometry.has_value());
        m_slabs->setChecked(parameters->slabModel.has_value());
        const auto& budget = parameters->extra.value("budget", nlohmann::json::object());
        m_maxmemory->setText(budget.contains("maxmemory_bytes")
                ? QString::number(budget["maxmemory_bytes"].get<std::uint64_t>())
                : QString());
        if (budget.contains("policy"))
            m_policy->setCurrentText(qt(budget["policy"].get<std::string>()));
        m_fillOnMiss->setChecked(parameters->extra.contains("fill_batch"));
        const auto& limit = parameters->extra.value("limit_sweep", nlohmann::json::object());
        m_limitControls->setFromParameters(
            qt(limit.value("name", std::string())), limit.value("values", std::vector<std::int64_t> {}));
        if (QFileInfo::exists(qt(parameters->trace)))
            m_tracePath = qt(parameters->trace);
        if (parameters->extra.contains("load_latencies")) {
            const auto latencies = loadLatenciesFromJson(parameters->extra["load_latencies"]);
            m_stall->setChecked(latencies.has_value());
            if (latencies) // the run keeps the lookups it overlapped: a pipeline that gives the same figures
                m_getPipeline->setValue(static_cast<int>(latencies->overlappedLookups));
            return showResult(stored.result, latencies);
        }
    }
    showResult(stored.result);
}

QString SweepPage::summaryText() const {
    return m_summary->text();
}

void SweepPage::saveSettings() const {
    QSettings s;
    s.setValue(QStringLiteral("sweep/layout"), currentLayoutSpec());
    s.setValue(QStringLiteral("sweep/allocator"), m_allocator->currentText());
    s.setValue(QStringLiteral("sweep/thresholds"), m_thresholds->text());
    s.setValue(QStringLiteral("sweep/cache"), m_cache->isChecked());
    s.setValue(QStringLiteral("sweep/stall"), m_stall->isChecked());
    s.setValue(QStringLiteral("sweep/getPipeline"), m_getPipeline->value());
    s.setValue(QStringLiteral("sweep/slabs"), m_slabs->isChecked());
    s.setValue(QStringLiteral("sweep/maxmemory"), m_maxmemory->text());
    s.setValue(QStringLiteral("sweep/policy"), m_policy->currentText());
    s.setValue(QStringLiteral("sweep/fillOnMiss"), m_fillOnMiss->isChecked());
    s.setValue(QStringLiteral("sweep/rerunOnChange"), m_rerunOnChange->isChecked());
    m_limitControls->saveSettings();
}

void SweepPage::restoreSettings() {
    QSettings s;
    const QString layout = s.value(QStringLiteral("sweep/layout"), m_layout->currentText()).toString();
    if (const auto file = layoutFilePath(layout.toStdString()); !file.empty())
        setLayoutFile(qt(file)); // listed among the choices again
    else
        m_layout->setCurrentText(layout);
    m_rerunOnChange->setChecked(s.value(QStringLiteral("sweep/rerunOnChange"), true).toBool());
    m_allocator->setCurrentText(s.value(QStringLiteral("sweep/allocator"), m_allocator->currentText()).toString());
    m_thresholds->setText(s.value(QStringLiteral("sweep/thresholds"), m_thresholds->text()).toString());
    m_cache->setChecked(s.value(QStringLiteral("sweep/cache"), m_cache->isChecked()).toBool());
    m_stall->setChecked(s.value(QStringLiteral("sweep/stall"), false).toBool());
    m_getPipeline->setValue(s.value(QStringLiteral("sweep/getPipeline"), 1).toInt());
    m_slabs->setChecked(s.value(QStringLiteral("sweep/slabs"), false).toBool());
    m_maxmemory->setText(s.value(QStringLiteral("sweep/maxmemory"), QString()).toString());
    m_policy->setCurrentText(s.value(QStringLiteral("sweep/policy"), m_policy->currentText()).toString());
    m_fillOnMiss->setChecked(s.value(QStringLiteral("sweep/fillOnMiss"), true).toBool());
    m_limitControls->restoreSettings();
}

} // namespace layoutlab::gui
