// SPDX-License-Identifier: MIT
#include "cache_curve_page.h"

#include "chart_panel.h"
#include "stored_job.h"
#include "task_runner.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/point_metrics.h"
#include "layoutlab/store/jobs.h"
#include "layoutlab/store/simulation_request.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace layoutlab::gui {

namespace {

QString qt(const std::string& s) {
    return QString::fromStdString(s);
}

constexpr double kMiB = 1024.0 * 1024.0;

} // namespace

bool isMemcachedSpec(const QString& spec) {
    return spec.startsWith(QLatin1String("memcached"));
}

CacheCurvePage::CacheCurvePage(TaskRunner& runner, std::function<QString()> databasePath, QWidget* parent)
    : QWidget(parent)
    , m_runner(runner)
    , m_databasePath(std::move(databasePath))
    , m_layout(new QLineEdit(QStringLiteral("valkey-9.1"), this))
    , m_thresholds(new QLineEdit(QStringLiteral("64,128"), this))
    , m_budgets(new QLineEdit(QStringLiteral("2mb:64mb:12"), this))
    , m_policy(new QComboBox(this))
    , m_rawSizes(new QCheckBox(tr("&raw object sizes"), this))
    , m_sampleRate(new QDoubleSpinBox(this))
    , m_baseMemory(new QLineEdit(this))
    , m_allocator(new QLineEdit(this))
    , m_run(new QPushButton(tr("&Run curve"), this))
    , m_summary(new QLabel(this))
    , m_chart(new ChartPanel(QStringLiteral("cache-curve"), this))
    , m_view(new QTableView(this)) {
    m_layout->setToolTip(tr("A layout preset or spec (valkey-9.1, redis-7.0, memcached-1.6, "
                            "valkey:threshold=128,...); memcached's budget is its -m"));
    m_thresholds->setToolTip(tr("The embed thresholds to draw, one line each: 64,128 or 32:256:32"));
    m_budgets->setToolTip(tr("The budgets: FIRST:LAST:COUNT on a log scale (2mb:64mb:12), or a list "
                             "(8mb,16mb,32mb), as the server reads maxmemory: 64mb is 64 MiB"));
    for (const char* policy : { "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu",
             "volatile-random", "volatile-ttl", "exact-lru" })
        m_policy->addItem(QString::fromLatin1(policy));
    m_policy->setToolTip(tr("maxmemory-policy (exact-lru: the least recently used key exactly, no server's; with "
                            "raw sizes, libCacheSim's LRU, every budget from one pass of stack distances)"));
    m_rawSizes->setToolTip(tr("Count each key as its key and value bytes only, as a cache simulator given object "
                              "sizes does: how much of the hit ratio the layout costs"));
    m_sampleRate->setRange(0.001, 1.0);
    m_sampleRate->setDecimals(3);
    m_sampleRate->setSingleStep(0.01);
    m_sampleRate->setValue(1.0);
    m_sampleRate->setToolTip(tr("Replay this share of the keys under the same share of each budget (SHARDS): "
                                "many budgets for little time, with the sampling error stated; 1: every key"));
    m_allocator->setPlaceholderText(tr("the layout's engine's"));
    m_allocator->setToolTip(tr("An allocator spec (jemalloc:quantum=16,page=4096): the server's linked allocator. "
                               "Measuring on a server fills it in with the one the drives found"));
    m_baseMemory->setPlaceholderText(tr("none: the budget is the keys'"));
    m_baseMemory->setToolTip(tr("What the server holds before the trace (its used_memory when empty), counted against "
                                "maxmemory as the server counts it. Measuring on a server fills it in with what the "
                                "server held"));
    connect(m_layout, &QLineEdit::textChanged, this, [this] {
        const bool memcached = memcachedLayout(); // memcached evicts by its own LRU per class, whole pages
        m_policy->setEnabled(!memcached);
        m_rawSizes->setEnabled(!memcached);
        m_sampleRate->setEnabled(!memcached);
        m_baseMemory->setEnabled(!memcached);
    });

    auto* form = new QFormLayout;
    auto buddy = [&](const QString& text, QWidget* field) {
        auto* l = new QLabel(text, this);
        l->setBuddy(field);
        return l;
    };
    // A row of the form: `main` labelled `label`, then `side` labelled `sideLabel` beside it.
    auto pairedRow = [&](const QString& label, QWidget* main, const QString& sideLabel, QWidget* side) {
        auto* row = new QHBoxLayout;
        row->addWidget(main, 2);
        row->addWidget(buddy(sideLabel, side));
        row->addWidget(side, 1);
        form->addRow(buddy(label, main), row);
    };
    pairedRow(tr("&Layout:"), m_layout, tr("&allocator:"), m_allocator);
    form->addRow(buddy(tr("&Thresholds:"), m_thresholds), m_thresholds);
    pairedRow(tr("&Budgets:"), m_budgets, tr("server's &own memory:"), m_baseMemory);
    auto* policyRow = new QHBoxLayout;
    policyRow->addWidget(m_policy);
    policyRow->addWidget(m_rawSizes);
    policyRow->addWidget(buddy(tr("sa&mple rate:"), m_sampleRate));
    policyRow->addWidget(m_sampleRate);
    policyRow->addStretch(1);
    policyRow->addWidget(m_run);
    form->addRow(buddy(tr("&Policy:"), m_policy), policyRow);
    form->addRow(tr("Measure:"), makeMeasureRow());
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setText(tr("Open a trace, then run the curve: the hit ratio at each budget, one line per threshold, "
                          "a GET miss filled by a SET as a look-aside cache does. Stored <code>layoutlab drive "
                          "--maxmemory</code> runs of the trace appear on it as measured points."));
    m_table.setHorizontalHeaderLabels(
        { tr("threshold"), tr("budget (MiB)"), tr("hit ratio (%)"), tr("evicted keys"), tr("keys held"),
            tr("bytes/key held"), tr("measured hit ratio (%)"), tr("measured by"), tr("predicted for the drive (%)") });
    m_view->setModel(&m_table);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->verticalHeader()->hide();
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_chart->setDataModel(&m_table);
    m_chart->setMinimumHeight(320);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("cacheCurveSplitter"));
    splitter->addWidget(m_chart);
    splitter->addWidget(m_view);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_summary);
    layout->addWidget(splitter, 1);
    connect(m_run, &QPushButton::clicked, this, [this] {
        QString error;
        if (!startCurve(&error))
            emit failed(error);
    });
    draw();
}

