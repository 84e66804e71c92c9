// SPDX-License-Identifier: MIT
#pragma once

// A collection limit swept in the sweep's pass (sweep --param): bytes per key of the keyspace against lines per
// lookup of the limit type's elements, both against the limit's value, with the engine's default and the
// advice (report/limit_advice.h, equal weights) marked. The form's row to choose the limit and its values, and
// the chart, hidden when the result has no swept limit.

#include "layoutlab/sim/results.h"

#include <QStandardItemModel>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;

namespace layoutlab::gui {

class ChartPanel;

// The limit and its values for the sweep form: "none" or one of the engines' limits, and values as `--param`
// takes them.
class LimitSweepControls final : public QWidget {
    Q_OBJECT
public:
    explicit LimitSweepControls(QWidget* parent = nullptr);
    // "NAME=VALUES" for SimulationRequest::limitSweep; empty when no limit is chosen.
    QString parameter() const;
    // Sets the row from a run's parameters' limit_sweep ({name, values}); clears it for none.
    void setFromParameters(const QString& name, const std::vector<std::int64_t>& values);
    QComboBox* limitBox() const { return m_limit; }
    QLineEdit* valuesEdit() const { return m_values; }
    void saveSettings() const;
    void restoreSettings();

private:
    QComboBox* m_limit;
    QLineEdit* m_values;
};

class LimitSweepChart final : public QWidget {
    Q_OBJECT
public:
    explicit LimitSweepChart(QWidget* parent = nullptr);
    // Draws the result's swept limit, or hides itself when it has none.
    void show(const SimulationResult& result);
    ChartPanel* chart() const { return m_chart; }
    QString adviceText() const;

private:
    ChartPanel* m_chart;
    QLabel* m_advice;
    QStandardItemModel m_data; // the chart's rows, for its CSV
};

} // namespace layoutlab::gui
