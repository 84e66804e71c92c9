// SPDX-License-Identifier: MIT
#include "engine_page.h"

#include "kept_splitter.h"

#include "chart_panel.h"
#include "stored_job.h"
#include "task_runner.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include <memory>
#include <nlohmann/json.hpp>

namespace layoutlab::gui {

namespace {
QStandardItem* textItem(const QString& text) {
    auto* item = new QStandardItem(text);
    item->setEditable(false);
    return item;
}
QStandardItem* numberItem(double value, int decimals) {
    auto* item = new QStandardItem(QLocale().toString(value, 'f', decimals));
    item->setData(value, Qt::UserRole);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setEditable(false);
    return item;
}
// A relative error, green within `tolerance` (the target the tests hold it to), red beyond.
QStandardItem* errorItem(double error, double tolerance) {
    auto* item = textItem(relativeErrorText(error));
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setForeground(std::abs(error) <= tolerance ? QColor(0x2e, 0x8b, 0x57) : QColor(0xb0, 0x30, 0x30));
    return item;
}

} // namespace

EnginePage::EnginePage(TaskRunner& runner, std::function<QString()> databasePath, QWidget* parent)
    : QWidget(parent)
    , m_runner(runner)
    , m_databasePath(std::move(databasePath))
    , m_engine(new QComboBox(this))
    , m_start(new QRadioButton(tr("Start a server from"), this))
    , m_attach(new QRadioButton(tr("Attach to an empty server at"), this))
    , m_binary(new QLineEdit(this))
    , m_connect(new QLineEdit(this))
    , m_framing(new QComboBox(this))
    , m_runRequests(new QSpinBox(this))
    , m_connections(new QSpinBox(this))
    , m_pipeline(new QSpinBox(this))
    , m_run(new QPushButton(tr("Load and run"), this))
    , m_summary(new QLabel(this))
    , m_table(new QTableView(this))
    , m_memoryChart(new ChartPanel(QStringLiteral("engine-memory"), this))
    , m_latencyChart(new ChartPanel(QStringLiteral("engine-latency"), this)) {
    m_engine->addItems({ QStringLiteral("redis"), QStringLiteral("valkey"), QStringLiteral("memcached") });
    m_binary->setPlaceholderText(tr("the engine's binary on PATH"));
    m_connect->setPlaceholderText(QStringLiteral("127.0.0.1:6379"));
    m_framing->addItems({ QStringLiteral("raw"), QStringLiteral("marshal-utf8"), QStringLiteral("marshal-binary"),
        QStringLiteral("rails-7.1") });
    m_framing->setToolTip(tr("How a memcached client frames values: raw, Ruby Marshal (Dalli), a Rails cache entry"));
    m_runRequests->setRange(0, 100000000);
    m_runRequests->setSingleStep(10000);
    m_runRequests->setValue(100000);
    m_runRequests->setToolTip(tr("GETs of the run phase, the trace's reads in order (0: load only)"));
    m_connections->setRange(1, 256);
    m_connections->setValue(4);
    m_pipeline->setRange(1, 4096);
    m_pipeline->setValue(16);
    m_start->setChecked(true);
    auto* group = new QButtonGroup(this);
    group->addButton(m_start);
    group->addButton(m_attach);

    auto* server = new QGroupBox(tr("Server"), this);
    auto* serverGrid = new QGridLayout(server);
    serverGrid->addWidget(new QLabel(tr("&Engine:"), server), 0, 0);
    serverGrid->addWidget(m_engine, 0, 1);
    serverGrid->addWidget(new QLabel(tr("&Framing (memcached):"), server), 0, 2);
    serverGrid->addWidget(m_framing, 0, 3);
    serverGrid->addWidget(m_start, 1, 0);
    serverGrid->addWidget(m_binary, 1, 1, 1, 3);
    serverGrid->addWidget(m_attach, 2, 0);
    serverGrid->addWidget(m_connect, 2, 1, 1, 3);
    qobject_cast<QLabel*>(serverGrid->itemAtPosition(0, 0)->widget())->setBuddy(m_engine);
    qobject_cast<QLabel*>(serverGrid->itemAtPosition(0, 2)->widget())->setBuddy(m_framing);
    auto* run = new QGroupBox(tr("Run phase"), this);
    auto* runForm = new QFormLayout(run);
    runForm->addRow(tr("&Requests:"), m_runRequests);
    runForm->addRow(tr("&Connections:"), m_connections);
    runForm->addRow(tr("&Pipeline:"), m_pipeline);
    auto* controls = new QHBoxLayout;
    controls->addWidget(server, 3);
    controls->addWidget(run, 1);
    controls->addWidget(m_run, 0, Qt::AlignBottom);

    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table->setModel(&m_comparison);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_memoryChart->setDataModel(&m_memoryData);
    m_latencyChart->setDataModel(&m_latencyData);
    auto* charts = new QWidget(this);
    auto* chartRow = new QHBoxLayout(charts);
    chartRow->setContentsMargins(0, 0, 0, 0);
    chartRow->addWidget(m_memoryChart);
    chartRow->addWidget(m_latencyChart);
    auto* splitter = keptSplitter(Qt::Vertical, QStringLiteral("engine-splitter"), m_table, 1, charts, 2, this);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(makeCurveControls());
    layout->addWidget(m_summary);
    layout->addWidget(splitter, 1);

    connect(m_engine, &QComboBox::currentIndexChanged, this, [this] { updateControls(); });
    connect(m_attach, &QRadioButton::toggled, this, [this] { updateControls(); });
    connect(m_run, &QPushButton::clicked, this, [this] {
        QString error;
        if (!startDrive(&error))
            emit failed(error);
    });
    connect(&m_runner, &TaskRunner::started, this, [this] {
        m_run->setEnabled(false);
        m_measureCurve->setEnabled(false);
    });
    connect(&m_runner, &TaskRunner::finished, this, [this] {
        m_run->setEnabled(true);
        m_measureCurve->setEnabled(true);
    });
    updateControls();
    showReport({});
}

void EnginePage::updateControls() {
    const bool memcached = m_engine->currentText() == QLatin1String("memcached");
    const bool valkey = m_engine->currentText() == QLatin1String("valkey");
    m_framing->setEnabled(memcached);
    m_binary->setEnabled(!m_attach->isChecked());
    m_connect->setEnabled(m_attach->isChecked());
    m_slabSettings->setEnabled(memcached);
    // Only Valkey is built from source here; Redis builds can be picked.
    m_source->setEnabled(valkey);
    m_buildThresholds->setEnabled(valkey);
    m_quickBuild->setEnabled(valkey);
    m_curveLayout->setEnabled(!memcached);
    m_builds->setEnabled(!memcached);
}

void EnginePage::setTracePath(const QString& path) {
    m_tracePath = path;
    if (m_report.isEmpty())
        m_summary->setText(tr("Trace: %1. Choose an engine, then Load and run: the server's memory per key appears "
                              "beside the simulator's prediction.")
                               .arg(QFileInfo(path).fileName()));
}

DriveRequest EnginePage::driveRequest() const {
    DriveRequest r;
    r.tracePath = m_tracePath.toStdString();
    r.engine = parseEngine(m_engine->currentText().toStdString()).value_or(Engine::Redis);
    if (m_attach->isChecked())
        r.connect = m_connect->text().trimmed().toStdString();
    else
        r.serverBinary = m_binary->text().trimmed().toStdString();
    if (r.engine == Engine::Memcached)
        r.framing = m_framing->currentText().toStdString();
    r.run.requests = std::uint64_t(m_runRequests->value());
    r.run.connections = std::uint32_t(m_connections->value());
    r.run.pipeline = std::uint32_t(m_pipeline->value());
    r.toolVersion = LAYOUTLAB_VERSION;
    return r;
}

bool EnginePage::startDrive(QString* error) {
    auto fail = [error](const QString& text) {
        if (error)
            *error = text;
        return false;
    };
    if (const QString why = m_runner.refusal(m_tracePath); !why.isEmpty())
        return fail(why);
    DriveRequest request = driveRequest();
    if (auto ok = checkDriveRequest(request); !ok)
        return fail(errorText(ok.error()));
    // The job's notes (the model chosen, a calibration) are shown with the report. Only the runner's thread
    // writes them, and the finished() handler reads them after that thread is done: no lock is needed.
    auto notes = std::make_shared<QStringList>();
    request.notice = [notes](const std::string& text) { notes->append(QString::fromStdString(text)); };
    auto report = std::make_shared<DriveReport>();
    // A previous engine's figures are not this drive's: they go at once.
    m_notes.clear();
    showReport({});
    const QString engine = m_engine->currentText();
    m_summary->setText(tr("Driving %1 with %2… (progress by phase and Cancel in the status bar)")
                           .arg(engine, QFileInfo(m_tracePath).fileName().toHtmlEscaped()));
    connect(
        &m_runner, &TaskRunner::finished, this,
        [this, report, notes, engine](const QString&, const QString& failure, bool cancelled) {
            emit runsStored(); // both runs are in the database: complete, failed or interrupted
            if (cancelled || !failure.isEmpty()) {
                m_summary->setText(cancelled
                        ? tr("The drive of %1 was cancelled; the server it started was stopped.").arg(engine)
                        : tr("The drive of %1 failed: %2").arg(engine, failure.toHtmlEscaped()));
                if (!cancelled)
                    emit failed(failure);
                return;
            }
            m_notes = *notes;
            showReport(QJsonDocument::fromJson(QByteArray::fromStdString(toJson(*report).dump())).object());
        },
        Qt::SingleShotConnection);
    m_runner.start(tr("drive %1").arg(m_engine->currentText()),
        storedJob(m_databasePath().toStdString(), report,
            [request](ResultsDb* db, ProgressSink& progress, std::stop_token stop) {
                return runDriveJob(request, db, &progress, stop);
            }));
    return true;
}

QString EnginePage::summaryText() const {
    return m_summary->text();
}

void EnginePage::showReport(const QJsonObject& report) {
    m_report = report;
    m_curve.reset();
    m_comparison.clear();
    m_comparison.setHorizontalHeaderLabels({ tr("Figure"), tr("Measured"), tr("Predicted"), tr("Relative error") });
    if (report.isEmpty()) {
        drawMemory();
        drawLatency();
        return;
    }
    QLocale locale;
    const double measured = report.value(QStringLiteral("measured_bytes_per_key")).toDouble();
    const double predicted = report.value(QStringLiteral("predicted_bytes_per_key")).toDouble();
    m_comparison.appendRow(
        { textItem(report.value(QStringLiteral("engine")).toString() == QLatin1String("memcached")
                  // memcached's slab chunks hold the items; its hash table is allocated apart from them.
                  ? tr("Chunk bytes per item (hash index not included)")
                  : tr("Bytes per key (used_memory, hash index included)")),
            numberItem(measured, 2), numberItem(predicted, 2),
            errorItem(report.value(QStringLiteral("relative_error")).toDouble(), 0.01) });
    m_comparison.appendRow(
        { textItem(tr("Live keys")), numberItem(report.value(QStringLiteral("server_keys")).toDouble(), 0),
            numberItem(report.value(QStringLiteral("predicted_keys")).toDouble(), 0), textItem(QString()) });
    // What the allocator keeps, beside the slab model's prediction (null where either has none).
    const bool memcached = report.value(QStringLiteral("engine")).toString() == QLatin1String("memcached");
    if (report.value(QStringLiteral("measured_active_bytes")).isDouble()
        && report.value(QStringLiteral("predicted_active_bytes")).isDouble()) {
        m_comparison.appendRow({ textItem(memcached ? tr("Slab chunk bytes in use")
                                                    : tr("Allocated bytes (allocator_allocated, growth)")),
            numberItem(report.value(QStringLiteral("measured_allocated_bytes")).toDouble(), 0),
            numberItem(report.value(QStringLiteral("predicted_allocated_bytes")).toDouble(), 0), textItem(QString()) });
        m_comparison.appendRow({ textItem(memcached ? tr("Pages malloc'ed (total_malloced)")
                                                    : tr("Active bytes (allocator_active, growth)")),
            numberItem(report.value(QStringLiteral("measured_active_bytes")).toDouble(), 0),
            numberItem(report.value(QStringLiteral("predicted_active_bytes")).toDouble(), 0),
            errorItem(report.value(QStringLiteral("active_relative_error")).toDouble(), 0.02) });
    }
    const QJsonObject run = report.value(QStringLiteral("run")).toObject();
    if (!run.isEmpty()) {
        m_comparison.appendRow({ textItem(tr("Requests per second (run phase)")),
            numberItem(run.value(QStringLiteral("ops_per_sec")).toDouble(), 0), textItem(QString()),
            textItem(QString()) });
        const QJsonObject latency = run.value(QStringLiteral("latency_us")).toObject();
        const DisplayUnit unit = durationUnit(latency.value(QStringLiteral("p99.9")).toDouble());
        for (const QString& p : { QStringLiteral("p50"), QStringLiteral("p99"), QStringLiteral("p99.9") })
            m_comparison.appendRow({ textItem(tr("Latency %1 (%2)").arg(p, unit.name)),
                numberItem(latency.value(p).toDouble() / unit.divisor, unit.divisor > 1 ? 2 : 1), textItem(QString()),
                textItem(QString()) });
    }
    const QJsonObject load = report.value(QStringLiteral("load")).toObject();
    QString text
        = tr("<b>%1 %2</b> at %3 (%4): modelled as %5 under %6. Loaded %7 commands in %8 s.")
              .arg(report.value(QStringLiteral("engine")).toString(),
                  report.value(QStringLiteral("version")).toString(),
                  report.value(QStringLiteral("endpoint")).toString(),
                  report.value(QStringLiteral("started")).toBool() ? tr("started for this run") : tr("attached"),
                  report.value(QStringLiteral("layout")).toString().toHtmlEscaped(),
                  report.value(QStringLiteral("allocator")).toString().toHtmlEscaped(),
                  locale.toString(load.value(QStringLiteral("commands")).toDouble(), 'f', 0),
                  locale.toString(load.value(QStringLiteral("seconds")).toDouble(), 'f', 2));
    // Why that layout: the server's release, --layout, or calibration keys (Valkey development builds).
    if (const QString reason
        = report.value(QStringLiteral("layout_choice")).toObject().value(QStringLiteral("reason")).toString();
        !reason.isEmpty())
        text += tr(" Layout chosen because: %1.").arg(reason.toHtmlEscaped());
    if (const QJsonObject runs = report.value(QStringLiteral("runs")).toObject(); !runs.isEmpty())
        text += tr(" Stored as runs %1 (prediction) and %2 (measured).")
                    .arg(runs.value(QStringLiteral("prediction")).toInteger())
                    .arg(runs.value(QStringLiteral("measured")).toInteger());
    for (const QString& note : m_notes) // warnings only: the model chosen is said above
        if (note.startsWith(QLatin1String("warning: ")) || note.startsWith(QLatin1String("note: ")))
            text += QStringLiteral("<br>") + note.toHtmlEscaped();
    m_summary->setText(text);
    drawMemory();
    drawLatency();
}

void EnginePage::drawMemory() {
    QChart* chart = m_memoryChart->freshChart();
    m_memoryData.clear();
    const QJsonArray classes = m_report.value(QStringLiteral("classes")).toArray();
    if (!classes.isEmpty()) { // memcached: chunks per slab class
        m_memoryData.setHorizontalHeaderLabels({ tr("Chunk (bytes)"), tr("Measured chunks"), tr("Predicted chunks") });
        QStringList categories;
        QList<double> measured, predicted;
        for (const auto& value : classes) {
            const QJsonObject c = value.toObject();
            categories << byteLabel(c.value(QStringLiteral("chunk_bytes")).toDouble());
            measured << c.value(QStringLiteral("measured_chunks")).toDouble();
            predicted << c.value(QStringLiteral("predicted_chunks")).toDouble();
            m_memoryData.appendRow({ numberItem(c.value(QStringLiteral("chunk_bytes")).toDouble(), 0),
                numberItem(measured.back(), 0), numberItem(predicted.back(), 0) });
        }
        drawBarChart(chart, categories, { { tr("measured"), measured }, { tr("predicted"), predicted } },
            tr("slab class chunk size"), tr("chunks"), true);
        chart->setTitle(tr("Slab chunks per class: measured and predicted (the hash index is apart)"));
        return;
    }
    m_memoryData.setHorizontalHeaderLabels({ tr("Figure"), tr("Measured"), tr("Predicted") });
    if (m_report.isEmpty()) {
        chart->setTitle(tr("Bytes per key: measured and predicted (load a trace into an engine)"));
        return;
    }
    const double measured = m_report.value(QStringLiteral("measured_bytes_per_key")).toDouble();
    const double predicted = m_report.value(QStringLiteral("predicted_bytes_per_key")).toDouble();
    m_memoryData.appendRow({ textItem(tr("bytes per key")), numberItem(measured, 2), numberItem(predicted, 2) });
    drawBarChart(chart, { tr("bytes per key") },
        { { tr("measured"), { measured } }, { tr("predicted"), { predicted } } }, QString(), tr("bytes per key"));
    chart->setTitle(tr("Bytes per key: measured (used_memory) and predicted, hash index included"));
}

void EnginePage::drawLatency() {
    QChart* chart = m_latencyChart->freshChart();
    m_latencyData.clear();
    m_latencyData.setHorizontalHeaderLabels({ tr("Percentile"), tr("Latency") });
    const QJsonObject run = m_report.value(QStringLiteral("run")).toObject();
    if (run.isEmpty()) {
        chart->setTitle(tr("Run-phase latency (no run phase yet)"));
        return;
    }
    const QJsonObject latency = run.value(QStringLiteral("latency_us")).toObject();
    QStringList percentiles { QStringLiteral("p50"), QStringLiteral("p99"), QStringLiteral("p99.9") };
    // One unit for the three, chosen by the largest: 318,767 µs reads as 318.77 ms.
    const DisplayUnit unit = durationUnit(latency.value(QStringLiteral("p99.9")).toDouble());
    m_latencyData.setHorizontalHeaderLabels({ tr("Percentile"), tr("Latency (%1)").arg(unit.name) });
    QList<double> values;
    for (const QString& p : percentiles) {
        values << latency.value(p).toDouble() / unit.divisor;
        m_latencyData.appendRow({ textItem(p), numberItem(values.back(), 2) });
    }
    drawBarChart(chart, percentiles, { { tr("latency"), values } }, tr("percentile"),
        tr("latency per request (%1)").arg(unit.name), true);
    chart->setTitle(tr("Run phase: %1 requests/s from %2 connections × pipeline %3")
                        .arg(QLocale().toString(run.value(QStringLiteral("ops_per_sec")).toDouble(), 'f', 0))
                        .arg(run.value(QStringLiteral("connections")).toInteger())
                        .arg(run.value(QStringLiteral("pipeline")).toInteger()));
}

void EnginePage::saveSettings() const {
    QSettings s;
    s.setValue(QStringLiteral("engine/engine"), m_engine->currentText());
    s.setValue(QStringLiteral("engine/binary"), m_binary->text());
    s.setValue(QStringLiteral("engine/connect"), m_connect->text());
    s.setValue(QStringLiteral("engine/attach"), m_attach->isChecked());
    s.setValue(QStringLiteral("engine/framing"), m_framing->currentText());
    s.setValue(QStringLiteral("engine/runRequests"), m_runRequests->value());
    s.setValue(QStringLiteral("engine/connections"), m_connections->value());
    s.setValue(QStringLiteral("engine/pipeline"), m_pipeline->value());
    saveCurveSettings();
}

void EnginePage::restoreSettings() {
    QSettings s;
    m_engine->setCurrentText(s.value(QStringLiteral("engine/engine"), m_engine->currentText()).toString());
    m_binary->setText(s.value(QStringLiteral("engine/binary")).toString());
    m_connect->setText(s.value(QStringLiteral("engine/connect")).toString());
    m_attach->setChecked(s.value(QStringLiteral("engine/attach"), false).toBool());
    m_start->setChecked(!m_attach->isChecked());
    m_framing->setCurrentText(s.value(QStringLiteral("engine/framing"), m_framing->currentText()).toString());
    m_runRequests->setValue(s.value(QStringLiteral("engine/runRequests"), m_runRequests->value()).toInt());
    m_connections->setValue(s.value(QStringLiteral("engine/connections"), m_connections->value()).toInt());
    m_pipeline->setValue(s.value(QStringLiteral("engine/pipeline"), m_pipeline->value()).toInt());
    restoreCurveSettings();
    updateControls();
}

} // namespace layoutlab::gui
