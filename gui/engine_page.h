// SPDX-License-Identifier: MIT
#pragma once

// The Engine view: load the open trace into a real Valkey, Redis or memcached (started from a binary or
// attached), run its GETs, and put the server's measured memory per key beside the simulator's
// prediction, with the relative error, requests/s and latency. It runs the drive job the CLI's `drive`
// runs (layoutlab/jobs/drive_job.h) on the task runner's thread, so it measures exactly what the CLI
// measures, shows the job's progress by phase, cancels it (the server stops with it), and both runs land
// in the database.

#include "layoutlab/jobs/drive_job.h"
#include "layoutlab/jobs/engine_sweep_job.h"
#include "layoutlab/store/stored_run.h"

#include <QJsonObject>
#include <QStandardItemModel>
#include <QWidget>

#include <functional>
#include <optional>

class QButtonGroup;
class QCheckBox;
class QGroupBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTableView;

namespace layoutlab::gui {

class ChartPanel;
class TaskRunner;

// An engine sweep stored as a measured run, its report rebuilt from the run (none when the run is not
// one); predictionRun names its predicted sweep (0 for memcached).
std::optional<EngineSweepReport> storedEngineSweep(const StoredRun& stored);
// The engine-sweep run among `runs` whose predicted sweep is run `predictionRun` (0: none).
qint64 engineSweepBeside(const std::vector<RunRecord>& runs, qint64 predictionRun);

class EnginePage final : public QWidget {
    Q_OBJECT
public:
    EnginePage(TaskRunner& runner, std::function<QString()> databasePath, QWidget* parent = nullptr);

    void setTracePath(const QString& path);
    // The drive job the form describes.
    DriveRequest driveRequest() const;
    bool startDrive(QString* error = nullptr);
    // Shows a drive's report (toJson(DriveReport), as `layoutlab drive --json` prints it).
    void showReport(const QJsonObject& report);

    // The measured curve (engine_curve.cpp): the engine sweep the form describes, started on the runner,
    // and its report shown here (a chart of measured against predicted, one row per setting).
    Expected<EngineSweepRequest> engineSweepRequest() const;
    bool startCurve(QString* error = nullptr);
    void showCurve(const EngineSweepReport& report);
    // The measured curve on show (none after a single drive).
    const std::optional<EngineSweepReport>& curve() const { return m_curve; }
    QLineEdit* sourceEdit() const { return m_source; }
    QLineEdit* buildThresholdsEdit() const { return m_buildThresholds; }
    QLineEdit* buildsEdit() const { return m_builds; }
    QLineEdit* slabSettingsEdit() const { return m_slabSettings; }
    QCheckBox* quickBuildBox() const { return m_quickBuild; }

    QComboBox* engineBox() const { return m_engine; }
    QLineEdit* binaryEdit() const { return m_binary; }
    QLineEdit* connectEdit() const { return m_connect; }
    QRadioButton* attachButton() const { return m_attach; }
    QComboBox* framingBox() const { return m_framing; }
    QSpinBox* runRequestsBox() const { return m_runRequests; }
    const QStandardItemModel& comparison() const { return m_comparison; }
    const QJsonObject& report() const { return m_report; }
    QString summaryText() const;
    std::vector<ChartPanel*> charts() const { return { m_memoryChart, m_latencyChart }; }

    void saveSettings() const;
    void restoreSettings();

signals:
    void failed(const QString& error);
    void runsStored();
    // An engine sweep finished: its points, the trace, the layout's canonical spec (empty for memcached)
    // and the run that holds them.
    void curveMeasured(
        const std::vector<EngineSweepPoint>& points, const QString& trace, const QString& layoutSpec, qint64 run);

private:
    QGroupBox* makeCurveControls();
    void saveCurveSettings() const;
    void restoreCurveSettings();
    void updateControls();
    QStringList m_notes; // the last drive's notes (the model chosen, a calibration)
    void drawMemory();
    void drawCurveMemory(const EngineSweepReport& report, bool active);
    void drawLatency();

    TaskRunner& m_runner;
    std::function<QString()> m_databasePath;
    QString m_tracePath;
    QJsonObject m_report;
    QStandardItemModel m_comparison;
    QStandardItemModel m_memoryData;
    QStandardItemModel m_latencyData;
    QComboBox* m_engine;
    QRadioButton* m_start;
    QRadioButton* m_attach;
    QLineEdit* m_binary;
    QLineEdit* m_connect;
    QComboBox* m_framing;
    QSpinBox* m_runRequests;
    QSpinBox* m_connections;
    QSpinBox* m_pipeline;
    QPushButton* m_run;
    QLabel* m_summary;
    QTableView* m_table;
    ChartPanel* m_memoryChart;
    ChartPanel* m_latencyChart;
    // The measured curve's settings.
    QLineEdit* m_source = nullptr;
    QLineEdit* m_buildThresholds = nullptr;
    QLineEdit* m_curveLayout = nullptr;
    QCheckBox* m_quickBuild = nullptr;
    QLineEdit* m_builds = nullptr;
    QLineEdit* m_slabSettings = nullptr;
    QPushButton* m_measureCurve = nullptr;
    std::optional<EngineSweepReport> m_curve;
};

} // namespace layoutlab::gui
