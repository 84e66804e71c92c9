// SPDX-License-Identifier: MIT
// The Engine view's measured curve: the engine sweep (layoutlab/jobs/engine_sweep_job.h) at several
// settings, Valkey builds at chosen thresholds or memcached slab settings, shown as measured points beside
// the predicted curve with the error at each. The sweep view draws the same points on its memory chart.
#include "engine_page.h"

#include "chart_panel.h"
#include "stored_job.h"
#include "task_runner.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/spec.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSettings>
#include <QStandardItem>
#include <QToolButton>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

namespace layoutlab::gui {

namespace {

QString qt(const std::string& s) {
    return QString::fromStdString(s);
}

QStandardItem* cellItem(const QString& text, bool number = false) {
    auto* item = new QStandardItem(text);
    item->setEditable(false);
    if (number)
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QStandardItem* valueItem(double value, int decimals) {
    auto* item = cellItem(QLocale().toString(value, 'f', decimals), true);
    item->setData(value, Qt::UserRole);
    return item;
}

// "32, 64,96" -> {32, 64, 96}; errors name the field as the form labels it.
Expected<std::vector<std::uint32_t>> parseThresholdList(const QString& text) {
    std::vector<std::uint32_t> out;
    const std::string list = text.toStdString();
    for (const auto item : splitString(list, ',')) {
        const auto trimmed = QString::fromUtf8(item.data(), qsizetype(item.size())).trimmed().toStdString();
        if (trimmed.empty())
            continue;
        const auto value = parseUnsigned(trimmed, field::kBuildThresholds);
        if (!value || *value == 0 || *value > UINT32_MAX)
            return usageError(fmt::format("'{}' is not a threshold in bytes", trimmed), field::kBuildThresholds);
        out.push_back(std::uint32_t(*value));
    }
    return out;
}

qint64 predictionRunOf(const RunRecord& run) {
    const auto parameters = nlohmann::json::parse(run.parametersJson, nullptr, false);
    return parameters.is_object() ? parameters.value("prediction_run", qint64(0)) : 0;
}

} // namespace

std::optional<EngineSweepReport> storedEngineSweep(const StoredRun& stored) {
    auto points = engineSweepPoints(stored.measurements);
    if (stored.run.kind != kEngineSweepKind || points.empty())
        return std::nullopt;
    EngineSweepReport r;
    r.trace = stored.run.traceSource;
    r.engine = points.front().engine;
    const bool memcached = r.engine == "memcached";
    r.layout = memcached ? std::string() : stored.run.layout;
    r.measures = memcached ? "slab chunk bytes per item (hash index not included)"
                           : "used_memory per key (hash index included)";
    r.points = std::move(points);
    r.measuredRun = stored.run.id;
    r.predictionRun = predictionRunOf(stored.run);
    return r;
}

qint64 engineSweepBeside(const std::vector<RunRecord>& runs, qint64 predictionRun) {
    qint64 newest = 0;
    for (const auto& r : runs)
        if (r.kind == kEngineSweepKind && r.status == "complete" && predictionRunOf(r) == predictionRun)
            newest = std::max<qint64>(newest, r.id);
    return newest;
}

QGroupBox* EnginePage::makeCurveControls() {
    auto* box = new QGroupBox(tr("Measured curve: real servers at several settings, beside the prediction"), this);
    m_source = new QLineEdit(box);
    m_source->setPlaceholderText(
        tr("a Valkey source archive (.tar.xz), built once per threshold into the engine cache"));
    auto* browse = new QToolButton(box);
    browse->setText(tr("…"));
    browse->setToolTip(tr("Choose a Valkey source archive"));
    m_buildThresholds = new QLineEdit(QStringLiteral("32,64,96,128"), box);
    m_buildThresholds->setToolTip(tr("Thresholds to build the source at (scripts/build-engine --set embed-threshold)"));
    m_curveLayout = new QLineEdit(box);
    m_curveLayout->setPlaceholderText(QStringLiteral("valkey-8.1"));
    m_curveLayout->setToolTip(
        tr("The layout the builds have, without its threshold (e.g. valkey-8.1:embstr-limit=108 to build that "
           "limit into each)"));
    m_quickBuild = new QCheckBox(tr("&Quick build (-O1: same memory layout, half the build time)"), box);
    m_quickBuild->setChecked(true);
    m_builds = new QLineEdit(box);
    m_builds->setPlaceholderText(tr("or builds already made: THRESHOLD=BINARY,…"));
    m_slabSettings = new QLineEdit(QString::fromLatin1(kDefaultSlabSettings), box);
    m_slabSettings->setToolTip(tr("memcached -f growth factor and -n minimum chunk, as FACTOR:MIN_CHUNK,…"));
    m_measureCurve = new QPushButton(tr("&Measure curve"), box);
    m_measureCurve->setToolTip(tr("Start one server per setting, load the trace into each, and put every measured "
                                  "bytes per key beside the prediction"));

    auto* grid = new QGridLayout(box);
    auto label = [box](const QString& text, QWidget* buddy) {
        auto* l = new QLabel(text, box);
        l->setBuddy(buddy);
        return l;
    };
    grid->addWidget(label(tr("Valkey &source:"), m_source), 0, 0);
    grid->addWidget(m_source, 0, 1, 1, 3);
    grid->addWidget(browse, 0, 4);
    grid->addWidget(label(tr("&Thresholds to build:"), m_buildThresholds), 1, 0);
    grid->addWidget(m_buildThresholds, 1, 1);
    grid->addWidget(label(tr("Layout &built:"), m_curveLayout), 1, 2);
    grid->addWidget(m_curveLayout, 1, 3, 1, 2);
    grid->addWidget(m_quickBuild, 2, 1, 1, 4);
    grid->addWidget(label(tr("B&uilds:"), m_builds), 3, 0);
    grid->addWidget(m_builds, 3, 1, 1, 4);
    grid->addWidget(label(tr("S&lab settings (memcached):"), m_slabSettings), 4, 0);
    grid->addWidget(m_slabSettings, 4, 1, 1, 3);
    grid->addWidget(m_measureCurve, 4, 4);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);

