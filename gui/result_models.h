// SPDX-License-Identifier: MIT
#pragma once

// Table models over simulation results: one row per threshold of a sweep (SweepTableModel), and one row
// per allocator size class of one threshold (SizeClassTableModel). Charts read their series from these
// models, so a chart, its table and its CSV export always show the same numbers.

#include "layoutlab/report/get_time.h"
#include "layoutlab/sim/point_metrics.h"
#include "layoutlab/sim/results.h"

#include "record_table_model.h"

#include <QAbstractTableModel>

namespace layoutlab::gui {

// A sweep column: its header (with unit), the name the CLI's --json/--csv give it, and its value: a
// metric of the core's metric table, or (the threshold) a function of the point.
struct SweepMetric {
    QString header;
    QString cliName;
    const PointMetric* table = nullptr;
    double (*value)(const ThresholdPoint&) = nullptr;
    int decimals = 0;
    // The predicted memory stall per GET (report/get_time.h), which needs this host's latencies: 1 its
    // middle, 2 its uncertainty (SweepTableModel answers these; `of` does not).
    int stallPart = 0;

    double of(const ThresholdPoint& p) const; // as shown: a percentage times 100
};

// The sweep metrics shown for points with `cacheLevels` cache-model levels (0: no cache model).
std::vector<SweepMetric> sweepMetrics(std::size_t cacheLevels, bool withArena = false, bool withBudget = false);

class SweepTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;

    // `latencies`: the run's load latencies, when it kept them: two more columns give each point's
    // predicted memory stall per GET and its uncertainty.
    void setResult(const SimulationResult& result, const std::optional<LoadLatencies>& latencies = std::nullopt);
    const std::optional<LoadLatencies>& latencies() const { return m_latencies; }
    void clear();
    const SimulationResult& result() const { return m_result; }
    bool hasCacheModel() const { return !m_result.points.empty() && !m_result.points.front().missesPerGet.empty(); }
    // The metrics shown: the threshold, memory, access path, and one per cache level with --cache.
    const std::vector<SweepMetric>& metrics() const { return m_metrics; }
    int columnOf(const QString& cliName) const; // -1 when not shown
    double value(int row, int column) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    SimulationResult m_result;
    std::optional<LoadLatencies> m_latencies;
    std::vector<std::optional<StallEstimate>> m_stall; // by row
    std::vector<SweepMetric> m_metrics;
};

class SizeClassTableModel final : public RecordTableModel<SizeClassUsage> {
    Q_OBJECT
public:
    enum Column {
        ClassBytes,
        Allocations,
        PayloadBytes,
        HeaderBytes,
        WasteBytes,
        UsableBytes,
        RegionsPerSlab,
        Slabs,
        HeldSlabs, // the slab model's slabs (memcached: pages) at the end, or a memcached budget's pages
        Evictions, // memcached under -m: the items the class's LRU evicted
        ColumnCount
    };
    using RecordTableModel::RecordTableModel;

    void setPoint(const ThresholdPoint& point) { setRecords(point.sizeClasses); }
    const std::vector<SizeClassUsage>& classes() const { return records(); }

protected:
    QStringList headers() const override;
    QVariant cell(const SizeClassUsage& c, int column, int role) const override;
};

} // namespace layoutlab::gui
