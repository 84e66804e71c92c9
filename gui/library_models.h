// SPDX-License-Identifier: MIT
#pragma once

// Table models over the results database: the traces it has seen and the runs it holds.

#include "layoutlab/store/results_db.h"

#include <QAbstractTableModel>

namespace layoutlab::gui {

class TracesTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Source, Format, Requests, DistinctKeys, SizeBytes, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    void setTraces(std::vector<TraceRecord> traces);
    const TraceRecord& trace(int row) const { return m_traces[std::size_t(row)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<TraceRecord> m_traces;
};

class RunsTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Kind, Status, Trace, Layout, Allocator, Points, Started, Finished, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    void setRuns(std::vector<RunRecord> runs);
    const RunRecord& run(int row) const { return m_runs[std::size_t(row)]; }
    const std::vector<RunRecord>& all() const { return m_runs; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<RunRecord> m_runs;
};

} // namespace layoutlab::gui