    connect(browse, &QToolButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Valkey source archive"), m_source->text(),
            tr("Source archives (*.tar.xz *.tar.gz *.tgz);;All files (*)"));
        if (!path.isEmpty())
            m_source->setText(path);
    });
    connect(m_measureCurve, &QPushButton::clicked, this, [this] {
        QString error;
        if (!startCurve(&error))
            emit failed(error);
    });
    return box;
}

Expected<EngineSweepRequest> EnginePage::engineSweepRequest() const {
    EngineSweepRequest r;
    r.drive = driveRequest();
    r.drive.serverBinary.clear(); // each setting's server is the sweep's
    r.drive.connect.clear();
    if (r.drive.engine == Engine::Memcached) {
        auto settings = parseSlabSettings(m_slabSettings->text().trimmed().toStdString());
        if (!settings)
            return settings.error();
        r.serverSettings = std::move(*settings);
        return r;
    }
    r.layout = m_curveLayout->text().trimmed().toStdString();
    if (!m_builds->text().trimmed().isEmpty()) {
        auto builds = parseEngineBuilds(m_builds->text().trimmed().toStdString());
        if (!builds)
            return builds.error();
        r.builds = std::move(*builds);
    }
    if (r.drive.engine == Engine::Valkey && !m_source->text().trimmed().isEmpty()) {
        r.source = m_source->text().trimmed().toStdString();
        auto thresholds = parseThresholdList(m_buildThresholds->text());
        if (!thresholds)
            return thresholds.error();
        r.thresholds = std::move(*thresholds);
        r.buildSpeed = m_quickBuild->isChecked() ? EngineBuildSpeed::Quick : EngineBuildSpeed::Release;
    }
    return r;
}