bool CacheCurvePage::memcachedLayout() const {
    return isMemcachedSpec(m_layout->text().trimmed());
}

void CacheCurvePage::setTracePath(const QString& path) {
    m_tracePath = path;
}

bool CacheCurvePage::startCurve(QString* error) {
    auto fail = [&](const QString& why) {
        if (error)
            *error = why;
        return false;
    };
    if (const QString why = m_runner.refusal(m_tracePath); !why.isEmpty())
        return fail(why);
    SimulationRequest request;
    request.tracePath = m_tracePath.toStdString();
    request.layout = m_layout->text().trimmed().toStdString();
    request.thresholds = m_thresholds->text().trimmed().toStdString();
    request.allocator = m_allocator->text().trimmed().toStdString();
    request.layoutWithoutThresholdRunsOnce = true; // memcached: one line
    const std::string budgets = m_budgets->text().trimmed().toStdString();
    if (budgets.empty())
        return fail(tr("Budgets: give the memory budgets, e.g. 2mb:64mb:12"));
    if (memcachedLayout()) {
        request.memoryLimit = budgets;
    } else {
        request.maxmemory = budgets;
        request.evictionPolicy = m_policy->currentText().toStdString();
        request.rawSizes = m_rawSizes->isChecked();
        request.budgetSampleRate = m_sampleRate->value();
        request.baseMemory = m_baseMemory->text().trimmed().toStdString();
    }
    request.fillOnMiss = true; // a cache: what a GET misses, its client fills
    request.toolVersion = LAYOUTLAB_VERSION;
    auto built = buildSimulationJob(request);
    if (!built)
        return fail(errorText(built.error()));
    const SimulationJob job = std::move(*built);
    auto outcome = std::make_shared<SimulationJobOutcome>();
    connect(
        &m_runner, &TaskRunner::finished, this,
        [this, outcome, before = m_summary->text()](const QString&, const QString& failure, bool cancelled) {
            if (cancelled || !failure.isEmpty()) {
                m_summary->setText(
                    (cancelled ? tr("The curve was cancelled.") : tr("The curve failed.")) + QLatin1Char(' ') + before);
                if (!cancelled)
                    emit failed(failure);
                return;
            }
            showResult(outcome->result);
            if (outcome->runId)
                emit runStored(outcome->runId);
        },
        Qt::SingleShotConnection);
    m_summary->setText(
        tr("Running the curve of %1 with %2 over budgets %3… (progress and Cancel in the status bar)")
            .arg(QFileInfo(m_tracePath).fileName().toHtmlEscaped(), m_layout->text().trimmed().toHtmlEscaped(),
                m_budgets->text().trimmed().toHtmlEscaped()));
    saveSettings();
    return m_runner.start(tr("cache curve"),
        storedJob(m_databasePath().toStdString(), outcome,
            [job](ResultsDb* db, ProgressSink& progress, std::stop_token stop) {
                return runSimulationJob(job, db, &progress, stop);
            }));
}

