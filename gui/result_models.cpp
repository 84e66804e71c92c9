// SPDX-License-Identifier: MIT
#include "result_models.h"

#include <QLocale>

namespace layoutlab::gui {

namespace {

double missesAt(const ThresholdPoint& p, std::size_t level) {
    return level < p.missesPerGet.size() ? p.missesPerGet[level] : 0.0;
}

} // namespace

std::vector<SweepMetric> sweepMetrics(std::size_t cacheLevels) {
    auto tr = [](const char* text) { return QAbstractTableModel::tr(text); };
    std::vector<SweepMetric> m {
        { tr("Threshold (bytes)"), QStringLiteral("threshold"),
            [](const ThresholdPoint& p) { return double(p.threshold); }, 0 },
        { tr("Bytes per key"), QStringLiteral("usable_bytes_per_key"),
            [](const ThresholdPoint& p) { return p.usableBytesPerKey; }, 2 },
        { tr("Overhead per key (bytes)"), QStringLiteral("overhead_bytes_per_key"),
            [](const ThresholdPoint& p) { return p.overheadBytesPerKey; }, 2 },
        { tr("Internal fragmentation per key (bytes)"), QStringLiteral("internal_fragmentation_bytes_per_key"),
            [](const ThresholdPoint& p) {
                return p.keys ? double(p.internalFragmentationBytes) / double(p.keys) : 0.0;
            },
            2 },
        { tr("Allocations per key"), QStringLiteral("allocations_per_key"),
            [](const ThresholdPoint& p) { return p.allocationsPerKey; }, 3 },
        { tr("Embedded keys (%)"), QStringLiteral("embedded_percent"),
            [](const ThresholdPoint& p) { return 100.0 * p.embeddedFraction; }, 1 },
        { tr("Lines touched per GET"), QStringLiteral("lines_touched_per_get"),
            [](const ThresholdPoint& p) { return p.linesTouchedPerGet; }, 3 },
        { tr("Dependent loads per GET"), QStringLiteral("dependent_loads_per_get"),
            [](const ThresholdPoint& p) { return p.dependentLoadsPerGet; }, 3 },
    };
    // The cache levels as the CLI names them: l1, l2 (three levels only), llc (the last level).
    if (cacheLevels >= 2) {
        m.push_back({ tr("L1 misses per GET"), QStringLiteral("l1_misses_per_get"),
            [](const ThresholdPoint& p) { return missesAt(p, 0); }, 4 });
        if (cacheLevels == 3)
            m.push_back({ tr("L2 misses per GET"), QStringLiteral("l2_misses_per_get"),
                [](const ThresholdPoint& p) { return missesAt(p, 1); }, 4 });
        m.push_back({ tr("LLC misses per GET"), QStringLiteral("llc_misses_per_get"),
            [](const ThresholdPoint& p) { return p.missesPerGet.empty() ? 0.0 : p.missesPerGet.back(); }, 4 });
    }
    return m;
}

void SweepTableModel::setResult(const SimulationResult& result) {
    beginResetModel();
    m_result = result;
    m_metrics = sweepMetrics(result.points.empty() ? 0 : result.points.front().missesPerGet.size());
    endResetModel();
}

void SweepTableModel::clear() {
    beginResetModel();
    m_result = {};
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
    return m_metrics[std::size_t(column)].value(m_result.points[std::size_t(row)]);
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

void SizeClassTableModel::setPoint(const ThresholdPoint& point) {
    beginResetModel();
    m_classes = point.sizeClasses;
    endResetModel();
}

void SizeClassTableModel::clear() {
    beginResetModel();
    m_classes.clear();
    endResetModel();
}

int SizeClassTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_classes.size());
}

int SizeClassTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SizeClassTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
        return {};
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    const SizeClassUsage& c = m_classes[std::size_t(index.row())];
    qulonglong v = 0;
    switch (Column(index.column())) {
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
    case ColumnCount:
        break;
    }
    return role == Qt::EditRole ? QVariant(v) : QVariant(QLocale().toString(v));
}

QVariant SizeClassTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case ClassBytes:
        return tr("Size class (bytes)");
    case Allocations:
        return tr("Allocations");
    case PayloadBytes:
        return tr("Payload (bytes)");
    case HeaderBytes:
        return tr("Header (bytes)");
    case WasteBytes:
        return tr("Waste (bytes)");
    case UsableBytes:
        return tr("Usable (bytes)");
    case RegionsPerSlab:
        return tr("Regions per slab");
    case Slabs:
        return tr("Slabs");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace layoutlab::gui