bool EnginePage::startCurve(QString* error) {
    auto fail = [error](const QString& text) {
        if (error)
            *error = text;
        return false;
    };
    if (const QString why = m_runner.refusal(m_tracePath); !why.isEmpty())
        return fail(why);
    auto request = engineSweepRequest();
    if (!request)
        return fail(errorText(request.error()));
    if (auto ok = checkEngineSweepRequest(*request); !ok)
        return fail(errorText(ok.error()));
    auto report = std::make_shared<EngineSweepReport>();
    m_notes.clear();
    showReport({});
    const QString engine = m_engine->currentText();
    m_summary->setText(tr("Measuring %1 at %2 settings with %3… (progress by setting and phase, and Cancel, in the "
                          "status bar)")
                           .arg(engine)
                           .arg(request->serverSettings.size() + request->thresholds.size() + request->builds.size())
                           .arg(QFileInfo(m_tracePath).fileName().toHtmlEscaped()));
    connect(
        &m_runner, &TaskRunner::finished, this,
        [this, report, engine](const QString&, const QString& failure, bool cancelled) {
            emit runsStored();
            if (cancelled || !failure.isEmpty()) {
                m_summary->setText(cancelled
                        ? tr("The measured curve of %1 was cancelled; its build or server was stopped.").arg(engine)
                        : tr("The measured curve of %1 failed: %2").arg(engine, failure.toHtmlEscaped()));
                if (!cancelled)
                    emit failed(failure);
                return;
            }
            showCurve(*report);
            emit curveMeasured(report->points, qt(report->trace), qt(report->layout), report->measuredRun);
        },
        Qt::SingleShotConnection);
    m_runner.start(tr("measured curve of %1").arg(engine),
        storedJob(m_databasePath().toStdString(), report,
            [request = *request](ResultsDb* db, ProgressSink& progress, std::stop_token stop) {
                return runEngineSweepJob(request, db, &progress, stop);
            }));
    return true;
}

void EnginePage::showCurve(const EngineSweepReport& report) {
    m_report = {};
    m_curve = report;
    m_comparison.clear();
    // The allocator's active bytes per key beside them, where the servers report them (the slab model's).
    const bool active = std::any_of(report.points.begin(), report.points.end(),
        [](const EngineSweepPoint& p) { return p.activeRelativeError().has_value(); });
    QStringList headers { tr("Setting"), tr("Measured bytes/key"), tr("Predicted bytes/key"), tr("Relative error"),
        tr("GETs/s") };
    if (active)
        headers << tr("Measured active/key") << tr("Predicted active/key") << tr("Active error");
    m_comparison.setHorizontalHeaderLabels(headers);
    for (const auto& p : report.points) {
        auto* error = cellItem(relativeErrorText(p.relativeError()), true);
        error->setForeground(std::abs(p.relativeError()) <= 0.01 ? QColor(0x2e, 0x8b, 0x57) : QColor(0xb0, 0x30, 0x30));
        auto* setting = cellItem(qt(p.setting));
        setting->setToolTip(tr("%1 %2 started from %3%4")
                                .arg(qt(p.engine), qt(p.version), qt(p.server),
                                    p.build.empty() ? QString() : tr(", built with %1").arg(qt(p.build))));
        QList<QStandardItem*> row { setting, valueItem(p.measuredBytesPerKey, 2), valueItem(p.predictedBytesPerKey, 2),
            error, p.getsPerSecond ? valueItem(*p.getsPerSecond, 0) : cellItem(QString()) };
        if (const auto activeError = p.activeRelativeError())
            row << valueItem(*p.measuredActiveBytesPerKey, 2) << valueItem(*p.predictedActiveBytesPerKey, 2)
                << cellItem(relativeErrorText(*activeError), true);
        else if (active)
            row << cellItem(QString()) << cellItem(QString()) << cellItem(QString());
        m_comparison.appendRow(row);
    }
    const bool memcached = report.engine == "memcached";
    QString text = tr("<b>%1 at %2 settings</b>: bytes per key is %3. Worst error %4.")
                       .arg(qt(report.engine))
                       .arg(report.points.size())
                       .arg(qt(report.measures).toHtmlEscaped(), relativeErrorText(worstError(report.points)));
    if (!report.points.empty())
        text += tr(" Servers: %1 %2%3.")
                    .arg(qt(report.points.front().engine), qt(report.points.front().version),
                        report.points.front().build.empty() ? QString()
                                                            : tr(", built here at each threshold (engine cache)"));
    if (report.measuredRun)
        text += report.predictionRun
            ? tr(" Stored as runs %1 (predicted sweep) and %2 (measured).")
                  .arg(report.predictionRun)
                  .arg(report.measuredRun)
            : tr(" Stored as run %1 (measured, with its predictions).").arg(report.measuredRun);
    if (!memcached)
        text += tr(" The Sweep view draws these points on its memory chart when it shows this trace and layout.");
    m_summary->setText(text);

    drawCurveMemory(report, active);

    // Throughput per setting when the run phase ran.
    m_latencyData.clear();
    m_latencyData.setHorizontalHeaderLabels({ tr("Setting"), tr("GETs/s") });
    QChart* throughput = m_latencyChart->freshChart();
    QStringList categories;
    QList<double> rates;
    for (const auto& p : report.points)
        if (p.getsPerSecond) {
            categories << qt(p.setting);
            rates << *p.getsPerSecond;
            m_latencyData.appendRow({ cellItem(qt(p.setting)), valueItem(*p.getsPerSecond, 0) });
        }
    if (rates.isEmpty()) {
        throughput->setTitle(tr("Run-phase throughput per setting (no run phase: Requests was 0)"));
        return;
    }
    drawBarChart(throughput, categories, { { tr("GETs/s"), rates } }, tr("setting"), tr("GETs per second"), true);
    throughput->setTitle(tr("Run phase: GETs per second at each setting"));
}