void CacheCurvePage::showResult(const SimulationResult& result) {
    m_result = result;
    loadMeasured();
    fillTable();
    draw();
    const bool memcached = isMemcachedSpec(qt(result.layoutSpec));
    QString text
        = tr("<b>%1</b> on %2: %3 (%4).")
              .arg(qt(result.layoutSpec).toHtmlEscaped(), QFileInfo(qt(result.traceName)).fileName().toHtmlEscaped(),
                  memcached ? tr("-m budgets") : tr("maxmemory budgets"), qt(result.budgetPolicy).toHtmlEscaped());
    if (!result.budgetMethod.empty())
        text += QLatin1Char(' ') + tr("Computed by %1.").arg(qt(result.budgetMethod).toHtmlEscaped());
    if (result.budgetSampleRate < 1.0)
        text += QLatin1Char(' ')
            + tr("Sampled: %1% of the keys (%2 keys), hit ratios within ±%3 points.")
                  .arg(QLocale().toString(100 * result.budgetSampleRate, 'g', 3))
                  .arg(result.budgetSampledKeys)
                  .arg(QLocale().toString(100 * result.budgetSamplingError, 'f', 2));
    if (!memcached && !m_measured.empty()
        && (m_measured.front().baseBytes != result.budgetBaseBytes
            || m_measured.front().allocator != qt(result.allocatorSpec)))
        text += QLatin1Char(' ')
            + tr("The servers measured held %1 before the trace under %2; this curve counts %3 under %4: run it again "
                 "with the server's own memory and allocator the drives found (filled in) to compare like with like.")
                  .arg(qt(bytesText(double(m_measured.front().baseBytes))), m_measured.front().allocator,
                      qt(bytesText(double(result.budgetBaseBytes))), qt(result.allocatorSpec));
    text += QLatin1Char(' ')
        + (m_measured.empty()
                ? tr("No stored drive of this trace under this policy to put beside it (<code>layoutlab drive "
                     "--maxmemory SIZE --policy P</code> stores one).")
                : tr("Measured points from stored drives: %1. A drive sends the trace faster than it was recorded, "
                     "and the server's LRU and LFU clocks see its pace: the prediction for each drive, on the clock "
                     "it ran on, is in the table's last column.")
                      .arg(m_measured.size()));
    m_summary->setText(text);
}

