// SPDX-License-Identifier: MIT
#pragma once

// The library: the traces and runs of the results database, filterable, with the actions that use
// them (open a trace, show a run's sweep, delete runs).

#include "library_models.h"

#include <QSortFilterProxyModel>
#include <QWidget>

class QLabel;
class QLineEdit;
class QTableView;

namespace layoutlab::gui {

class LibraryPage final : public QWidget {
    Q_OBJECT
public:
    explicit LibraryPage(QWidget* parent = nullptr);

    // Reloads from the database at `path`; an error text when it cannot be read (empty on success).
    QString reload(const QString& path);
    QString databasePath() const { return m_path; }
    const TracesTableModel& traces() const { return m_traces; }
    const RunsTableModel& runs() const { return m_runs; }
    QLineEdit* filterEdit() const { return m_filter; }
    QTableView* runsView() const { return m_runsView; }

signals:
    void openTraceRequested(const QString& path);
    void showRunRequested(qint64 runId);
    void compareRequested(qint64 runA, qint64 runB);
    void failed(const QString& error);

private:
    void deleteSelectedRuns();
    std::vector<qint64> selectedRunIds() const;

    QString m_path;
    TracesTableModel m_traces;
    RunsTableModel m_runs;
    QSortFilterProxyModel m_tracesFilter;
    QSortFilterProxyModel m_runsFilter;
    QLabel* m_title;
    QLineEdit* m_filter;
    QTableView* m_tracesView;
    QTableView* m_runsView;
};

} // namespace layoutlab::gui