// The measured curve's memory chart and its data: the predicted curve through the settings with the
// measured rings on it (Valkey), or measured and predicted bars per slab setting (memcached); with
// `active`, the allocator's active bytes per key beside them.
void EnginePage::drawCurveMemory(const EngineSweepReport& report, bool active) {
    const bool memcached = report.engine == "memcached";
    m_memoryData.clear();
    QStringList memoryHeaders { tr("Setting"), tr("Measured"), tr("Predicted") };
    if (active)
        memoryHeaders << tr("Measured active") << tr("Predicted active");
    m_memoryData.setHorizontalHeaderLabels(memoryHeaders);
    for (const auto& p : report.points) {
        QList<QStandardItem*> row { cellItem(qt(p.setting)), valueItem(p.measuredBytesPerKey, 2),
            valueItem(p.predictedBytesPerKey, 2) };
        if (active)
            row << valueItem(p.measuredActiveBytesPerKey.value_or(0), 2)
                << valueItem(p.predictedActiveBytesPerKey.value_or(0), 2);
        m_memoryData.appendRow(row);
    }
    QChart* chart = m_memoryChart->freshChart();
    double largest = 0;
    for (const auto& p : report.points)
        largest = std::max({ largest, p.measuredBytesPerKey, p.predictedBytesPerKey });
    const DisplayUnit unit = byteUnit(largest); // KiB for values of 100 kB and more
    if (memcached) {
        QStringList categories;
        QList<double> measured, predicted, measuredPages, predictedPages;
        for (const auto& p : report.points) {
            categories << qt(p.setting);
            measured << p.measuredBytesPerKey / unit.divisor;
            predicted << p.predictedBytesPerKey / unit.divisor;
            measuredPages << p.measuredActiveBytesPerKey.value_or(0) / unit.divisor;
            predictedPages << p.predictedActiveBytesPerKey.value_or(0) / unit.divisor;
        }
        std::vector<std::pair<QString, QList<double>>> sets { { tr("measured chunks"), measured },
            { tr("predicted chunks"), predicted } };
        if (active) // the pages memcached has malloc'ed (total_malloced), per item
            sets.insert(
                sets.end(), { { tr("measured pages"), measuredPages }, { tr("predicted pages"), predictedPages } });
        drawBarChart(chart, categories, sets, tr("slab settings"), tr("%1 per item").arg(unit.name), true);
        chart->setTitle(
            tr("Chunk bytes%1 per item by slab setting (hash index not included); worst error %2")
                .arg(active ? tr(" and page bytes") : QString(), relativeErrorText(worstError(report.points))));
    } else {
        auto* x = new QValueAxis(chart);
        x->setTitleText(tr("threshold (bytes)"));
        auto* y = new QValueAxis(chart);
        y->setTitleText(tr("%1/key").arg(unit.name));
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        auto* predicted = new QLineSeries(chart);
        predicted->setName(tr("predicted"));
        predicted->setPointsVisible(true);
        std::vector<MeasuredMark> marks;
        double low = std::numeric_limits<double>::max(), high = 0, first = 1e9, last = 0;
        for (const auto& p : report.points) {
            const double t = p.threshold.value_or(0);
            const double at = p.predictedBytesPerKey / unit.divisor, measured = p.measuredBytesPerKey / unit.divisor;
            predicted->append(t, at);
            marks.push_back({ t, measured, p.relativeError() });
            low = std::min({ low, at, measured });
            high = std::max({ high, at, measured });
            first = std::min(first, t);
            last = std::max(last, t);
        }
        chart->addSeries(predicted);
        predicted->attachAxis(x);
        predicted->attachAxis(y);
        m_memoryChart->addHoverTips(predicted, tr("threshold"), 2);
        const double pad = std::max((high - low) * 0.1, std::max(high * 0.002, 0.5));
        y->setRange(std::max(0.0, low - pad), high + pad);
        y->applyNiceNumbers();
        const double halfStep = report.points.size() > 1 ? (last - first) / double(report.points.size() - 1) / 2 : 8;
        setThresholdRange(x, first - halfStep, last + halfStep);
        addMeasuredPoints(m_memoryChart, x, y, marks, tr("measured (real servers)"), QColor(0xc0, 0x39, 0x2b));
        if (active) {
            // The allocator's active bytes per key on an axis of their own, fitted to them: the predicted line
            // dashed, the measured rings beside it.
            auto* right = new QValueAxis(chart);
            right->setTitleText(tr("active %1/key").arg(unit.name));
            chart->addAxis(right, Qt::AlignRight);
            auto* line = new QLineSeries(chart);
            line->setName(tr("predicted active"));
            line->setPointsVisible(true);
            QPen pen = line->pen();
            pen.setStyle(Qt::DashLine);
            line->setPen(pen);
            std::vector<MeasuredMark> activeMarks;
            double activeLow = std::numeric_limits<double>::max(), activeHigh = 0;
            for (const auto& p : report.points)
                if (const auto error = p.activeRelativeError()) {
                    const double t = p.threshold.value_or(0);
                    const double at = *p.predictedActiveBytesPerKey / unit.divisor;
                    const double measured = *p.measuredActiveBytesPerKey / unit.divisor;
                    line->append(t, at);
                    activeMarks.push_back({ t, measured, *error });
                    activeLow = std::min({ activeLow, at, measured });
                    activeHigh = std::max({ activeHigh, at, measured });
                }
            chart->addSeries(line);
            line->attachAxis(x);
            line->attachAxis(right);
            const double activePad = std::max((activeHigh - activeLow) * 0.1, std::max(activeHigh * 0.002, 0.5));
            right->setRange(std::max(0.0, activeLow - activePad), activeHigh + activePad);
            right->applyNiceNumbers();
            addMeasuredPoints(
                m_memoryChart, x, right, activeMarks, tr("measured active (real servers)"), QColor(0x8e, 0x44, 0xad));
        }
        chart->setTitle(active ? tr("Bytes per key by threshold, allocated and the allocator's active pages: real "
                                    "servers against the prediction")
                               : tr("Bytes per key by threshold: real servers against the prediction (hash index "
                                    "included)"));
    }
}