void CacheCurvePage::fillTable() {
    m_table.removeRows(0, m_table.rowCount());
    QLocale locale;
    auto number = [](double v, const QString& text) {
        auto* item = new QStandardItem(text);
        item->setData(v, Qt::UserRole);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        return item;
    };
    auto forDrive = [&](const MeasuredHitRatio& m) {
        return m.predictedForDrive < 0
            ? new QStandardItem
            : number(100 * m.predictedForDrive, locale.toString(100 * m.predictedForDrive, 'f', 2));
    };
    std::vector<bool> shown(m_measured.size(), false);
    for (const ThresholdPoint& p : m_result.points) {
        if (!p.budget)
            continue;
        QList<QStandardItem*> row;
        row << number(p.threshold, QString::number(p.threshold));
        row << number(
            double(p.budget->maxmemoryBytes) / kMiB, locale.toString(double(p.budget->maxmemoryBytes) / kMiB, 'f', 2));
        row << number(100 * p.budget->hitRatio(), locale.toString(100 * p.budget->hitRatio(), 'f', 2));
        row << number(double(p.budget->evictedKeys), locale.toString(qulonglong(p.budget->evictedKeys)));
        row << number(double(p.keys), locale.toString(qulonglong(p.keys)));
        const double perKey = p.keys ? double(p.usableBytes) / double(p.keys) : 0;
        row << number(perKey, locale.toString(perKey, 'f', 1));
        const auto measured = std::find_if(m_measured.begin(), m_measured.end(), [&](const MeasuredHitRatio& m) {
            return m.budgetBytes == p.budget->maxmemoryBytes && m.threshold == p.threshold;
        });
        if (measured != m_measured.end()) {
            row << number(100 * measured->hitRatio, locale.toString(100 * measured->hitRatio, 'f', 2));
            row << new QStandardItem(measured->source);
            row << forDrive(*measured);
            shown[std::size_t(measured - m_measured.begin())] = true;
        } else {
            row << new QStandardItem << new QStandardItem << new QStandardItem;
        }
        m_table.appendRow(row);
    }
    // Drives at budgets the curve does not have: rows of their own, nothing predicted.
    for (std::size_t i = 0; i < m_measured.size(); ++i) {
        if (shown[i])
            continue;
        const MeasuredHitRatio& m = m_measured[i];
        QList<QStandardItem*> row;
        row << number(m.threshold, QString::number(m.threshold));
        row << number(double(m.budgetBytes) / kMiB, locale.toString(double(m.budgetBytes) / kMiB, 'f', 2));
        for (int empty = 0; empty < 4; ++empty)
            row << new QStandardItem;
        row << number(100 * m.hitRatio, locale.toString(100 * m.hitRatio, 'f', 2));
        row << new QStandardItem(m.source);
        row << forDrive(m);
        m_table.appendRow(row);
    }
}

