// SPDX-License-Identifier: MIT
#include "workload_page.h"

#include "chart_panel.h"
#include "stored_job.h"

#include "layoutlab/store/jobs.h"

#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

#include <memory>

namespace layoutlab::gui {

namespace {
// More bars than this are unreadable: the histogram falls back to power-of-two buckets.
constexpr std::size_t kMaxClassBars = 48;

QString qt(const std::string& s) {
    return QString::fromStdString(s);
}

// A number cell: sorts and exports as a number (a QStandardItem's display and edit data are one).
QStandardItem* numberItem(qulonglong value) {
    auto* item = new QStandardItem;
    item->setData(value, Qt::DisplayRole);
    return item;
}

} // namespace

WorkloadPage::WorkloadPage(TaskRunner& runner, std::function<QString()> databasePath, QWidget* parent)
    : QWidget(parent)
    , m_runner(runner)
    , m_databasePath(std::move(databasePath))
    , m_summary(new QLabel(tr("Open a trace (File → Open Trace) to see its workload."), this))
    , m_valueChart(new ChartPanel(QStringLiteral("value-sizes"), this))
    , m_keyChart(new ChartPanel(QStringLiteral("key-sizes"), this))
    , m_opChart(new ChartPanel(QStringLiteral("op-mix"), this)) {
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_valueChart->setDataModel(&m_valueModel);
    m_keyChart->setDataModel(&m_keyModel);
    m_opChart->setDataModel(&m_opModel);
    auto* grid = new QGridLayout;
    grid->addWidget(m_valueChart, 0, 0, 1, 2);
    grid->addWidget(m_keyChart, 1, 0);
    grid->addWidget(m_opChart, 1, 1);
    grid->setRowStretch(0, 3);
    grid->setRowStretch(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addLayout(grid, 1);
}

bool WorkloadPage::loadTrace(const QString& path, QString* error) {
    if (m_runner.busy()) {
        if (error)
            *error = tr("Another task is running: %1.").arg(m_runner.label());
        return false;
    }
    m_tracePath = path;
    m_summary->setText(tr("Reading %1…").arg(QFileInfo(path).fileName()));
    auto stats = std::make_shared<TraceStats>();
    const std::string dbPath = m_databasePath().toStdString();
    connect(
        &m_runner, &TaskRunner::finished, this,
        [this, stats, path](const QString&, const QString& failure, bool cancelled) {
            if (cancelled) {
                m_summary->setText(tr("Reading %1 was cancelled.").arg(QFileInfo(path).fileName()));
                return;
            }
            if (!failure.isEmpty()) {
                m_summary->setText(tr("Could not read %1.").arg(QFileInfo(path).fileName()));
                emit failed(failure);
                return;
            }
            showStats(*stats);
            emit statsReady(path);
        },
        Qt::SingleShotConnection);
    ImportJob job { path.toStdString(), {}, {} };
    m_runner.start(tr("workload statistics"),
        storedJob(dbPath, stats, [job](ResultsDb* db, ProgressSink& progress, std::stop_token stop) {
            return runImportJob(job, db, &progress, stop);
        }));
    return true;
}

void WorkloadPage::showStats(const TraceStats& s) {
    QLocale locale;
    const double ttlShare = s.writes ? 100.0 * double(s.writesWithTtl) / double(s.writes) : 0.0;
    QString text = tr("<b>%1</b> (%2): %3 requests, %4 distinct keys, %5 writes, %6% of them with a TTL.")
                       .arg(QFileInfo(m_tracePath).fileName().toHtmlEscaped(), qt(s.format),
                           locale.toString(qulonglong(s.requests)), locale.toString(qulonglong(s.distinctKeys)),
                           locale.toString(qulonglong(s.writes)), locale.toString(ttlShare, 'f', 1));
    if (s.valueSize.count)
        text += tr(" Values %1–%2 bytes (mean %3), keys %4–%5 bytes.")
                    .arg(locale.toString(qulonglong(s.valueSize.minBytes)),
                        locale.toString(qulonglong(s.valueSize.maxBytes)),
                        locale.toString(double(s.valueSize.sumBytes) / double(s.valueSize.count), 'f', 1),
                        locale.toString(qulonglong(s.keySize.minBytes)),
                        locale.toString(qulonglong(s.keySize.maxBytes)));
    if (s.rejects.total)
        text += tr(" %1 input lines were rejected.").arg(locale.toString(qulonglong(s.rejects.total)));
    m_summary->setText(text);
    drawHistogram(m_valueChart, m_valueModel, s.valueSize, tr("Value sizes (per write)"));
    drawHistogram(m_keyChart, m_keyModel, s.keySize, tr("Key sizes (per distinct key)"));

    m_opModel.clear();
    m_opModel.setHorizontalHeaderLabels({ tr("Operation"), tr("Requests") });
    QStringList ops;
    QList<double> counts;
    for (std::size_t i = 0; i < kOpCount; ++i) {
        if (!s.requestsByOp[i])
            continue;
        const QString name = qt(std::string(opName(Op(i))));
        ops << name;
        counts << double(s.requestsByOp[i]);
        m_opModel.appendRow({ new QStandardItem(name), numberItem(s.requestsByOp[i]) });
    }
    drawBarChart(m_opChart->freshChart(), ops, { { tr("requests"), counts } }, tr("operation"), tr("requests"));
    m_opChart->chart()->setTitle(tr("Op mix"));
}

void WorkloadPage::drawHistogram(
    ChartPanel* panel, QStandardItemModel& model, const SizeHistogram& h, const QString& what) {
    // Buckets by size class, trimmed to the classes in use; power-of-two buckets if that is too many.
    auto range = [](const std::vector<SizeHistogram::Bucket>& b) {
        std::size_t first = 0, last = b.size();
        while (first < b.size() && b[first].count == 0)
            ++first;
        while (last > first && b[last - 1].count == 0)
            --last;
        return std::make_pair(first, last);
    };
    auto [first, last] = range(h.jemallocClasses);
    const bool byClass = last - first <= kMaxClassBars;
    const auto& buckets = byClass ? h.jemallocClasses : h.powerOfTwo;
    if (!byClass)
        std::tie(first, last) = range(h.powerOfTwo);
    model.clear();
    model.setHorizontalHeaderLabels({ tr("Up to (bytes)"), tr("Count") });
    QStringList labels;
    QList<double> counts;
    for (std::size_t i = first; i < last; ++i) {
        labels << byteLabel(double(buckets[i].upperBytes));
        counts << double(buckets[i].count);
        model.appendRow({ numberItem(buckets[i].upperBytes), numberItem(buckets[i].count) });
    }
    drawBarChart(panel->freshChart(), labels, { { what, counts } },
        byClass ? tr("size class, up to: Valkey/Redis jemalloc classes") : tr("size, up to: powers of two"),
        tr("count"));
    panel->chart()->setTitle(counts.isEmpty() ? what + tr(": none in this trace") : what);
}

} // namespace layoutlab::gui
