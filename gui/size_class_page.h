// SPDX-License-Identifier: MIT
#pragma once

// Where the bytes of one threshold go: for each allocator size class, the bytes per key of keys and
// values (payload), of the store's own structures (header) and of class rounding (waste), as stacked
// bars (jemalloc's 16-byte class spacing shows as the waste), with the classes' table underneath.

#include "result_models.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QTableView;

namespace layoutlab::gui {

class ChartPanel;

class SizeClassPage final : public QWidget {
    Q_OBJECT
public:
    explicit SizeClassPage(QWidget* parent = nullptr);

    void setResult(const SimulationResult& result);
    // Shows the point at `threshold` (the nearest one when the sweep has no such point).
    void showThreshold(std::uint32_t threshold);
    ChartPanel* chart() const { return m_chart; }
    const SizeClassTableModel& model() const { return m_model; }
    QComboBox* thresholdBox() const { return m_threshold; }

private:
    void redraw();

    SimulationResult m_result;
    SizeClassTableModel m_model;
    QComboBox* m_threshold;
    QLabel* m_summary;
    ChartPanel* m_chart;
    QTableView* m_table;
};

} // namespace layoutlab::gui
