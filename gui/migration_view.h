// SPDX-License-Identifier: MIT
#pragma once

// Engines and versions side by side on one trace, in the Compare view: every layout with a stored run of
// the trace, each at the setting its engine ships with (layoutlab/report/migration.h), as one bar chart of
// bytes per key labelled with the GET path, and as a table (what the chart exports as CSV).

#include "layoutlab/report/migration.h"
#include "layoutlab/store/results_db.h"

#include <QAbstractTableModel>
#include <QWidget>

class QLabel;
class QTableView;

namespace layoutlab::gui {

class ChartPanel;

class MigrationModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Layout,
        Setting,
        Allocator,
        BytesPerKey,
        Change,
        LinesPerGet,
        LoadsPerGet,
        Figures,
        Run,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;

    void setTable(MigrationTable table, std::vector<std::int64_t> runIds);
    const MigrationTable& table() const { return m_table; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    MigrationTable m_table;
    std::vector<std::int64_t> m_runIds; // the run each row comes from
};

class MigrationView final : public QWidget {
    Q_OBJECT
public:
    explicit MigrationView(QWidget* parent = nullptr);

    // The complete runs of `base`'s trace among `runs`, one per layout and allocator (the newest), each at
    // its shipped setting; `base`'s layout first, the others against it. Errors come back as text.
    QString show(ResultsDb& db, const std::vector<RunRecord>& runs, const RunRecord& base);
    const MigrationModel& model() const { return m_model; }
    ChartPanel* chart() const { return m_chart; }

private:
    void draw();

    MigrationModel m_model;
    QLabel* m_note;
    ChartPanel* m_chart;
    QTableView* m_table;
};

} // namespace layoutlab::gui
