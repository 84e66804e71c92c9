// SPDX-License-Identifier: MIT
#pragma once

// The threshold sweep: pick a layout, an allocator and a threshold range, run the same stored sweep the
// CLI's `sweep` runs (on the task runner's thread), and chart every metric against the threshold, with
// markers at 64, 128 and the leanest threshold, and the same numbers in a table underneath.

#include "result_models.h"

#include "layoutlab/store/engine_sweep_points.h"
#include "layoutlab/store/stored_run.h"

#include <QHBoxLayout>
#include <QStandardItemModel>
#include <QWidget>

#include <functional>
#include <optional>

class QCheckBox;
class QComboBox;
class QFileSystemWatcher;
class QGridLayout;
class QTimer;
class QToolButton;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;

namespace layoutlab::gui {

class ChartPanel;
class LimitSweepChart;
class LimitSweepControls;
class TaskRunner;

// Whether the threshold changes nothing in `points`: every one uses the same memory.
bool flatSweep(const std::vector<ThresholdPoint>& points);

class SweepPage final : public QWidget {
    Q_OBJECT
public:
    SweepPage(TaskRunner& runner, std::function<QString()> databasePath, QWidget* parent = nullptr);

    void setTracePath(const QString& path);
    QString tracePath() const { return m_tracePath; }
    // Starts the sweep with the chosen options; false (and `error` set) when they are not valid.
    bool startSweep(QString* error = nullptr);
    // Shows a result computed elsewhere (a stored run opened from the library).
    // `latencies`: the run's load latencies, when it kept them (the memory stall per GET is shown then).
    void showResult(const SimulationResult& result, const std::optional<LoadLatencies>& latencies = std::nullopt);
    // Chooses a layout file (docs/layout-files.md) as the layout. Once swept, the sweep runs again whenever
    // the file changes on disk (when "re-run on change" is on).
    void setLayoutFile(const QString& path);
    // Asks for a layout file and uses it.
    void chooseLayoutFile();
    QString layoutFile() const; // the chosen layout file, if the layout is one
    // The layout as parseLayout() takes it: the text typed or chosen, or a layout file's spec.
    QString currentLayoutSpec() const;
    QCheckBox* rerunOnChangeBox() const { return m_rerunOnChange; }
    QCheckBox* stallBox() const { return m_stall; }
    QSpinBox* getPipelineBox() const { return m_getPipeline; }

    const SweepTableModel& model() const { return m_model; }
    std::vector<ChartPanel*> charts() const { return m_charts; }
    QComboBox* layoutBox() const { return m_layout; }
    QString summaryText() const;
    // Real servers' bytes per key (an engine sweep of `trace` predicted with `layoutSpec`, a canonical
    // spec), drawn on the memory chart beside the predicted curve with the error at each, whenever the
    // sweep shown is of that trace and layout. `source` says where they come from ("run 12").
    void setMeasuredPoints(
        std::vector<EngineSweepPoint> points, const QString& trace, const QString& layoutSpec, const QString& source);
    // The measured points drawn now (none when the sweep shown is of another trace or layout).
    std::vector<EngineSweepPoint> shownMeasuredPoints() const;
    QString measuredText() const;
    // Shows a stored run's points, with the form set to the parameters it was made with.
    void showStoredRun(const StoredRun& stored);
    QComboBox* allocatorBox() const { return m_allocator; }
    QLineEdit* thresholdsEdit() const { return m_thresholds; }
    QCheckBox* cacheBox() const { return m_cache; }
    // The slab model (what the allocator keeps after deletes and overwrites), with a timeline of the trace.
    QCheckBox* slabsBox() const { return m_slabs; }
    // A cache budget (SimulationRequest::maxmemory): one size as the server reads it, the eviction policy
    // and look-aside filling. With a budget the sweep replays each threshold under it: the last chart shows
    // the hit ratio and evictions, in place of the cache model's misses (not modelled together).
    QLineEdit* maxmemoryEdit() const { return m_maxmemory; }
    QComboBox* policyBox() const { return m_policy; }
    QCheckBox* fillOnMissBox() const { return m_fillOnMiss; }
    // The timeline chart: allocated beside active bytes over the trace at the cursor's threshold (hidden
    // when the result has no timeline).
    ChartPanel* timelineChart() const { return m_timelineChart; }
    // A collection limit swept in the same pass (sweep --param): the form's row, and its chart of bytes per key
    // and lines per lookup against the limit's value (hidden when the result has none).
    LimitSweepControls* limitControls() const { return m_limitControls; }
    LimitSweepChart* limitChart() const { return m_limitChart; }
    static constexpr std::uint32_t kTimelineSamples = 200;

