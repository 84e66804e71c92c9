// SPDX-License-Identifier: MIT
#pragma once

// Table models over the results database: the traces it has seen and the runs it holds.

#include "layoutlab/store/results_db.h"

#include "record_table_model.h"

namespace layoutlab::gui {

class TracesTableModel final : public RecordTableModel<TraceRecord> {
    Q_OBJECT
public:
    enum Column { Id, Source, Format, Requests, DistinctKeys, SizeBytes, ColumnCount };
    using RecordTableModel::RecordTableModel;

    const TraceRecord& trace(int row) const { return record(row); }

protected:
    QStringList headers() const override;
    QVariant cell(const TraceRecord& t, int column, int role) const override;
};

class RunsTableModel final : public RecordTableModel<RunRecord> {
    Q_OBJECT
public:
    enum Column { Id, Kind, Status, Trace, Layout, Allocator, Points, Started, Finished, ColumnCount };
    using RecordTableModel::RecordTableModel;

    const RunRecord& run(int row) const { return record(row); }
    const std::vector<RunRecord>& all() const { return records(); }

protected:
    QStringList headers() const override;
    QVariant cell(const RunRecord& r, int column, int role) const override;
};

} // namespace layoutlab::gui
