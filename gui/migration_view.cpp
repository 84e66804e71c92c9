// SPDX-License-Identifier: MIT
#include "migration_view.h"

#include "chart_panel.h"
#include "kept_splitter.h"
#include "stored_job.h"

#include "layoutlab/spec.h"
#include "layoutlab/store/engine_sweep_points.h"
#include "layoutlab/store/stored_run.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalBarSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <map>
#include <set>

namespace layoutlab::gui {

namespace {
QString qt(const std::string& s) {
    return QString::fromStdString(s);
}

// What tells apart rows of one layout under several allocators: the allocator parameters whose values
// differ among them ("quantum=16"), or the whole spec when they cannot be parsed.
std::map<std::size_t, QString> allocatorDifferences(const MigrationTable& table) {
    std::map<std::string, std::vector<std::size_t>> byName;
    for (std::size_t i = 0; i < table.rows.size(); ++i)
        byName[table.rows[i].name].push_back(i);
    std::map<std::size_t, QString> out;
    for (const auto& [name, rows] : byName) {
        if (rows.size() < 2)
            continue;
        std::vector<Spec> specs;
        for (const auto i : rows)
            if (auto spec = Spec::parse(table.rows[i].allocator, "allocator"))
                specs.push_back(std::move(*spec));
        for (std::size_t k = 0; k < rows.size(); ++k) {
            if (specs.size() != rows.size()) {
                out[rows[k]] = qt(table.rows[rows[k]].allocator);
                continue;
            }
            QStringList differing;
            for (const auto& [key, value] : specs[k].parameters()) {
                const bool same = std::all_of(specs.begin(), specs.end(), [&](const Spec& other) {
                    const auto it = other.parameters().find(key);
                    return it != other.parameters().end() && it->second == value;
                });
                if (!same)
                    differing << qt(key + "=" + value);
            }
            out[rows[k]] = differing.isEmpty() ? qt(specs[k].name()) : differing.join(QLatin1Char(','));
        }
    }
    return out;
}
} // namespace

void MigrationModel::setTable(MigrationTable table, std::vector<std::int64_t> runIds) {
    beginResetModel();
    m_table = std::move(table);
    m_runIds = std::move(runIds);
    endResetModel();
}

int MigrationModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_table.rows.size());
}

int MigrationModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MigrationModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const auto& r = m_table.rows[std::size_t(index.row())];
    const bool first = index.row() == 0;
    if (role == Qt::TextAlignmentRole)
        return index.column() >= BytesPerKey && index.column() != Figures ? int(Qt::AlignRight | Qt::AlignVCenter)
                                                                          : int(Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == Figures)
        return qt(r.validation);
    if (role == Qt::ToolTipRole && index.column() == Layout)
        return qt(r.spec);
    if (role != Qt::DisplayRole && role != Qt::EditRole)
        return {};
    const bool exact = role == Qt::EditRole;
    const QLocale locale;
    switch (Column(index.column())) {
    case Layout:
        return qt(r.name);
    case Setting:
        return qt(settingText(r));
    case Allocator:
        return qt(r.allocator);
    case BytesPerKey:
        return exact ? QVariant(r.bytesPerKey) : QVariant(locale.toString(r.bytesPerKey, 'f', 2));
    case Change: {
        const double change = -100.0 * savingFraction(m_table, r);
        if (first)
            return exact ? QVariant(0.0) : QVariant(tr("(the base)"));
        return exact ? QVariant(change)
                     : QVariant(QString(change > 0 ? QStringLiteral("+") : QString()) + locale.toString(change, 'f', 1)
                         + QStringLiteral(" %"));
    }
    case LinesPerGet:
        return exact ? QVariant(r.linesPerGet) : QVariant(locale.toString(r.linesPerGet, 'f', 3));
    case LoadsPerGet:
        return exact ? QVariant(r.dependentLoadsPerGet) : QVariant(locale.toString(r.dependentLoadsPerGet, 'f', 3));
    case Figures:
        return r.measured ? tr("measured") : tr("predicted");
    case Run:
        return qlonglong(m_runIds[std::size_t(index.row())]);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant MigrationModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Layout:
        return tr("Layout");
    case Setting:
        return tr("Shipped setting");
    case Allocator:
        return tr("Allocator");
    case BytesPerKey:
        return tr("Bytes/key");
    case Change:
        return tr("Against the first");
    case LinesPerGet:
        return tr("Lines/GET");
    case LoadsPerGet:
        return tr("Loads/GET");
    case Figures:
        return tr("Figures");
    case Run:
        return tr("Run");
    case ColumnCount:
        break;
    }
    return {};
}

