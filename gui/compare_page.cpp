// SPDX-License-Identifier: MIT
#include "compare_page.h"

#include "kept_splitter.h"

#include "chart_panel.h"
#include "migration_view.h"
#include "stored_job.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/compare.h"
#include "layoutlab/report/migration.h"
#include "layoutlab/store/run_parameters.h"

#include <QBrush>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace layoutlab::gui {

namespace {
QString qt(const std::string& s) {
    return QString::fromStdString(s);
}

// A metric of a point, or nothing when the point does not carry it (cache-model metrics of a run
// without the cache model; L2 of a two-level geometry).
std::optional<double> metricOf(const SweepMetric& metric, const ThresholdPoint& p) {
    if (metric.table && !metric.table->get(p))
        return std::nullopt;
    return metric.of(p);
}

QString runLabel(const RunRecord& r) {
    return QStringLiteral("#%1 %2 · %3 · %4 · %5")
        .arg(r.id)
        .arg(qt(r.kind), qt(r.layoutName), qt(r.allocator), QFileInfo(qt(r.traceSource)).fileName());
}
// Both runs at the settings their engines ship with: "At their shipped settings: A (valkey-8.1, threshold
// 64) 241.66, B (redis-7.0, embstr-limit 44) 264.63; B − A +22.97 (+9.5 %)".
QString shippedLine(const RunRecord& a, const RunRecord& b, std::pair<std::uint32_t, double> atA,
    std::pair<std::uint32_t, double> atB, const SweepMetric& metric) {
    const QLocale locale;
    auto at = [&](const RunRecord& run, std::pair<std::uint32_t, double> point) {
        const auto params = RunParameters::fromJson(run.parametersJson);
        const QString setting = params && !params->thresholdParameter.empty()
            ? QStringLiteral("%1 %2").arg(qt(params->thresholdParameter)).arg(point.first)
            : QObject::tr("its one setting");
        return QStringLiteral("%1, %2").arg(qt(run.layoutName), setting);
    };
    const double difference = atB.second - atA.second;
    const auto change = relativeChange(atA.second, atB.second);
    return QObject::tr("<b>At the settings their engines ship with</b> — A (%1): %2; B (%3): %4; B − A: %5%6")
        .arg(at(a, atA).toHtmlEscaped(), locale.toString(atA.second, 'f', metric.decimals), at(b, atB).toHtmlEscaped(),
            locale.toString(atB.second, 'f', metric.decimals),
            (difference > 0 ? QStringLiteral("+") : QString()) + locale.toString(difference, 'f', metric.decimals),
            change ? QStringLiteral(" (%1%2 %)")
                         .arg(*change > 0 ? QStringLiteral("+") : QString(), locale.toString(100.0 * *change, 'f', 1))
                   : QString());
}
} // namespace

ThresholdValues thresholdValues(const std::vector<ThresholdPoint>& points,
    const std::vector<EngineSweepPoint>& measured, const SweepMetric& metric) {
    ThresholdValues out;
    for (const auto& p : points)
        out[p.threshold] = metricOf(metric, p);
    const bool bytesPerKey = metric.table && metric.table->name == std::string_view("usable_bytes_per_key");
    for (const auto& m : measured)
        if (m.threshold) // memcached's slab settings have no threshold to meet a sweep's at
            out[*m.threshold] = bytesPerKey ? std::optional<double>(m.measuredBytesPerKey) : std::nullopt;
    return out;
}

void CompareTableModel::setRuns(const ThresholdValues& a, const ThresholdValues& b, const SweepMetric& metric) {
    beginResetModel();
    m_metric = metric;
    m_rows.clear();
    std::map<std::uint32_t, Row> rows;
    for (const auto& [threshold, value] : a)
        rows[threshold] = { threshold, value, std::nullopt };
    for (const auto& [threshold, value] : b) {
        rows[threshold].threshold = threshold;
        rows[threshold].b = value;
    }
    for (const auto& [threshold, row] : rows)
        m_rows.push_back(row);
    endResetModel();
}

void CompareTableModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

std::optional<double> CompareTableModel::value(int row, bool b) const {
    const Row& r = m_rows[std::size_t(row)];
    return b ? r.b : r.a;
}

