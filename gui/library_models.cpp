// SPDX-License-Identifier: MIT
#include "library_models.h"

#include "layoutlab/layout/layout_registry.h"

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

QVariant TracesTableModel::cell(const TraceRecord& t, int column, int role) const {
    if (role == Qt::ToolTipRole)
        return text(t.source);
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    switch (Column(column)) {
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

QStringList TracesTableModel::headers() const {
    return { tr("Id"), tr("Trace"), tr("Format"), tr("Requests"), tr("Distinct keys"), tr("Size (bytes)") };
}

QVariant RunsTableModel::cell(const RunRecord& r, int column, int role) const {
    if (role == Qt::ToolTipRole)
        return !r.error.empty()   ? text(r.error)
            : column == Layout    ? text(r.layout)
            : column == Allocator ? text(r.allocator)
                                  : text(r.traceSource);
    if (role == Qt::ForegroundRole && column == Status && (r.status == "failed" || r.status == "interrupted"))
        return QBrush(r.status == "failed" ? Qt::darkRed : Qt::darkYellow);
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    switch (Column(column)) {
    case Id:
        return qlonglong(r.id);
    case Kind:
        return text(r.kind);
    case Status: // a running run whose process is gone will never finish
        return text(r.status == "running" && !r.live ? std::string("abandoned") : r.status);
    case Trace:
        return role == Qt::EditRole ? text(r.traceSource) : QFileInfo(text(r.traceSource)).fileName();
    case Layout:
        return role == Qt::EditRole ? text(r.layout) : text(r.layoutName);
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

QStringList RunsTableModel::headers() const {
    return { tr("Run"), tr("Kind"), tr("Status"), tr("Trace"), tr("Layout"), tr("Allocator"), tr("Points"),
        tr("Started (UTC)"), tr("Finished (UTC)") };
}

} // namespace layoutlab::gui
