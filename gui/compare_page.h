// SPDX-License-Identifier: MIT
#pragma once

// Two stored runs side by side: their parameters (the differing ones highlighted), one metric of both at
// the settings their engines ship with and per threshold with the difference, and both as lines on one
// chart; beside it, every layout run on the trace at its shipped setting (migration_view.h).

#include "result_models.h"

#include "layoutlab/store/engine_sweep_points.h"
#include "layoutlab/store/results_db.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <map>

class QComboBox;
class QLabel;
class QTableView;
class QTabWidget;

namespace layoutlab::gui {

class ChartPanel;
class MigrationView;

// A run's metric at each of its thresholds (nothing where it lacks the metric there).
using ThresholdValues = std::map<std::uint32_t, std::optional<double>>;

// A metric of stored points; for an engine sweep (no points), its servers' measured bytes per key.
ThresholdValues thresholdValues(const std::vector<ThresholdPoint>& points,
    const std::vector<EngineSweepPoint>& measured, const SweepMetric& metric);

class CompareTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Threshold, RunA, RunB, Difference, Change, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    // The union of both runs' thresholds, each with both runs' values.
    void setRuns(const ThresholdValues& a, const ThresholdValues& b, const SweepMetric& metric);
    void clear();
    // The metric of run A (`b` false) or B at `row`; nothing when that run has no point there.
    std::optional<double> value(int row, bool b) const;
    std::uint32_t threshold(int row) const { return m_rows[std::size_t(row)].threshold; }
    // Whether both runs have the row's threshold and their values differ; a threshold one run lacks is not
    // a difference (shown as such, and counted apart).
    bool differs(int row) const;
    bool inOneRunOnly(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        std::uint32_t threshold = 0;
        std::optional<double> a, b;
    };
    std::vector<Row> m_rows;
    SweepMetric m_metric {};
};

class ComparePage final : public QWidget {
    Q_OBJECT
public:
    explicit ComparePage(QWidget* parent = nullptr);

    // The runs that have points, and engine sweeps (measured points), from the database at `databasePath`.
    void setRuns(const QString& databasePath, const std::vector<RunRecord>& runs);
    // Compares the runs with these ids (false when either is not listed).
    bool compare(qint64 runA, qint64 runB);
    const CompareTableModel& model() const { return m_model; }
    ChartPanel* chart() const { return m_chart; }
    QComboBox* metricBox() const { return m_metric; }
    // The runs at the settings their engines ship with, for the metric shown (empty when either run lacks
    // its shipped point).
    QString shippedText() const;
    MigrationView* migration() const { return m_migration; }
    // The chart of the tab on show (File → Export exports it).
    ChartPanel* shownChart() const;
    QTabWidget* tabs() const { return m_tabs; }

signals:
    void failed(const QString& error);

private:
    void refresh();
    void refreshMigration(ResultsDb& db, const RunRecord& base);

    QString m_databasePath;
    std::vector<RunRecord> m_runs;
    std::vector<SweepMetric> m_metrics;
    CompareTableModel m_model;
    QComboBox* m_runA;
    QComboBox* m_runB;
    QComboBox* m_metric;
    QLabel* m_parameters;
    QLabel* m_shipped;
    ChartPanel* m_chart;
    QTableView* m_table;
    QTabWidget* m_tabs;
    MigrationView* m_migration;
    std::pair<std::int64_t, std::int64_t> m_migrationShown { -1, -1 }; // (trace, newest run) it shows
};

} // namespace layoutlab::gui