bool CompareTableModel::differs(int row) const {
    const Row& r = m_rows[std::size_t(row)];
    if (!r.a || !r.b)
        return false;
    return std::abs(*r.a - *r.b) > 0.5 * std::pow(10.0, -m_metric.decimals);
}

bool CompareTableModel::inOneRunOnly(int row) const {
    const Row& r = m_rows[std::size_t(row)];
    return r.a.has_value() != r.b.has_value();
}

int CompareTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CompareTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
        return {};
    const Row& r = m_rows[std::size_t(index.row())];
    if (role == Qt::BackgroundRole)
        return differs(index.row()) ? QVariant(QBrush(QColor(0xff, 0xf0, 0xc0))) : QVariant();
    if (role == Qt::ToolTipRole && inOneRunOnly(index.row()))
        return tr("Only run %1 evaluated this threshold: not a difference")
            .arg(r.a ? QStringLiteral("A") : QStringLiteral("B"));
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    std::optional<double> v;
    int decimals = m_metric.decimals;
    switch (Column(index.column())) {
    case Threshold:
        return qulonglong(r.threshold);
    case RunA:
        v = r.a;
        break;
    case RunB:
        v = r.b;
        break;
    case Difference:
        if (r.a && r.b)
            v = *r.b - *r.a;
        break;
    case Change:
        if (r.a && r.b)
            if (auto change = relativeChange(*r.a, *r.b))
                v = 100.0 * *change;
        decimals = 1;
        break;
    case ColumnCount:
        break;
    }
    if (!v)
        return role == Qt::EditRole ? QVariant() : QVariant(QStringLiteral("–"));
    if (role == Qt::EditRole)
        return *v;
    const bool signedColumn = index.column() == Difference || index.column() == Change;
    return QString((signedColumn && *v > 0 ? QStringLiteral("+") : QString()) + QLocale().toString(*v, 'f', decimals)
        + (index.column() == Change ? QStringLiteral(" %") : QString()));
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Threshold:
        return tr("Threshold (bytes)");
    case RunA:
        return tr("Run A: %1").arg(m_metric.header);
    case RunB:
        return tr("Run B: %1").arg(m_metric.header);
    case Difference:
        return tr("B − A");
    case Change:
        return tr("Change");
    case ColumnCount:
        break;
    }
    return {};
}

