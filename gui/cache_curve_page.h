// SPDX-License-Identifier: MIT
#pragma once

// The cache curve: the hit ratio a layout gives at each memory budget, one line per threshold, from the
// same stored sweep the CLI's `sweep --maxmemory FIRST:LAST:COUNT` runs (on the task runner's thread), with
// the real servers' measured hit ratios on it: every stored `drive --maxmemory` (or memcached
// `--memory-limit`) of the open trace under the same policy, a marker at its budget.

#include "layoutlab/sim/results.h"
#include "layoutlab/store/results_db.h"

#include <QStandardItemModel>
#include <QWidget>

#include <functional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLayout;
class QLineEdit;
class QPushButton;
class QTableView;

namespace layoutlab::gui {

class ChartPanel;
class TaskRunner;

// A hit ratio a real server measured under a budget (a stored drive's "hit_ratio" measurement).
struct MeasuredHitRatio {
    std::uint32_t threshold = 0; // the drive's layout's (0: none, memcached)
    std::uint64_t budgetBytes = 0;
    double hitRatio = 0;
    std::uint64_t baseBytes = 0; // the server's used_memory before the trace, which its prediction counted
    // The drive's own prediction, on the clock it ran on and with its fill batches (-1: not stored).
    double predictedForDrive = -1;
    QString allocator; // the drive's model of the server's allocator (its linked jemalloc's quantum)
    QString policy; // as the drive stored it: "allkeys-lru", "memcached segmented LRU"
    QString source; // "redis-server 7.0.15, run 12"
};

// Whether a layout spec is memcached's (its budget is -m, its eviction its own).
bool isMemcachedSpec(const QString& spec);

// The stored drives' hit ratios on the trace at `tracePath` whose layout is `layoutSpec`'s but for the
// threshold (a layout spec without its threshold= setting is compared), under `policy` (memcached's drives
// have none to choose: any memcached drive matches a memcached layout).
Expected<std::vector<MeasuredHitRatio>> measuredHitRatios(
    ResultsDb& db, const QString& tracePath, const QString& layoutSpec, const QString& policy);

class CacheCurvePage final : public QWidget {
    Q_OBJECT
public:
    CacheCurvePage(TaskRunner& runner, std::function<QString()> databasePath, QWidget* parent = nullptr);

    void setTracePath(const QString& path);
    // Starts the curve with the form's settings; false (and `error` set) when they are not valid.
    bool startCurve(QString* error = nullptr);
    // Drives the real server the form names at each of the "measure at" budgets, as `layoutlab drive
    // --maxmemory B --policy P` (memcached: --memory-limit B) does, one stored drive each
    // (cache_curve_measure.cpp); the curve on show then gains their points.
    bool startMeasuring(QString* error = nullptr);
    // Shows a curve (a budgeted sweep's result) and the measured hit ratios stored beside it.
    void showResult(const SimulationResult& result);
    const SimulationResult& result() const { return m_result; }
    const std::vector<MeasuredHitRatio>& measured() const { return m_measured; }

    QLineEdit* layoutEdit() const { return m_layout; }
    QLineEdit* thresholdsEdit() const { return m_thresholds; }
    QLineEdit* budgetsEdit() const { return m_budgets; }
    QComboBox* policyBox() const { return m_policy; }
    QCheckBox* rawSizesBox() const { return m_rawSizes; }
    QDoubleSpinBox* sampleRateBox() const { return m_sampleRate; }
    QLineEdit* baseMemoryEdit() const { return m_baseMemory; }
    QLineEdit* allocatorEdit() const { return m_allocator; }
    QComboBox* engineBox() const { return m_engine; }
    QLineEdit* serverBinaryEdit() const { return m_serverBinary; }
    QLineEdit* measureAtEdit() const { return m_measureAt; }
    ChartPanel* chart() const { return m_chart; }
    const QStandardItemModel& table() const { return m_table; }
    QString summaryText() const;

    void saveSettings() const;
    void restoreSettings();

signals:
    void failed(const QString& error);
    void runStored(qint64 runId);

private:
    QLayout* makeMeasureRow();
    bool memcachedLayout() const;
    void loadMeasured();
    void draw();
    void fillTable();

    TaskRunner& m_runner;
    std::function<QString()> m_databasePath;
    QString m_tracePath;
    SimulationResult m_result;
    std::vector<MeasuredHitRatio> m_measured;
    QStandardItemModel m_table;
    QLineEdit* m_layout;
    QLineEdit* m_thresholds;
    QLineEdit* m_budgets;
    QComboBox* m_policy;
    QCheckBox* m_rawSizes;
    QDoubleSpinBox* m_sampleRate;
    QLineEdit* m_baseMemory;
    QLineEdit* m_allocator;
    QPushButton* m_run;
    QComboBox* m_engine = nullptr;
    QLineEdit* m_serverBinary = nullptr;
    QLineEdit* m_measureAt = nullptr;
    QPushButton* m_measure = nullptr;
    QLabel* m_summary;
    ChartPanel* m_chart;
    QTableView* m_view;
};

} // namespace layoutlab::gui
