// SPDX-License-Identifier: MIT
#pragma once

// The workload of a trace: key and value size histograms bucketed by the allocator's size classes (so
// every bar is one class: the class boundaries are the bar edges), the op mix, the TTL share and the
// distinct keys. The statistics are those of `layoutlab import --stats`, computed on the task runner.

#include "layoutlab/import/import_stats.h"

#include <QStandardItemModel>
#include <QWidget>

#include <functional>

class QLabel;

namespace layoutlab::gui {

class ChartPanel;
class TaskRunner;

class WorkloadPage final : public QWidget {
    Q_OBJECT
public:
    WorkloadPage(TaskRunner& runner, std::function<QString()> databasePath, QWidget* parent = nullptr);

    // Reads the trace's statistics on the task runner; false (and `error` set) if it cannot start.
    bool loadTrace(const QString& path, QString* error = nullptr);
    void showStats(const TraceStats& stats);
    QString tracePath() const { return m_tracePath; }
    std::vector<ChartPanel*> charts() const { return { m_valueChart, m_keyChart, m_opChart }; }
    const QStandardItemModel& valueModel() const { return m_valueModel; }

signals:
    void statsReady(const QString& path);
    void failed(const QString& error);

private:
    void drawHistogram(ChartPanel* chart, QStandardItemModel& model, const SizeHistogram& h, const QString& what);

    TaskRunner& m_runner;
    std::function<QString()> m_databasePath;
    QString m_tracePath;
    QLabel* m_summary;
    ChartPanel* m_valueChart;
    ChartPanel* m_keyChart;
    ChartPanel* m_opChart;
    QStandardItemModel m_valueModel;
    QStandardItemModel m_keyModel;
    QStandardItemModel m_opModel;
};

} // namespace layoutlab::gui
