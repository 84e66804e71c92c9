// SPDX-License-Identifier: MIT
#include "library_models.h"

#include "layoutlab/layout/layout_file.h"

#include <QBrush>
#include <QFileInfo>
#include <QLocale>
#include <QPalette>

namespace layoutlab::gui {

namespace {
QString text(const std::string& s) {
    return QString::fromStdString(s);
}
// Display text, with the raw value under EditRole so that sorting by a numeric column sorts numbers.
QVariant number(qulonglong v, int role) {
    return role == Qt::EditRole ? QVariant(v) : QVariant(QLocale().toString(v));
}
// "2026-11-30T09:45:00Z" shown as "2026-11-30 09:45:00" (the header says UTC).
QVariant time(const std::string& iso, int role) {
    QString s = text(iso);
    if (role == Qt::DisplayRole)
        s.replace(QLatin1Char('T'), QLatin1Char(' ')).remove(QLatin1Char('Z'));
    return s;
}
} // namespace

void TracesTableModel::setTraces(std::vector<TraceRecord> traces) {
    beginResetModel();
    m_traces = std::move(traces);
    endResetModel();
}

int TracesTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_traces.size());
}

int TracesTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TracesTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
        return {};
    const TraceRecord& t = m_traces[std::size_t(index.row())];
    if (role == Qt::ToolTipRole)
        return text(t.source);
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    switch (Column(index.column())) {
    case Id:
        return qlonglong(t.id);
    case Source:
        return role == Qt::EditRole ? text(t.source) : QFileInfo(text(t.source)).fileName();
    case Format:
        return text(t.format);
    case Requests:
        return number(t.requests, role);
    case DistinctKeys:
        return number(t.distinctKeys, role);
    case SizeBytes:
        return number(t.sizeBytes, role);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant TracesTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Id:
        return tr("Id");
    case Source:
        return tr("Trace");
    case Format:
        return tr("Format");
    case Requests:
        return tr("Requests");
    case DistinctKeys:
        return tr("Distinct keys");
    case SizeBytes:
        return tr("Size (bytes)");
    case ColumnCount:
        break;
    }
    return {};
}

void RunsTableModel::setRuns(std::vector<RunRecord> runs) {
    beginResetModel();
    m_runs = std::move(runs);
    endResetModel();
}

int RunsTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_runs.size());
}

int RunsTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
        return {};
    const RunRecord& r = m_runs[std::size_t(index.row())];
    if (role == Qt::ToolTipRole)
        return !r.error.empty()           ? text(r.error)
            : index.column() == Layout    ? text(r.layout)
            : index.column() == Allocator ? text(r.allocator)
                                          : text(r.traceSource);
    if (role == Qt::ForegroundRole && index.column() == Status && (r.status == "failed" || r.status == "interrupted"))
        return QBrush(r.status == "failed" ? Qt::darkRed : Qt::darkYellow);
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    switch (Column(index.column())) {
    case Id:
        return qlonglong(r.id);
    case Kind:
        return text(r.kind);
    case Status: // a running run whose process is gone will never finish
        return text(r.status == "running" && !r.live ? std::string("abandoned") : r.status);
    case Trace:
        return role == Qt::EditRole ? text(r.traceSource) : QFileInfo(text(r.traceSource)).fileName();
    case Layout:
        return role == Qt::EditRole ? text(r.layout) : text(layoutLabel(r.layout));
    case Allocator:
        return text(r.allocator);
    case Points:
        return number(r.points, role);
    case Started:
        return time(r.startedAt, role);
    case Finished:
        return time(r.finishedAt, role);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Id:
        return tr("Run");
    case Kind:
        return tr("Kind");
    case Status:
        return tr("Status");
    case Trace:
        return tr("Trace");
    case Layout:
        return tr("Layout");
    case Allocator:
        return tr("Allocator");
    case Points:
        return tr("Points");
    case Started:
        return tr("Started (UTC)");
    case Finished:
        return tr("Finished (UTC)");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace layoutlab::gui