void CacheCurvePage::draw() {
    QChart* chart = m_chart->freshChart();
    const bool memcached = isMemcachedSpec(qt(m_result.layoutSpec));
    chart->setTitle(m_result.points.empty()
            ? tr("Hit ratio against the memory budget")
            : tr("Hit ratio against %1 (%2)")
                  .arg(memcached ? QStringLiteral("-m") : QStringLiteral("maxmemory"), qt(m_result.budgetPolicy)));
    auto* x = new QLogValueAxis(chart);
    x->setBase(2);
    x->setLabelFormat(QStringLiteral("%.3g"));
    x->setTitleText(memcached ? tr("-m (MiB, log scale)") : tr("maxmemory (MiB, log scale)"));
    auto* y = new QValueAxis(chart);
    y->setTitleText(tr("hit ratio (%)"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    // One line per threshold, its measured points in the same colour.
    std::map<std::uint32_t, QLineSeries*> lines;
    double low = 100, high = 0, left = 0, right = 0;
    auto widen = [&](double mib, double percent) {
        low = std::min(low, percent);
        high = std::max(high, percent);
        left = left == 0 ? mib : std::min(left, mib);
        right = std::max(right, mib);
    };
    for (const ThresholdPoint& p : m_result.points) {
        if (!p.budget)
            continue;
        QLineSeries*& series = lines[p.threshold];
        if (!series) {
            series = new QLineSeries(chart);
            series->setName(p.threshold ? tr("threshold %1").arg(p.threshold) : tr("predicted"));
            series->setPointsVisible(true);
        }
        const double mib = double(p.budget->maxmemoryBytes) / kMiB;
        series->append(mib, 100 * p.budget->hitRatio());
        widen(mib, 100 * p.budget->hitRatio());
    }
    for (auto& [threshold, series] : lines) {
        chart->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(y);
        m_chart->addHoverTips(series, tr("MiB"), 2);
    }
    std::map<std::uint32_t, QScatterSeries*> marks;
    for (const MeasuredHitRatio& m : m_measured) {
        QScatterSeries*& series = marks[m.threshold];
        if (!series) {
            series = new QScatterSeries(chart);
            series->setName(m.threshold ? tr("measured at %1").arg(m.threshold) : tr("measured"));
            series->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
            series->setMarkerSize(11);
            if (const auto line = lines.find(m.threshold); line != lines.end())
                series->setColor(line->second->color().darker(130));
        }
        const double mib = double(m.budgetBytes) / kMiB;
        series->append(mib, 100 * m.hitRatio);
        widen(mib, 100 * m.hitRatio);
    }
    // Each drive's own prediction (on the clock it ran on): where the model puts the measured point.
    QScatterSeries* forDrives = nullptr;
    for (const MeasuredHitRatio& m : m_measured) {
        if (m.predictedForDrive < 0)
            continue;
        if (!forDrives) {
            forDrives = new QScatterSeries(chart);
            forDrives->setName(tr("predicted for each drive"));
            forDrives->setMarkerShape(QScatterSeries::MarkerShapeCircle);
            forDrives->setMarkerSize(18);
            forDrives->setBrush(Qt::NoBrush); // a ring around the measured square it predicts
            QPen ring(palette().color(QPalette::WindowText));
            ring.setWidthF(2);
            forDrives->setPen(ring);
        }
        const double mib = double(m.budgetBytes) / kMiB;
        forDrives->append(mib, 100 * m.predictedForDrive);
        widen(mib, 100 * m.predictedForDrive);
    }
    for (auto& [threshold, series] : marks)
        chart->addSeries(series);
    if (forDrives)
        chart->addSeries(forDrives);
    for (QAbstractSeries* series : chart->series())
        if (auto* scatter = qobject_cast<QScatterSeries*>(series)) {
            scatter->attachAxis(x);
            scatter->attachAxis(y);
            m_chart->addHoverTips(scatter, tr("MiB"), 2);
        }
    if (right > 0) {
        x->setRange(left / 1.15, right * 1.15);
        const double pad = std::max((high - low) * 0.08, 0.5);
        y->setRange(std::max(0.0, low - pad), std::min(100.0, high + pad));
        y->applyNiceNumbers();
    } else {
        x->setRange(1, 64);
        y->setRange(0, 100);
    }
}

QString CacheCurvePage::summaryText() const {
    return m_summary->text();
}

void CacheCurvePage::saveSettings() const {
    QSettings s;
    s.setValue(QStringLiteral("cacheCurve/layout"), m_layout->text());
    s.setValue(QStringLiteral("cacheCurve/thresholds"), m_thresholds->text());
    s.setValue(QStringLiteral("cacheCurve/budgets"), m_budgets->text());
    s.setValue(QStringLiteral("cacheCurve/policy"), m_policy->currentText());
    s.setValue(QStringLiteral("cacheCurve/rawSizes"), m_rawSizes->isChecked());
    s.setValue(QStringLiteral("cacheCurve/sampleRate"), m_sampleRate->value());
    s.setValue(QStringLiteral("cacheCurve/baseMemory"), m_baseMemory->text());
    s.setValue(QStringLiteral("cacheCurve/allocator"), m_allocator->text());
    s.setValue(QStringLiteral("cacheCurve/engine"), m_engine->currentText());
    s.setValue(QStringLiteral("cacheCurve/serverBinary"), m_serverBinary->text());
    s.setValue(QStringLiteral("cacheCurve/measureAt"), m_measureAt->text());
}

void CacheCurvePage::restoreSettings() {
    QSettings s;
    m_layout->setText(s.value(QStringLiteral("cacheCurve/layout"), m_layout->text()).toString());
    m_thresholds->setText(s.value(QStringLiteral("cacheCurve/thresholds"), m_thresholds->text()).toString());
    m_budgets->setText(s.value(QStringLiteral("cacheCurve/budgets"), m_budgets->text()).toString());
    m_policy->setCurrentText(s.value(QStringLiteral("cacheCurve/policy"), m_policy->currentText()).toString());
    m_rawSizes->setChecked(s.value(QStringLiteral("cacheCurve/rawSizes"), false).toBool());
    m_sampleRate->setValue(s.value(QStringLiteral("cacheCurve/sampleRate"), 1.0).toDouble());
    m_baseMemory->setText(s.value(QStringLiteral("cacheCurve/baseMemory"), QString()).toString());
    m_allocator->setText(s.value(QStringLiteral("cacheCurve/allocator"), QString()).toString());
    m_engine->setCurrentText(s.value(QStringLiteral("cacheCurve/engine"), m_engine->currentText()).toString());
    m_serverBinary->setText(s.value(QStringLiteral("cacheCurve/serverBinary"), QString()).toString());
    m_measureAt->setText(s.value(QStringLiteral("cacheCurve/measureAt"), QString()).toString());
}

} // namespace layoutlab::gui
