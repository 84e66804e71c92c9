// SPDX-License-Identifier: MIT
#pragma once

// What one collection key costs as it grows: usable bytes per entry (field, member or element) against its
// number of entries, one line per engine line, for the shape and limits chosen. The compact encodings'
// limits are thresholds like the string one: the line jumps where the engine leaves its listpack or intset
// for a table, and moving the limit moves the jump. Drawn from the core's collection model
// (layout/collection_layout.h), as `layoutlab layouts --type` prints one key of it.

#include <QStandardItemModel>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QSpinBox;

namespace layoutlab::gui {

class ChartPanel;

class CollectionsPage final : public QWidget {
    Q_OBJECT
public:
    explicit CollectionsPage(QWidget* parent = nullptr);

    void restoreSettings();
    void saveSettings() const;

    QComboBox* typeBox() const { return m_type; }
    QSpinBox* elementBytesBox() const { return m_elementBytes; }
    QSpinBox* valueBytesBox() const { return m_valueBytes; }
    QCheckBox* integersBox() const { return m_integers; }
    QCheckBox* oneByOneBox() const { return m_oneByOne; }
    QSpinBox* maxEntriesBox() const { return m_maxEntries; }
    // The type's entries limit (list: list-max-listpack-size) and value-length limit (none for lists).
    QSpinBox* entriesLimitBox() const { return m_entriesLimit; }
    QSpinBox* valueLimitBox() const { return m_valueLimit; }
    QListWidget* layoutsList() const { return m_layouts; }
    ChartPanel* chart() const { return m_chart; }
    const QStandardItemModel& model() const { return m_model; }
    QString summary() const;

private:
    void typeChanged();
    void redraw();

    QComboBox* m_type;
    QSpinBox* m_elementBytes;
    QSpinBox* m_valueBytes;
    QCheckBox* m_integers;
    QCheckBox* m_oneByOne;
    QSpinBox* m_maxEntries;
    QLabel* m_entriesLimitLabel;
    QSpinBox* m_entriesLimit;
    QLabel* m_valueLimitLabel;
    QSpinBox* m_valueLimit;
    QListWidget* m_layouts;
    QLabel* m_summary;
    ChartPanel* m_chart;
    QStandardItemModel m_model;
};

} // namespace layoutlab::gui
