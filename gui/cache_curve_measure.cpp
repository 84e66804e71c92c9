// SPDX-License-Identifier: MIT
// The Cache curve view's measured points: the stored drives of the trace read back, and the real server
// driven as a look-aside cache at a few budgets, through the drive job the CLI's `drive --maxmemory` runs,
// each drive stored beside the curve.
#include "cache_curve_page.h"

#include "stored_job.h"
#include "task_runner.h"

#include "layoutlab/jobs/drive_job.h"
#include "layoutlab/layout/layout_registry.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

namespace layoutlab::gui {

namespace {

QString qt(const std::string& s) {
    return QString::fromStdString(s);
}

// A layout spec as the engine and its settings, without its threshold setting (valkey's threshold=,
// Redis's embstr-limit=), which a curve and a drive must share; and the threshold (0: none).
std::pair<QString, std::uint32_t> splitThreshold(const QString& spec) {
    auto layout = parseLayout(spec.toStdString());
    if (!layout)
        return { spec, 0 };
    const auto param = (*layout)->threshold();
    if (!param)
        return { spec, 0 };
    QString rest = spec;
    rest.remove(QRegularExpression(QStringLiteral("(^|,|:)%1=\\d+").arg(QRegularExpression::escape(qt(param->name)))));
    return { rest, param->value };
}

} // namespace

Expected<std::vector<MeasuredHitRatio>> measuredHitRatios(
    ResultsDb& db, const QString& tracePath, const QString& layoutSpec, const QString& policy) {
    auto runs = db.listRuns();
    if (!runs)
        return runs.error();
    const QString trace = QFileInfo(tracePath).absoluteFilePath();
    const bool memcached = isMemcachedSpec(layoutSpec);
    const QString layout = splitThreshold(layoutSpec).first;
    std::vector<MeasuredHitRatio> out;
    for (const RunRecord& run : *runs) {
        if (run.kind != "drive" || run.status != "complete"
            || QFileInfo(qt(run.traceSource)).absoluteFilePath() != trace)
            continue;
        const auto [runLayout, runThreshold] = splitThreshold(qt(run.layout));
        if (runLayout != layout)
            continue;
        auto measurements = db.measurements(run.id);
        if (!measurements)
            return measurements.error();
        for (const Measurement& m : *measurements) {
            if (m.metric != "hit_ratio")
                continue;
            const auto details = nlohmann::json::parse(m.detailsJson, nullptr, false);
            if (!details.is_object() || !details.contains("maxmemory_bytes"))
                continue;
            const QString measuredPolicy = qt(details.value("policy", std::string()));
            if (!memcached && measuredPolicy != policy)
                continue;
            QString source = QObject::tr("%1 %2, run %3").arg(qt(m.engine), qt(m.engineVersion)).arg(run.id);
            if (const auto batch = details.value("fill_batch", 1u); batch > 1)
                source += QObject::tr(", misses filled after each %1 requests").arg(batch);
            // The prediction stored beside the drive (MeasuredRuns: prediction_run): its hit ratio.
            double predicted = -1;
            const auto parameters = nlohmann::json::parse(run.parametersJson, nullptr, false);
            if (parameters.is_object() && parameters.contains("prediction_run"))
                if (auto points = db.points(parameters["prediction_run"].get<std::int64_t>());
                    points && !points->empty() && points->front().budget)
                    predicted = points->front().budget->hitRatio();
            out.push_back({ runThreshold, details["maxmemory_bytes"].get<std::uint64_t>(), m.value,
                details.value("base_bytes", std::uint64_t { 0 }), predicted, qt(run.allocator), measuredPolicy,
                source });
        }
    }
    return out;
}

void CacheCurvePage::loadMeasured() {
    // Called before a curve too (measuring first): the form then names the trace, layout and policy.
    m_measured.clear();
    const QString path = m_databasePath();
    if (path.isEmpty() || !QFileInfo::exists(path))
        return;
    auto db = ResultsDb::openReadOnly(path.toStdString());
    if (!db)
        return; // no database yet: nothing measured
    // The curve on show's trace, layout and policy; before there is one, the form's.
    QString trace = qt(m_result.traceName);
    QString layout = qt(m_result.layoutSpec);
    QString policy = qt(m_result.budgetPolicy).section(QLatin1Char(','), 0, 0);
    if (m_result.points.empty()) {
        auto parsed = parseLayout(m_layout->text().trimmed().toStdString());
        if (!parsed)
            return;
        trace = m_tracePath;
        layout = qt((*parsed)->spec());
        policy = m_policy->currentText();
    }
    auto measured = measuredHitRatios(**db, trace, layout, policy);
    if (!measured) {
        emit failed(errorText(measured.error()));
        return;
    }
    m_measured = std::move(*measured);
}

QLayout* CacheCurvePage::makeMeasureRow() {
    m_engine = new QComboBox(this);
    for (const char* engine : { "redis", "valkey", "memcached" })
        m_engine->addItem(QString::fromLatin1(engine));
    m_engine->setToolTip(tr("The server to drive: started from the binary below (default: the engine's on PATH), on "
                            "127.0.0.1 and a free port, and stopped after each drive"));
    m_serverBinary = new QLineEdit(this);
    m_serverBinary->setPlaceholderText(tr("the engine's binary on PATH"));
    m_measureAt = new QLineEdit(this);
    m_measureAt->setPlaceholderText(tr("budgets to measure at, e.g. 2mb,8mb,32mb"));
    m_measureAt->setToolTip(tr("Each budget is one drive: the server under maxmemory and the policy (memcached: -m), "
                               "the trace sent as a look-aside cache's client sends it, its keyspace_hits and "
                               "keyspace_misses read after. Stored, as layoutlab drive stores it"));
    m_measure = new QPushButton(tr("Measure on the ser&ver"), this);
    connect(m_measure, &QPushButton::clicked, this, [this] {
        QString error;
        if (!startMeasuring(&error))
            emit failed(error);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(m_engine);
    row->addWidget(m_serverBinary, 1);
    auto* at = new QLabel(tr("&at:"), this);
    at->setBuddy(m_measureAt);
    row->addWidget(at);
    row->addWidget(m_measureAt, 1);
    row->addWidget(m_measure);
    return row;
}

bool CacheCurvePage::startMeasuring(QString* error) {
    auto fail = [error](const QString& text) {
        if (error)
            *error = text;
        return false;
    };
    if (const QString why = m_runner.refusal(m_tracePath); !why.isEmpty())
        return fail(why);
    const QString at = m_measureAt->text().trimmed();
    if (at.isEmpty())
        return fail(tr("Measure at: give the budgets to drive the server at, e.g. 2mb,8mb"));
    auto budgets = parseBudgets(at.toStdString());
    if (!budgets)
        return fail(tr("Measure at: %1").arg(QString::fromStdString(budgets.error().message)));
    const auto engine = parseEngine(m_engine->currentText().toStdString());
    if (!engine)
        return fail(tr("Engine: %1 is not one layoutlab drives").arg(m_engine->currentText()));
    const bool memcached = *engine == Engine::Memcached;
    const std::string policy = memcached ? "noeviction" : m_policy->currentText().toStdString();
    std::vector<DriveRequest> drives;
    for (const std::uint64_t budget : *budgets) {
        DriveRequest r;
        r.tracePath = m_tracePath.toStdString();
        r.engine = *engine;
        r.serverBinary = m_serverBinary->text().trimmed().toStdString();
        r.toolVersion = LAYOUTLAB_VERSION;
        auto options = makeEvictionOptions(std::to_string(budget), policy, 5, 10, 1);
        if (!options)
            return fail(errorText(options.error()));
        if (!memcached && !serverHasPolicy(options->policy))
            return fail(tr("Policy: %1 is no server's; pick one of the server's policies to measure")
                            .arg(m_policy->currentText()));
        r.budget = std::move(*options);
        if (auto ok = checkDriveRequest(r); !ok)
            return fail(errorText(ok.error()));
        drives.push_back(std::move(r));
    }
    auto done = std::make_shared<std::size_t>(0);
    const QString engineName = m_engine->currentText();
    connect(
        &m_runner, &TaskRunner::finished, this,
        [this, done, engineName, count = drives.size()](const QString&, const QString& failure, bool cancelled) {
            emit runStored(0); // the drives done are stored, whatever became of the rest
            if (!m_result.points.empty())
                showResult(m_result); // their points on the curve
            else
                loadMeasured();
            // What the server held before the trace, and its allocator, for the next curve to count as the drives'
            // predictions did.
            if (!m_measured.empty() && m_baseMemory->text().trimmed().isEmpty() && m_measured.front().baseBytes)
                m_baseMemory->setText(QString::number(m_measured.front().baseBytes));
            if (!m_measured.empty() && m_allocator->text().trimmed().isEmpty())
                m_allocator->setText(m_measured.front().allocator);
            if (cancelled || !failure.isEmpty()) {
                m_summary->setText(
                    tr("Measuring on %1 stopped after %2 of %3 drives (%4).")
                        .arg(engineName)
                        .arg(*done)
                        .arg(count)
                        .arg(cancelled ? tr("cancelled; the server was stopped") : failure.toHtmlEscaped())
                    + QLatin1Char(' ') + m_summary->text());
                if (!cancelled)
                    emit failed(failure);
            }
        },
        Qt::SingleShotConnection);
    saveSettings();
    m_summary->setText(tr("Driving %1 with %2 at %3… (progress by phase and Cancel in the status bar)")
                           .arg(engineName, QFileInfo(m_tracePath).fileName().toHtmlEscaped(), at.toHtmlEscaped()));
    return m_runner.start(tr("measure %1").arg(engineName),
        storedJob(m_databasePath().toStdString(), done,
            [drives, done](ResultsDb* db, ProgressSink& progress, std::stop_token stop) -> Expected<std::size_t> {
                std::size_t& measured = *done; // read by the finished() handler, after this thread is done
                for (const DriveRequest& drive : drives) {
                    progress.phase(fmt::format(
                        "drive {} of {} (budget {} bytes)", measured + 1, drives.size(), drive.budget->maxmemoryBytes));
                    auto report = runDriveJob(drive, db, &progress, stop);
                    if (!report)
                        return report.error();
                    ++measured;
                }
                return std::size_t { measured };
            }));
}

} // namespace layoutlab::gui
