// SPDX-License-Identifier: MIT
#include "size_class_page.h"

#include "kept_splitter.h"

#include "chart_panel.h"

#include <QComboBox>
#include <QCursor>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace layoutlab::gui {

namespace {
// Bars beyond this many classes are unreadable: the smallest classes by usable bytes are grouped.
constexpr std::size_t kMaxBars = 36;
} // namespace

SizeClassPage::SizeClassPage(QWidget* parent)
    : QWidget(parent)
    , m_threshold(new QComboBox(this))
    , m_summary(new QLabel(this))
    , m_chart(new ChartPanel(QStringLiteral("size-classes"), this))
    , m_table(new QTableView(this)) {
    m_chart->setDataModel(&m_model);
    m_table->setModel(&m_model);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->hide();
    m_table->setAlternatingRowColors(true);
    m_summary->setWordWrap(true);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("&Threshold:"), this));
    top->addWidget(m_threshold);
    top->addWidget(m_summary, 1);
    qobject_cast<QLabel*>(top->itemAt(0)->widget())->setBuddy(m_threshold);
    auto* splitter = keptSplitter(Qt::Vertical, QStringLiteral("size-classes-splitter"), m_chart, 3, m_table, 1, this);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);
    connect(m_threshold, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    redraw();
}

void SizeClassPage::setResult(const SimulationResult& result) {
    m_result = result;
    const QSignalBlocker block(m_threshold);
    m_threshold->clear();
    for (const auto& p : result.points)
        m_threshold->addItem(result.thresholdName.empty() ? tr("(no threshold)") : QString::number(p.threshold));
    if (!result.points.empty())
        m_threshold->setCurrentIndex(int(leanestPoint(result.points)));
    redraw();
}

void SizeClassPage::showThreshold(std::uint32_t threshold) {
    int best = -1;
    for (std::size_t i = 0; i < m_result.points.size(); ++i)
        if (best < 0
            || std::abs(double(m_result.points[i].threshold) - threshold)
                < std::abs(double(m_result.points[std::size_t(best)].threshold) - threshold))
            best = int(i);
    if (best >= 0)
        m_threshold->setCurrentIndex(best);
}

void SizeClassPage::redraw() {
    QChart* chart = m_chart->freshChart();
    const int index = m_threshold->currentIndex();
    if (index < 0 || std::size_t(index) >= m_result.points.size()) {
        m_model.clear();
        chart->setTitle(tr("Bytes per key by size class (run a sweep first)"));
        m_summary->clear();
        return;
    }
    const ThresholdPoint& point = m_result.points[std::size_t(index)];
    m_model.setPoint(point);
    // Held slabs only where a model held them (the slab model, memcached's pages under -m), evictions only under
    // a memcached budget: else the columns would read 0 for what was not modelled.
    const auto any = [&point](std::uint64_t SizeClassUsage::*field) {
        return std::any_of(point.sizeClasses.begin(), point.sizeClasses.end(),
            [field](const SizeClassUsage& c) { return c.*field != 0; });
    };
    m_table->setColumnHidden(SizeClassTableModel::HeldSlabs, !any(&SizeClassUsage::heldSlabs));
    m_table->setColumnHidden(SizeClassTableModel::Evictions, !point.budget || !any(&SizeClassUsage::evictions));
    const double keys = point.keys ? double(point.keys) : 1.0;
    // The largest classes by usable bytes get a bar each, in class order; the rest are summed.
    std::vector<SizeClassUsage> shown = point.sizeClasses;
    SizeClassUsage rest;
    if (shown.size() > kMaxBars) {
        std::sort(
            shown.begin(), shown.end(), [](const auto& a, const auto& b) { return a.usableBytes > b.usableBytes; });
        for (std::size_t i = kMaxBars - 1; i < shown.size(); ++i) {
            rest.requestedBytes += shown[i].requestedBytes;
            rest.payloadBytes += shown[i].payloadBytes;
            rest.usableBytes += shown[i].usableBytes;
            rest.allocations += shown[i].allocations;
        }
        shown.resize(kMaxBars - 1);
        std::sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) { return a.classBytes < b.classBytes; });
    }
    auto* payload = new QBarSet(tr("Payload (key and value bytes)"));
    auto* header = new QBarSet(tr("Header (structures, length fields, framing)"));
    auto* waste = new QBarSet(tr("Waste (class rounding)"));
    QStringList categories;
    QLocale locale;
    for (const auto& c : shown) {
        *payload << double(c.payloadBytes) / keys;
        *header << double(c.requestedBytes - c.payloadBytes) / keys;
        *waste << double(c.usableBytes - c.requestedBytes) / keys;
        categories << byteLabel(double(c.classBytes));
    }
    if (rest.allocations) {
        *payload << double(rest.payloadBytes) / keys;
        *header << double(rest.requestedBytes - rest.payloadBytes) / keys;
        *waste << double(rest.usableBytes - rest.requestedBytes) / keys;
        categories << tr("other");
    }
    payload->setColor(QColor(0x46, 0x82, 0xb4));
    header->setColor(QColor(0x9a, 0xb8, 0xd4));
    waste->setColor(QColor(0xe0, 0x7b, 0x39));
    auto* series = new QStackedBarSeries(chart);
    series->append(payload);
    series->append(header);
    series->append(waste);
    chart->addSeries(series);
    QAbstractAxis* x = makeCategoryAxis(chart, categories);
    x->setTitleText(tr("size class"));
    auto* y = new QValueAxis(chart);
    y->setTitleText(tr("bytes per key"));
    y->setLabelFormat(QStringLiteral("%.1f"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    y->applyNiceNumbers();
    connect(series, &QStackedBarSeries::hovered, m_chart, [this, categories](bool on, int i, QBarSet* set) {
        if (!on || i < 0 || i >= categories.size()) {
            QToolTip::hideText();
            return;
        }
        QToolTip::showText(QCursor::pos(),
            tr("class %1\n%2: %3 bytes per key").arg(categories[i], set->label(), QString::number(set->at(i), 'f', 2)),
            m_chart);
    });
    const QString thresholdText
        = m_result.thresholdName.empty() ? QString() : tr(" at threshold %1").arg(point.threshold);
    chart->setTitle(tr("Bytes per key by size class%1").arg(thresholdText));
    m_summary->setText(tr("%1 allocations per key; %2 of %3 usable bytes per key are class-rounding waste.")
                           .arg(locale.toString(point.allocationsPerKey, 'f', 2),
                               locale.toString(double(point.internalFragmentationBytes) / keys, 'f', 2),
                               locale.toString(point.usableBytesPerKey, 'f', 2)));
}

} // namespace layoutlab::gui