void EnginePage::saveCurveSettings() const {
    QSettings s;
    s.setValue(QStringLiteral("engine/curve/source"), m_source->text());
    s.setValue(QStringLiteral("engine/curve/thresholds"), m_buildThresholds->text());
    s.setValue(QStringLiteral("engine/curve/layout"), m_curveLayout->text());
    s.setValue(QStringLiteral("engine/curve/quickBuild"), m_quickBuild->isChecked());
    s.setValue(QStringLiteral("engine/curve/builds"), m_builds->text());
    s.setValue(QStringLiteral("engine/curve/slabSettings"), m_slabSettings->text());
}

void EnginePage::restoreCurveSettings() {
    QSettings s;
    m_source->setText(s.value(QStringLiteral("engine/curve/source"), m_source->text()).toString());
    m_buildThresholds->setText(
        s.value(QStringLiteral("engine/curve/thresholds"), m_buildThresholds->text()).toString());
    m_curveLayout->setText(s.value(QStringLiteral("engine/curve/layout"), m_curveLayout->text()).toString());
    m_quickBuild->setChecked(s.value(QStringLiteral("engine/curve/quickBuild"), m_quickBuild->isChecked()).toBool());
    m_builds->setText(s.value(QStringLiteral("engine/curve/builds"), m_builds->text()).toString());
    m_slabSettings->setText(s.value(QStringLiteral("engine/curve/slabSettings"), m_slabSettings->text()).toString());
}

} // namespace layoutlab::gui