    void saveSettings() const;
    void restoreSettings();

    // The threshold cursor: every chart draws it, the table selects its row, the line under the summary
    // gives its figures, and cursorMoved tells the other views. Snaps to the nearest threshold swept.
    void setCursorThreshold(double threshold);
    std::optional<std::uint32_t> cursorThreshold() const { return m_cursor; }
    QString cursorText() const;

signals:
    void resultChanged(const SimulationResult& result);
    void cursorMoved(std::uint32_t threshold);
    // The layout file changed and the sweep is run again (or could not be: `error`).
    void layoutFileReloaded(const QString& error);
    void runStored(qint64 runId);
    void failed(const QString& error);

private:
    static constexpr int kSpecRole = Qt::UserRole + 1; // a layout file item's spec
    void redraw();
    // The budget's widgets set up, in a row for the form.
    QHBoxLayout* budgetRow();
    void drawMeasured();
    void drawTimeline(); // sweep_timeline.cpp
    void placeSideCharts(); // the timeline and the limit chart, beside the four (sweep_timeline.cpp)
    void watchLayoutFile();
    void layoutFileChanged();
    // One line of a chart: the metric (by its CLI name), its legend name, and whether it is read on the
    // right-hand axis (a metric whose scale differs from the left one's).
    struct ChartLine {
        QString metric;
        QString name;
        bool rightAxis = false;
    };
    // Draws `lines` against the threshold. With `perKeyBytes` the left axis is in B, KiB or MiB per key,
    // by the largest value, and `yTitle` is ignored.
    // `rightFitted`: the right axis fitted to its lines (a second figure in the same unit), else from zero.
    void drawChart(ChartPanel* chart, const std::vector<ChartLine>& lines, const QString& yTitle,
        const QString& rightTitle = {}, bool perKeyBytes = false, bool rightFitted = false);

    TaskRunner& m_runner;
    std::function<QString()> m_databasePath;
    QString m_tracePath;
    SweepTableModel m_model;
    QComboBox* m_layout;
    QComboBox* m_allocator;
    QLineEdit* m_thresholds;
    QCheckBox* m_cache;
    QCheckBox* m_stall; // measure this host's load latencies and predict the memory stall per GET
    QSpinBox* m_getPipeline; // SimulationRequest::getPipeline
    QCheckBox* m_slabs;
    QLineEdit* m_maxmemory;
    QComboBox* m_policy;
    QCheckBox* m_fillOnMiss;
    QToolButton* m_layoutFileButton;
    QCheckBox* m_rerunOnChange;
    QFileSystemWatcher* m_watcher;
    QTimer* m_reloadDelay; // editors save in several steps: one re-run after they are done
    QString m_sweptLayoutFile; // the layout file of the last sweep started here
    bool m_reloadPending = false; // the file changed while another task ran
    QPushButton* m_run;
    QLabel* m_summary;
    QTableView* m_table;
    QLabel* m_cursorLine;
    QLabel* m_measuredLine;
    double m_memoryDivisor = 1; // the memory chart's bytes per unit of its axis (1, 1024, ...)
    struct Measured {
        std::vector<EngineSweepPoint> points;
        QString trace;
        QString layoutSpec;
        QString source;
    } m_measured;
    std::optional<std::uint32_t> m_cursor;
    void drawCursor();
    std::vector<ChartPanel*> m_charts;
    ChartPanel* m_timelineChart;
    QGridLayout* m_chartGrid = nullptr;
    LimitSweepControls* m_limitControls;
    LimitSweepChart* m_limitChart;
    QStandardItemModel m_timelineData; // the timeline chart's data, for its CSV
};

} // namespace layoutlab::gui