ComparePage::ComparePage(QWidget* parent)
    : QWidget(parent)
    , m_metrics(sweepMetrics(3))
    , m_runA(new QComboBox(this))
    , m_runB(new QComboBox(this))
    , m_metric(new QComboBox(this))
    , m_parameters(new QLabel(this))
    , m_shipped(new QLabel(this))
    , m_chart(new ChartPanel(QStringLiteral("compare"), this))
    , m_table(new QTableView(this))
    , m_tabs(new QTabWidget(this))
    , m_migration(new MigrationView(this)) {
    m_metrics.erase(m_metrics.begin()); // the threshold is the x axis, not a metric
    for (const auto& m : m_metrics)
        m_metric->addItem(m.header);
    m_runA->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_runB->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_parameters->setWordWrap(true);
    m_parameters->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_chart->setDataModel(&m_model);
    m_table->setModel(&m_model);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    auto* form = new QFormLayout;
    form->addRow(tr("Run &A:"), m_runA);
    form->addRow(tr("Run &B:"), m_runB);
    form->addRow(tr("&Metric:"), m_metric);
    m_shipped->setWordWrap(true);
    m_shipped->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* pair = new QWidget(this);
    auto* splitter = keptSplitter(Qt::Horizontal, QStringLiteral("compare-splitter"), m_chart, 3, m_table, 2, pair);
    splitter->setSizes({ 680, 580 }); // the table's headers whole at 1280×800
    auto* pairLayout = new QVBoxLayout(pair);
    pairLayout->setContentsMargins(0, 0, 0, 0);
    pairLayout->addWidget(m_shipped);
    pairLayout->addWidget(splitter, 1);
    m_tabs->addTab(pair, tr("Run A against run B"));
    m_tabs->addTab(m_migration, tr("Engines side by side"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_parameters);
    layout->addWidget(m_tabs, 1);
    for (QComboBox* box : { m_runA, m_runB, m_metric })
        connect(box, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    refresh();
}

void ComparePage::setRuns(const QString& databasePath, const std::vector<RunRecord>& runs) {
    const qint64 a = m_runA->currentData().toLongLong(), b = m_runB->currentData().toLongLong();
    m_databasePath = databasePath;
    m_runs.clear();
    for (const auto& r : runs)
        if (r.status == "complete" && (r.points > 0 || r.kind == kEngineSweepKind))
            m_runs.push_back(r);
    for (QComboBox* box : { m_runA, m_runB }) {
        const QSignalBlocker block(box);
        box->clear();
        for (const auto& r : m_runs)
            box->addItem(runLabel(r), qlonglong(r.id));
    }
    // Keep the pair on show; else compare the two newest runs.
    int indexA = m_runA->findData(qlonglong(a)), indexB = m_runB->findData(qlonglong(b));
    if (indexA < 0 || indexB < 0 || indexA == indexB) {
        std::vector<int> byId(m_runs.size());
        std::iota(byId.begin(), byId.end(), 0);
        std::sort(byId.begin(), byId.end(),
            [this](int x, int y) { return m_runs[std::size_t(x)].id > m_runs[std::size_t(y)].id; });
        indexB = byId.empty() ? -1 : byId[0];
        indexA = byId.size() < 2 ? indexB : byId[1];
    }
    const QSignalBlocker blockA(m_runA), blockB(m_runB);
    m_runA->setCurrentIndex(indexA);
    m_runB->setCurrentIndex(indexB);
    refresh();
}

bool ComparePage::compare(qint64 runA, qint64 runB) {
    const int a = m_runA->findData(qlonglong(runA)), b = m_runB->findData(qlonglong(runB));
    if (a < 0 || b < 0)
        return false;
    const QSignalBlocker blockA(m_runA), blockB(m_runB);
    m_runA->setCurrentIndex(a);
    m_runB->setCurrentIndex(b);
    refresh();
    return true;
}

QString ComparePage::shippedText() const {
    return m_shipped->text();
}

ChartPanel* ComparePage::shownChart() const {
    return m_tabs->currentWidget() == m_migration ? m_migration->chart() : m_chart;
}

void ComparePage::refreshMigration(ResultsDb& db, const RunRecord& base) {
    std::int64_t newest = 0;
    for (const auto& r : m_runs)
        newest = std::max(newest, r.id);
    const std::pair<std::int64_t, std::int64_t> shown { base.traceId, newest };
    if (shown == m_migrationShown && m_migration->model().rowCount() > 0
        && m_migration->model().table().rows.front().name == base.layoutName)
        return; // loading every run of the trace again only when something changed
    m_migrationShown = shown;
    if (const QString error = m_migration->show(db, m_runs, base); !error.isEmpty())
        emit failed(error);
}

void ComparePage::refresh() {
    QChart* chart = m_chart->freshChart();
    const int a = m_runA->currentIndex(), b = m_runB->currentIndex(), metricIndex = m_metric->currentIndex();
    if (a < 0 || b < 0 || metricIndex < 0) {
        m_model.clear();
        m_shipped->clear();
        m_parameters->setText(tr("Run sweeps first: the runs with threshold points are compared here."));
        chart->setTitle(tr("Compare two runs"));
        return;
    }
    auto db = ResultsDb::open(m_databasePath.toStdString());
    if (!db) {
        emit failed(errorText(db.error()));
        return;
    }
    const RunRecord& runA = m_runs[std::size_t(a)];
    const RunRecord& runB = m_runs[std::size_t(b)];
    const SweepMetric& metric = m_metrics[std::size_t(metricIndex)];
    ThresholdValues values[2];
    std::optional<std::pair<std::uint32_t, double>> shipped[2]; // each run at its shipped setting
    for (const bool isB : { false, true }) {
        const RunRecord& run = isB ? runB : runA;
        auto points = (*db)->points(run.id);
        auto measurements = (*db)->measurements(run.id);
        if (!points || !measurements) {
            emit failed(errorText(!points ? points.error() : measurements.error()));
            return;
        }
        // A layout without a threshold (memcached) has no point to meet a sweep's at: it shows at its
        // shipped setting only.
        const auto params = RunParameters::fromJson(run.parametersJson);
        if (run.kind == kEngineSweepKind || !params || !params->thresholdParameter.empty())
            values[isB] = thresholdValues(*points, engineSweepPoints(*measurements), metric);
        if (const auto* p = shippedPoint(run.layout, *points))
            if (const auto v = metricOf(metric, *p))
                shipped[isB] = std::pair { p->threshold, *v };
    }
    m_model.setRuns(values[0], values[1], metric);
    m_shipped->setText(
        shipped[0] && shipped[1] ? shippedLine(runA, runB, *shipped[0], *shipped[1], metric) : QString());
    refreshMigration(**db, runA);

    // Parameters side by side; the ones that differ in bold.
    const std::pair<QString, std::pair<std::string, std::string>> rows[] {
        { tr("trace"), { runA.traceSource, runB.traceSource } }, { tr("layout"), { runA.layoutName, runB.layoutName } },
        { tr("layout spec"), { runA.layout, runB.layout } }, { tr("allocator"), { runA.allocator, runB.allocator } },
        { tr("kind"), { runA.kind, runB.kind } }, { tr("tool version"), { runA.toolVersion, runB.toolVersion } }
    };
    QString text = QStringLiteral("<table cellspacing=\"4\"><tr><th></th><th align=\"left\">A (#%1)</th>"
                                  "<th align=\"left\">B (#%2)</th></tr>")
                       .arg(runA.id)
                       .arg(runB.id);
    for (const auto& [name, pair] : rows) {
        const bool differ = pair.first != pair.second;
        const QString open = differ ? QStringLiteral("<b>") : QString(),
                      close = differ ? QStringLiteral("</b>") : QString();
        // Traces by file name (the whole paths are in the tooltip); a differing path still shows in bold.
        auto shown = [&name](const std::string& value) {
            return (name == tr("trace") ? QFileInfo(qt(value)).fileName() : qt(value)).toHtmlEscaped();
        };
        text += QStringLiteral("<tr><td>%1</td><td>%2%3%4</td><td>%2%5%4</td></tr>")
                    .arg(name, open, shown(pair.first), close, shown(pair.second));
    }
    m_parameters->setText(text + QStringLiteral("</table>"));
    m_parameters->setToolTip(tr("A: %1\nB: %2").arg(qt(runA.traceSource), qt(runB.traceSource)));

    auto* x = new QValueAxis(chart);
    x->setTitleText(tr("threshold (bytes)"));
    auto* y = new QValueAxis(chart);
    y->setTitleText(metric.header);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    double low = std::numeric_limits<double>::max(), high = std::numeric_limits<double>::lowest();
    double first = std::numeric_limits<double>::max(), last = std::numeric_limits<double>::lowest();
    for (const bool isB : { false, true }) {
        auto* series = new QLineSeries(chart);
        const RunRecord& run = isB ? runB : runA;
        series->setName((isB ? tr("B (#%1)") : tr("A (#%1)")).arg(run.id)
            + (run.kind == kEngineSweepKind ? tr(", measured") : QString()));
        series->setPointsVisible(true);
        for (int r = 0; r < m_model.rowCount(); ++r)
            if (const auto v = m_model.value(r, isB)) {
                series->append(m_model.threshold(r), *v);
                low = std::min(low, *v);
                high = std::max(high, *v);
                first = std::min(first, double(m_model.threshold(r)));
                last = std::max(last, double(m_model.threshold(r)));
            }
        chart->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(y);
        m_chart->addHoverTips(series, tr("threshold"), metric.decimals);
    }
    if (low <= high) {
        const double pad = std::max((high - low) * 0.08, std::max(std::abs(high) * 0.02, 0.01));
        y->setRange(std::max(0.0, low - pad), high + pad);
        y->applyNiceNumbers();
        setThresholdRange(x, first, last);
    }
    chart->setTitle(tr("%1: run A against run B").arg(metric.header));
}

} // namespace layoutlab::gui
