// SPDX-License-Identifier: MIT
#pragma once

// A read-only table with one row per record: rows, columns and the horizontal headers here, each cell in
// the subclass (cell(), for every role). The Library's traces and runs and the size classes are such
// tables.

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace layoutlab::gui {

template <class Record> class RecordTableModel : public QAbstractTableModel {
public:
    using QAbstractTableModel::QAbstractTableModel;

    void setRecords(std::vector<Record> records) {
        beginResetModel();
        m_records = std::move(records);
        endResetModel();
    }
    void clear() { setRecords({}); }
    const std::vector<Record>& records() const { return m_records; }
    const Record& record(int row) const { return m_records[std::size_t(row)]; }

    int rowCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : int(m_records.size()); }
    int columnCount(const QModelIndex& parent = {}) const override {
        return parent.isValid() ? 0 : int(headers().size());
    }
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override {
        if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
            return {};
        return cell(m_records[std::size_t(index.row())], index.column(), role);
    }
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override {
        if (role != Qt::DisplayRole || orientation != Qt::Horizontal || section < 0 || section >= columnCount())
            return QAbstractTableModel::headerData(section, orientation, role);
        return headers()[section];
    }

protected:
    // The column headers, in column order.
    virtual QStringList headers() const = 0;
    virtual QVariant cell(const Record& record, int column, int role) const = 0;

private:
    std::vector<Record> m_records;
};

} // namespace layoutlab::gui
