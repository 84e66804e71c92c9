// SPDX-License-Identifier: MIT
#include "result_models.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>

namespace layoutlab::gui {

std::vector<SweepMetric> sweepMetrics(std::size_t cacheLevels, bool withArena, bool withBudget) {
    std::vector<SweepMetric> m { { QAbstractTableModel::tr("Threshold (bytes)"), QStringLiteral("threshold"), nullptr,
        [](const ThresholdPoint& p) { return double(p.threshold); }, 0 } };
    // The rest from the metric table, as the CLI's --json/--csv name them; a percentage is shown as one.
    for (const PointMetric* metric : metricsWith(kMetricShown, cacheLevels, withArena, withBudget)) {
        const bool percent = metric->style == MetricStyle::Percent;
        const QString heading = QCoreApplication::translate("metrics", std::string(metric->heading).c_str());
        // The unit where the heading does not say it: "Overhead per key (bytes)", "Embedded keys (%)".
        const bool bytes = metric->unit.find("bytes") != std::string_view::npos && metric->heading.find("Bytes") != 0;
        const QString unit = percent ? QStringLiteral(" (%)") : bytes ? QStringLiteral(" (bytes)") : QString();
        m.push_back({ heading + unit, QString::fromUtf8(metric->name.data(), qsizetype(metric->name.size())), metric,
            nullptr, metric->decimals });
    }
    return m;
}

double SweepMetric::of(const ThresholdPoint& p) const {
    if (table) {
        const double v = table->get(p).value_or(0.0);
        return table->style == MetricStyle::Percent ? 100.0 * v : v;
    }
    return value(p);
}

void SweepTableModel::setResult(const SimulationResult& result, const std::optional<LoadLatencies>& latencies) {
    beginResetModel();
    m_result = result;
    m_latencies = latencies;
    m_metrics = sweepMetrics(result.points.empty() ? 0 : result.points.front().missesPerGet.size(),
        !result.points.empty() && result.points.front().arena, !result.points.empty() && result.points.front().budget);
    m_stall.clear();
    if (latencies) {
        for (const auto& p : result.points)
            m_stall.push_back(predictStall(p, *latencies));
        if (std::any_of(m_stall.begin(), m_stall.end(), [](const auto& s) { return s.has_value(); })) {
            m_metrics.push_back(
                { tr("Memory stall per GET (ns)"), QStringLiteral("stall_ns"), nullptr, nullptr, 0, 1 });
            m_metrics.push_back({ tr("Stall ± (ns)"), QStringLiteral("stall_uncertainty_ns"), nullptr, nullptr, 0, 2 });
        }
    }
    endResetModel();
}

void SweepTableModel::clear() {
    beginResetModel();
    m_result = {};
    m_latencies.reset();
    m_stall.clear();
    m_metrics.clear();
    endResetModel();
}

int SweepTableModel::columnOf(const QString& cliName) const {
    for (std::size_t i = 0; i < m_metrics.size(); ++i)
        if (m_metrics[i].cliName == cliName)
            return int(i);
    return -1;
}

double SweepTableModel::value(int row, int column) const {
    const SweepMetric& metric = m_metrics[std::size_t(column)];
    if (metric.stallPart) {
        const auto& stall = m_stall[std::size_t(row)];
        return !stall ? 0.0 : metric.stallPart == 1 ? stall->ns : stall->uncertaintyNs;
    }
    return metric.of(m_result.points[std::size_t(row)]);
}

int SweepTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_result.points.size());
}

int SweepTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_metrics.size());
}

QVariant SweepTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
        return {};
    const double v = value(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole:
        return QLocale().toString(v, 'f', m_metrics[std::size_t(index.column())].decimals);
    case Qt::EditRole: // the exact value, for charts and CSV
        return v;
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant SweepTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    return m_metrics[std::size_t(section)].header;
}

QVariant SizeClassTableModel::cell(const SizeClassUsage& c, int column, int role) const {
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    qulonglong v = 0;
    switch (Column(column)) {
    case ClassBytes:
        v = c.classBytes;
        break;
    case Allocations:
        v = c.allocations;
        break;
    case PayloadBytes:
        v = c.payloadBytes;
        break;
    case HeaderBytes:
        v = c.requestedBytes - c.payloadBytes;
        break;
    case WasteBytes:
        v = c.usableBytes - c.requestedBytes;
        break;
    case UsableBytes:
        v = c.usableBytes;
        break;
    case RegionsPerSlab:
        v = c.regionsPerSlab;
        break;
    case Slabs:
        v = c.slabs;
        break;
    case HeldSlabs:
        v = c.heldSlabs;
        break;
    case Evictions:
        v = c.evictions;
        break;
    case ColumnCount:
        break;
    }
    return role == Qt::EditRole ? QVariant(v) : QVariant(QLocale().toString(v));
}

QStringList SizeClassTableModel::headers() const {
    return { tr("Size class (bytes)"), tr("Allocations"), tr("Payload (bytes)"), tr("Header (bytes)"),
        tr("Waste (bytes)"), tr("Usable (bytes)"), tr("Regions per slab"), tr("Slabs"), tr("Held slabs"),
        tr("Evicted") };
}

} // namespace layoutlab::gui
