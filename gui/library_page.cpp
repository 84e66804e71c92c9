// SPDX-License-Identifier: MIT
#include "library_page.h"

#include "kept_splitter.h"

#include "stored_job.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <set>

namespace layoutlab::gui {

namespace {
QTableView* makeTable(QSortFilterProxyModel& proxy, QAbstractItemModel& source, QWidget* parent) {
    proxy.setSourceModel(&source);
    proxy.setFilterKeyColumn(-1); // every column
    proxy.setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy.setSortRole(Qt::EditRole); // numbers sort as numbers
    auto* view = new QTableView(parent);
    view->setModel(&proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(0, Qt::DescendingOrder);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->setTextElideMode(Qt::ElideMiddle);
    return view;
}
} // namespace

LibraryPage::LibraryPage(QWidget* parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_filter(new QLineEdit(this))
    , m_tracesView(makeTable(m_tracesFilter, m_traces, this))
    , m_runsView(makeTable(m_runsFilter, m_runs, this)) {
    m_filter->setPlaceholderText(tr("Filter traces and runs (layout, kind, status, file name…)"));
    m_filter->setClearButtonEnabled(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* openTrace = new QPushButton(tr("Open trace"), this);
    auto* showRun = new QPushButton(tr("Show run"), this);
    auto* compareRuns = new QPushButton(tr("Compare two runs"), this);
    compareRuns->setToolTip(tr("Select two runs, then compare them point by point"));
    auto* deleteRuns = new QPushButton(tr("Delete runs"), this);
    auto* refresh = new QPushButton(tr("Refresh"), this);

    auto* tracesBox = new QWidget(this);
    auto* tracesLayout = new QVBoxLayout(tracesBox);
    tracesLayout->setContentsMargins(0, 0, 0, 0);
    auto* tracesBar = new QHBoxLayout;
    tracesBar->addWidget(new QLabel(tr("<b>Traces</b>"), this));
    tracesBar->addStretch();
    tracesBar->addWidget(openTrace);
    tracesLayout->addLayout(tracesBar);
    tracesLayout->addWidget(m_tracesView);
    auto* runsBox = new QWidget(this);
    auto* runsLayout = new QVBoxLayout(runsBox);
    runsLayout->setContentsMargins(0, 0, 0, 0);
    auto* runsBar = new QHBoxLayout;
    runsBar->addWidget(new QLabel(tr("<b>Runs</b>"), this));
    runsBar->addStretch();
    runsBar->addWidget(showRun);
    runsBar->addWidget(compareRuns);
    runsBar->addWidget(deleteRuns);
    runsLayout->addLayout(runsBar);
    runsLayout->addWidget(m_runsView);
    m_runsView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    // The long columns take what is left, elided (their tooltips hold the whole text).
    m_runsView->horizontalHeader()->setSectionResizeMode(RunsTableModel::Layout, QHeaderView::Stretch);
    m_tracesView->horizontalHeader()->setSectionResizeMode(TracesTableModel::Source, QHeaderView::Stretch);
    m_tracesView->setSelectionMode(QAbstractItemView::SingleSelection);

    auto* splitter = keptSplitter(Qt::Vertical, QStringLiteral("library-splitter"), tracesBox, 1, runsBox, 2, this);
    auto* top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(m_filter, 1);
    top->addWidget(refresh);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);

    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_tracesFilter.setFilterFixedString(text);
        m_runsFilter.setFilterFixedString(text);
    });
    connect(refresh, &QPushButton::clicked, this, [this] {
        if (const QString error = reload(m_path); !error.isEmpty())
            emit failed(error);
    });
    auto openSelectedTrace = [this] {
        const QModelIndex index = m_tracesView->currentIndex();
        if (index.isValid())
            emit openTraceRequested(
                QString::fromStdString(m_traces.trace(m_tracesFilter.mapToSource(index).row()).source));
    };
    connect(openTrace, &QPushButton::clicked, this, openSelectedTrace);
    connect(m_tracesView, &QTableView::doubleClicked, this, openSelectedTrace);
    auto showSelectedRun = [this] {
        const QModelIndex index = m_runsView->currentIndex();
        if (index.isValid())
            emit showRunRequested(m_runs.run(m_runsFilter.mapToSource(index).row()).id);
    };
    connect(showRun, &QPushButton::clicked, this, showSelectedRun);
    connect(m_runsView, &QTableView::doubleClicked, this, showSelectedRun);
    connect(deleteRuns, &QPushButton::clicked, this, &LibraryPage::deleteSelectedRuns);
    connect(compareRuns, &QPushButton::clicked, this, [this] {
        const auto ids = selectedRunIds();
        if (ids.size() == 2)
            emit compareRequested(ids[0], ids[1]);
        else
            emit failed(tr("Select exactly two runs to compare (%1 selected).").arg(ids.size()));
    });
}

QString LibraryPage::reload(const QString& path) {
    m_path = path;
    m_title->setText(tr("Results database: <b>%1</b>").arg(QFileInfo(path).fileName().toHtmlEscaped()));
    m_title->setToolTip(path);
    auto db = ResultsDb::open(path.toStdString());
    if (!db)
        return errorText(db.error());
    auto traces = (*db)->listTraces();
    if (!traces)
        return errorText(traces.error());
    auto runs = (*db)->listRuns();
    if (!runs)
        return errorText(runs.error());
    m_traces.setRecords(std::move(*traces));
    m_runs.setRecords(std::move(*runs));
    return {};
}

std::vector<qint64> LibraryPage::selectedRunIds() const {
    std::set<qint64> ids;
    for (const QModelIndex& index : m_runsView->selectionModel()->selectedRows())
        ids.insert(m_runs.run(m_runsFilter.mapToSource(index).row()).id);
    return { ids.begin(), ids.end() };
}

void LibraryPage::deleteSelectedRuns() {
    const auto ids = selectedRunIds();
    if (ids.empty())
        return;
    if (QMessageBox::question(
            this, tr("Delete runs"), tr("Delete %n run(s) and their results?", nullptr, int(ids.size())))
        != QMessageBox::Yes)
        return;
    auto db = ResultsDb::open(m_path.toStdString());
    if (!db) {
        emit failed(errorText(db.error()));
        return;
    }
    if (auto deleted = (*db)->deleteRuns({ ids.begin(), ids.end() }); !deleted) {
        emit failed(errorText(deleted.error()));
        return;
    }
    if (const QString error = reload(m_path); !error.isEmpty())
        emit failed(error);
}

} // namespace layoutlab::gui