MigrationView::MigrationView(QWidget* parent)
    : QWidget(parent)
    , m_note(new QLabel(this))
    , m_chart(new ChartPanel(QStringLiteral("migration"), this))
    , m_table(new QTableView(this)) {
    m_note->setWordWrap(true);
    m_chart->setObjectName(QStringLiteral("migration-chart"));
    m_chart->setDataModel(&m_model);
    m_table->setModel(&m_model);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    auto* splitter = keptSplitter(Qt::Vertical, QStringLiteral("migration-splitter"), m_chart, 3, m_table, 2, this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_note);
    layout->addWidget(splitter, 1);
    draw();
}

QString MigrationView::show(ResultsDb& db, const std::vector<RunRecord>& runs, const RunRecord& base) {
    // The base's layout first, then the others, newest run of each layout and allocator.
    std::vector<const RunRecord*> picked { &base };
    std::set<std::string> seen { base.layoutName + "|" + base.allocator };
    std::vector<const RunRecord*> newestFirst;
    for (const auto& r : runs)
        newestFirst.push_back(&r);
    std::sort(newestFirst.begin(), newestFirst.end(), [](auto* a, auto* b) { return a->id > b->id; });
    for (const auto* r : newestFirst)
        if (r->traceId == base.traceId && r->status == "complete" && r->points > 0 && r->kind != kEngineSweepKind
            && seen.insert(r->layoutName + "|" + r->allocator).second)
            picked.push_back(r);
    MigrationTable table;
    table.trace = QFileInfo(qt(base.traceSource)).fileName().toStdString();
    std::vector<std::int64_t> ids;
    QStringList without;
    for (const auto* r : picked) {
        if (r->points == 0)
            continue; // an engine sweep as the base: its predicted sweep is listed beside it
        auto stored = loadStoredRun(db, r->id);
        if (!stored)
            return errorText(stored.error());
        if (!shippedPoint(stored->result)) {
            without << QStringLiteral("#%1 %2").arg(r->id).arg(qt(r->layoutName));
            continue;
        }
        table.rows.push_back(migrationRow(r->layoutName, stored->result));
        ids.push_back(r->id);
    }
    QString note = tr("Every layout with a run of %1, each at the setting its engine ships with, against the first "
                      "(run A's). Bytes per key include the hash index; measured: checked against a real build, "
                      "predicted: from source.")
                       .arg(qt(table.trace));
    if (!without.isEmpty())
        note += QLatin1Char(' ')
            + tr("Not at their shipped setting, so left out: %1 (sweep them over it).")
                  .arg(without.join(QStringLiteral(", ")));
    if (table.rows.size() < 2)
        note += QLatin1Char(' ')
            + tr("Run a second layout on this trace (Sweep view, or `layoutlab sim --layout A --layout B`) to see them "
                 "side by side.");
    m_note->setText(note);
    m_model.setTable(std::move(table), std::move(ids));
    draw();
    return {};
}

void MigrationView::draw() {
    QChart* chart = m_chart->freshChart();
    const auto& table = m_model.table();
    chart->setTitle(table.rows.empty() ? tr("Engines side by side")
                                       : tr("Bytes per key at each engine's shipped setting, %1").arg(qt(table.trace)));
    if (table.rows.empty())
        return;
    auto* series = new QHorizontalBarSeries(chart);
    auto* set = new QBarSet(tr("bytes per key"), series);
    QStringList categories;
    double high = 0;
    const auto allocators = allocatorDifferences(table);
    // Qt draws the first category at the bottom: the base goes last, to be on top.
    for (auto r = table.rows.rbegin(); r != table.rows.rend(); ++r) {
        *set << r->bytesPerKey;
        high = std::max(high, r->bytesPerKey);
        QString name = qt(r->name);
        if (!r->thresholdName.empty())
            name += QStringLiteral(" · ") + qt(settingText(*r));
        if (const auto it = allocators.find(std::size_t(&*r - table.rows.data())); it != allocators.end())
            name += QStringLiteral(" · ") + it->second;
        // Measured or predicted is in the table beside: the label keeps to what the bar is.
        categories << tr("%1 — GET %2 lines, %3 loads")
                          .arg(name, QLocale().toString(r->linesPerGet, 'f', 2),
                              QLocale().toString(r->dependentLoadsPerGet, 'f', 2));
    }
    series->append(set);
    series->setLabelsVisible(true);
    series->setLabelsPosition(QAbstractBarSeries::LabelsInsideEnd);
    set->setLabelColor(Qt::white);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(5);
    chart->addSeries(series);
    auto* y = new QBarCategoryAxis(chart);
    y->append(categories);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(y);
    auto* x = new QValueAxis(chart);
    x->setTitleText(tr("bytes per key (hash index included)"));
    x->setRange(0, high * 1.15);
    x->applyNiceNumbers();
    x->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    chart->legend()->hide();
}

} // namespace layoutlab::gui
