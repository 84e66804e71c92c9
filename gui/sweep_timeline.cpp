// SPDX-License-Identifier: MIT
// The sweep page's side charts: a swept collection limit's (limit_sweep_panel.h), and the timeline chart: what the
// allocator holds over the trace (SimulationResult::timeline,
// `--timeline`, taken with the slab model) at the cursor's threshold: allocated beside active bytes, and
// the live keys. Deletes take the keys and the allocated bytes down; the active bytes stay where the
// slabs keep a live region.
#include "sweep_page.h"

#include "chart_panel.h"
#include "limit_sweep_panel.h"

#include <QGridLayout>

#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <functional>

namespace layoutlab::gui {

void SweepPage::placeSideCharts() {
    // A third column beside the four charts, for the timeline, the swept limit or both (one above the other):
    // the window keeps its height.
    m_chartGrid->removeWidget(m_timelineChart);
    m_chartGrid->removeWidget(m_limitChart);
    const bool timeline = !m_timelineChart->isHidden(), limit = !m_limitChart->isHidden();
    if (timeline)
        m_chartGrid->addWidget(m_timelineChart, 0, 2, limit ? 1 : 2, 1);
    if (limit)
        m_chartGrid->addWidget(m_limitChart, timeline ? 1 : 0, 2, timeline ? 1 : 2, 1);
}

void SweepPage::drawTimeline() {
    const SimulationResult& result = m_model.result();
    m_timelineData.clear();
    if (result.timeline.empty() || result.points.empty()) {
        m_timelineChart->hide();
        placeSideCharts();
        return;
    }
    m_timelineChart->show();
    placeSideCharts();
    // The cursor's threshold; before the cursor is placed, the setting the engine ships with (else the first).
    std::size_t at = 0;
    if (const ThresholdPoint* shipped = shippedPoint(result))
        at = std::size_t(shipped - result.points.data());
    for (std::size_t i = 0; i < result.points.size(); ++i)
        if (m_cursor && result.points[i].threshold == *m_cursor)
            at = i;
    const QString where
        = result.thresholdName.empty() ? tr("its one setting") : tr("threshold %1").arg(result.points[at].threshold);

    m_timelineData.setHorizontalHeaderLabels({ tr("requests"), tr("time (s)"), tr("live keys"),
        tr("allocated bytes at %1").arg(where), tr("active bytes at %1").arg(where) });
    std::uint64_t largest = 0, mostKeys = 0;
    for (const TimelineSample& s : result.timeline) {
        largest = std::max({ largest, s.allocatedBytes[at], s.activeBytes[at] });
        mostKeys = std::max(mostKeys, s.liveKeys);
        QList<QStandardItem*> row;
        for (const double v : { double(s.requests), double(s.timeMs) / 1000.0, double(s.liveKeys),
                 double(s.allocatedBytes[at]), double(s.activeBytes[at]) }) {
            auto* item = new QStandardItem;
            item->setData(v, Qt::DisplayRole);
            row << item;
        }
        m_timelineData.appendRow(row);
    }
    const DisplayUnit unit = byteUnit(double(largest));
    QChart* chart = m_timelineChart->freshChart();
    auto* x = new QValueAxis(chart);
    x->setTitleText(tr("requests replayed"));
    x->setLabelFormat(QStringLiteral("%.3g"));
    auto* y = new QValueAxis(chart);
    y->setTitleText(unit.name);
    auto* keys = new QValueAxis(chart);
    keys->setTitleText(tr("live keys"));
    keys->setLabelFormat(QStringLiteral("%.3g"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(keys, Qt::AlignRight);
    struct Line {
        QString name;
        std::function<double(const TimelineSample&)> value;
        QValueAxis* axis;
    };
    const std::vector<Line> lines {
        { tr("allocated"), [&](const TimelineSample& s) { return double(s.allocatedBytes[at]) / unit.divisor; }, y },
        { tr("active"), [&](const TimelineSample& s) { return double(s.activeBytes[at]) / unit.divisor; }, y },
        { tr("live keys"), [](const TimelineSample& s) { return double(s.liveKeys); }, keys },
    };
    for (const Line& line : lines) {
        auto* series = new QLineSeries(chart);
        series->setName(line.name);
        series->setPointsVisible(result.timeline.size() <= 40);
        for (const TimelineSample& s : result.timeline)
            series->append(double(s.requests), line.value(s));
        chart->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(line.axis);
        if (line.axis == keys) { // a count, on its own axis: dashed
            QPen pen = series->pen();
            pen.setStyle(Qt::DashLine);
            series->setPen(pen);
        }
        m_timelineChart->addHoverTips(series, tr("requests"), line.axis == keys ? 0 : 2);
    }
    x->setRange(0, double(result.timeline.back().requests));
    y->setRange(0, double(largest) / unit.divisor * 1.08);
    y->applyNiceNumbers();
    keys->setRange(0, double(mostKeys) * 1.08);
    keys->applyNiceNumbers();
    chart->setTitle(tr("Over the trace at %1: allocated and active").arg(where));
}

} // namespace layoutlab::gui
