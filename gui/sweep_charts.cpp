// SPDX-License-Identifier: MIT
// The sweep page's charts: four charts against the threshold, their markers, and the threshold cursor.
#include "sweep_page.h"

#include "chart_panel.h"
#include "limit_sweep_panel.h"

#include "layoutlab/sim/results.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSettings>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

namespace layoutlab::gui {

namespace {

QString qt(const std::string& s) {
    return QString::fromStdString(s);
}

// A range with a little room above and below, so lines do not sit on the frame.
std::pair<double, double> paddedRange(double low, double high) {
    if (high - low < 1e-9) {
        const double pad = std::max(std::abs(high) * 0.05, 0.5);
        return { std::max(0.0, low - pad), high + pad };
    }
    const double pad = (high - low) * 0.08;
    return { std::max(0.0, low - pad), high + pad };
}

} // namespace

void SweepPage::redraw() {
    // One quantity per axis: the two memory figures share bytes per key; lines and dependent loads, two
    // different counts, get an axis each. With the slab model, the memory chart puts what the allocator
    // keeps (active bytes per key, right, dashed) beside what it hands out, each axis fitted to its line,
    // so that a difference of a fraction of a byte between thresholds shows; overhead moves beside the
    // internal fragmentation.
    const bool active = m_model.columnOf(QStringLiteral("active_bytes_per_key")) >= 0;
    if (active) {
        drawChart(m_charts[0],
            { { QStringLiteral("usable_bytes_per_key"), tr("allocated per key") },
                { QStringLiteral("active_bytes_per_key"), tr("active per key"), true } },
            QString(), tr("active bytes/key"), true, true);
        drawChart(m_charts[1],
            { { QStringLiteral("overhead_bytes_per_key"), tr("overhead per key") },
                { QStringLiteral("internal_fragmentation_bytes_per_key"), tr("internal fragmentation") } },
            QString(), QString(), true);
    } else {
        drawChart(m_charts[0],
            { { QStringLiteral("usable_bytes_per_key"), tr("bytes per key") },
                { QStringLiteral("overhead_bytes_per_key"), tr("overhead per key") } },
            QString(), QString(), true);
        drawChart(m_charts[1],
            { { QStringLiteral("internal_fragmentation_bytes_per_key"), tr("internal fragmentation") } }, QString(),
            QString(), true);
    }
    drawMeasured();
    drawChart(m_charts[2],
        { { QStringLiteral("lines_touched_per_get"), tr("lines touched") },
            { QStringLiteral("dependent_loads_per_get"), tr("dependent loads"), true } },
        tr("lines/GET"), tr("loads/GET"));
    // Under a memory budget the cache model does not run: the last chart is the cache's own figures.
    const bool budget = m_model.columnOf(QStringLiteral("hit_ratio")) >= 0;
    if (budget)
        drawChart(m_charts[3],
            { { QStringLiteral("hit_ratio"), tr("hit ratio") },
                { QStringLiteral("evicted_keys"), tr("evicted keys"), true } },
            tr("hit ratio (%)"), tr("evicted keys"), false, true);
    else
        drawChart(m_charts[3],
            { { QStringLiteral("l1_misses_per_get"), tr("L1") }, { QStringLiteral("l2_misses_per_get"), tr("L2") },
                { QStringLiteral("llc_misses_per_get"), tr("LLC") } },
            tr("misses/GET"));
    const QStringList titles { active ? tr("Memory per key: allocated and the allocator's active pages")
                                      : tr("Memory per key (hash index included)"),
        active ? tr("Overhead and internal fragmentation per key")
               : tr("Internal fragmentation per key (hash index included)"),
        tr("GET access path (index lines included)"),
        budget ? tr("Hit ratio and evictions under %1 (%2)")
                     .arg(m_model.result().layoutSpec.rfind("memcached", 0) == 0 ? QStringLiteral("-m")
                                                                                 : QStringLiteral("maxmemory"),
                         qt(m_model.result().budgetPolicy))
            : m_model.hasCacheModel() ? tr("Cache-model misses per GET")
                                      : tr("Cache-model misses per GET (cache model off)") };
    for (std::size_t i = 0; i < m_charts.size(); ++i)
        m_charts[i]->chart()->setTitle(titles[int(i)]);
    m_limitChart->show(m_model.result());
    drawCursor();
    drawTimeline();
}

void SweepPage::setMeasuredPoints(
    std::vector<EngineSweepPoint> points, const QString& trace, const QString& layoutSpec, const QString& source) {
    m_measured = { std::move(points), trace, layoutSpec, source };
    redraw();
}

std::vector<EngineSweepPoint> SweepPage::shownMeasuredPoints() const {
    const auto& result = m_model.result();
    if (m_measured.points.empty() || result.points.empty() || qt(result.layoutSpec) != m_measured.layoutSpec
        || QFileInfo(m_tracePath).absoluteFilePath() != QFileInfo(m_measured.trace).absoluteFilePath())
        return {};
    std::vector<EngineSweepPoint> out;
    for (const auto& p : m_measured.points)
        if (p.threshold)
            out.push_back(p);
    return out;
}

QString SweepPage::measuredText() const {
    return m_measuredLine->isHidden() ? QString() : m_measuredLine->text();
}

void SweepPage::drawMeasured() {
    const auto points = shownMeasuredPoints();
    m_measuredLine->setVisible(!points.empty());
    if (points.empty())
        return;
    ChartPanel* panel = m_charts[0];
    const auto horizontal = panel->chart()->axes(Qt::Horizontal);
    const auto vertical = panel->chart()->axes(Qt::Vertical);
    auto* x = horizontal.isEmpty() ? nullptr : qobject_cast<QValueAxis*>(horizontal.front());
    auto* y = vertical.isEmpty() ? nullptr : qobject_cast<QValueAxis*>(vertical.front());
    if (!x || !y)
        return;
    std::vector<MeasuredMark> marks;
    QStringList each;
    QLocale locale;
    for (const auto& p : points) {
        marks.push_back({ double(*p.threshold), p.measuredBytesPerKey / m_memoryDivisor, p.relativeError() });
        each << tr("%1: %2 (predicted %3, %4)")
                    .arg(*p.threshold)
                    .arg(locale.toString(p.measuredBytesPerKey, 'f', 2),
                        locale.toString(p.predictedBytesPerKey, 'f', 2), relativeErrorText(p.relativeError()));
    }
    const auto& first = points.front();
    const QString servers = first.build.empty()
        ? tr("%1 %2 builds picked").arg(qt(first.engine), qt(first.version))
        : tr("%1 %2 built at each threshold").arg(qt(first.engine), qt(first.version));
    addMeasuredPoints(panel, x, y, marks, tr("measured (real servers)"), QColor(0xc0, 0x39, 0x2b));
    m_measuredLine->setText(tr("<b>Measured on real servers</b> (%1, %2): bytes per key at threshold %3. Worst "
                               "error %4.")
                                .arg(servers, m_measured.source.toHtmlEscaped(), each.join(QStringLiteral("; ")),
                                    relativeErrorText(worstError(points))));
}

void SweepPage::setCursorThreshold(double threshold) {
    const int rows = m_model.rowCount();
    if (rows == 0)
        return;
    int nearest = 0;
    for (int r = 1; r < rows; ++r)
        if (std::abs(m_model.value(r, 0) - threshold) < std::abs(m_model.value(nearest, 0) - threshold))
            nearest = r;
    const auto at = static_cast<std::uint32_t>(m_model.value(nearest, 0));
    if (m_cursor == at)
        return;
    m_cursor = at;
    if (m_table->currentIndex().row() != nearest)
        m_table->selectRow(nearest);
    const ThresholdPoint& p = m_model.result().points[std::size_t(nearest)];
    QLocale locale;
    m_cursorLine->setText(
        tr("<b>Cursor at %1</b>: %2 bytes per key (%3 overhead), %4% of keys embedded, %5 lines "
           "touched and %6 dependent loads per GET.")
            .arg(at)
            .arg(locale.toString(p.usableBytesPerKey, 'f', 2), locale.toString(p.overheadBytesPerKey, 'f', 2),
                locale.toString(100.0 * p.embeddedFraction, 'f', 1), locale.toString(p.linesTouchedPerGet, 'f', 3),
                locale.toString(p.dependentLoadsPerGet, 'f', 3)));
    drawCursor();
    drawTimeline();
    emit cursorMoved(at);
}

QString SweepPage::cursorText() const {
    return m_cursorLine->text();
}

void SweepPage::drawCursor() {
    for (ChartPanel* panel : m_charts) {
        QChart* chart = panel->chart();
        for (QAbstractSeries* old : chart->series())
            if (old->objectName() == QLatin1String("cursor")) {
                chart->removeSeries(old);
                delete old;
            }
        const auto horizontal = chart->axes(Qt::Horizontal);
        const auto vertical = chart->axes(Qt::Vertical, chart->series().isEmpty() ? nullptr : chart->series().front());
        if (!m_cursor || horizontal.isEmpty() || vertical.isEmpty())
            continue;
        auto* y = qobject_cast<QValueAxis*>(vertical.front());
        if (!y)
            continue;
        auto* line = new QLineSeries(chart);
        line->setObjectName(QStringLiteral("cursor"));
        line->setName(tr("cursor"));
        QPen pen(palette().color(QPalette::WindowText));
        pen.setWidthF(1.0);
        line->setPen(pen);
        line->append(*m_cursor, y->min());
        line->append(*m_cursor, y->max());
        chart->addSeries(line);
        line->attachAxis(horizontal.front());
        line->attachAxis(y);
        for (QLegendMarker* marker : chart->legend()->markers(line))
            marker->setVisible(false);
    }
}

void SweepPage::drawChart(ChartPanel* panel, const std::vector<ChartLine>& lines, const QString& yTitle,
    const QString& rightTitle, bool perKeyBytes, bool rightFitted) {
    QChart* chart = panel->freshChart();
    const int rows = m_model.rowCount();
    auto* x = new QValueAxis(chart);
    x->setTitleText(tr("threshold (bytes)"));
    auto* y = new QValueAxis(chart);
    y->setTitleText(yTitle);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    QValueAxis* right = nullptr;
    if (!rightTitle.isEmpty()) {
        right = new QValueAxis(chart);
        right->setTitleText(rightTitle);
        chart->addAxis(right, Qt::AlignRight);
    }
    // Bytes per key in B, or KiB or MiB when the largest reaches ten of them (values of 100 kB and more).
    DisplayUnit unit { 1, QString() };
    if (perKeyBytes) {
        double largest = 0;
        for (const ChartLine& line : lines)
            if (const int column = m_model.columnOf(line.metric); column >= 0)
                for (int r = 0; r < rows; ++r)
                    largest = std::max(largest, m_model.value(r, column));
        unit = byteUnit(largest);
        y->setTitleText(tr("%1/key").arg(unit.name));
        if (right && rightFitted)
            right->setTitleText(tr("active %1/key").arg(unit.name));
        if (panel == m_charts[0])
            m_memoryDivisor = unit.divisor;
    }
    if (rows == 0)
        return;
    struct Range {
        double low = std::numeric_limits<double>::max(), high = std::numeric_limits<double>::lowest();
    } leftRange, rightRange;
    for (const ChartLine& line : lines) {
        const int column = m_model.columnOf(line.metric);
        if (column < 0)
            continue;
        QValueAxis* axis = line.rightAxis && right ? right : y;
        Range& range = axis == right ? rightRange : leftRange;
        auto* series = new QLineSeries(chart);
        series->setName(line.name);
        series->setPointsVisible(rows <= 40);

        for (int r = 0; r < rows; ++r) {
            const double v = m_model.value(r, column) / unit.divisor;
            series->append(m_model.value(r, 0), v);
            range.low = std::min(range.low, v);
            range.high = std::max(range.high, v);
        }
        chart->addSeries(series); // the theme gives it its colour
        series->attachAxis(x);
        series->attachAxis(axis);
        if (axis == right) { // dashed: a line on the right axis can lie on one on the left and stay visible
            QPen pen = series->pen();
            pen.setStyle(Qt::DashLine);
            pen.setWidthF(2.5);
            series->setPen(pen);
        }
        panel->addHoverTips(
            series, tr("threshold"), m_model.metrics()[std::size_t(column)].decimals + (unit.divisor > 1 ? 1 : 0));
    }
    if (chart->series().isEmpty())
        return;
    for (auto [axis, range] : { std::pair { y, leftRange }, std::pair { right, rightRange } }) {
        if (!axis || range.low > range.high)
            continue;
        // The right axis (a second quantity) starts at zero, so that its line does not retrace the left
        // one's when the two change at the same thresholds; a second figure of the same unit is fitted.
        const auto [paddedLow, paddedHigh] = paddedRange(axis == right && !rightFitted ? 0.0 : range.low, range.high);
        axis->setRange(paddedLow, paddedHigh);
        axis->applyNiceNumbers();
    }
    const double yLow = y->min(), yHigh = y->max();
    const double first = m_model.value(0, 0), last = m_model.value(rows - 1, 0);
    // Half a step of room on each side, so that a marker on the first or last threshold stays visible.
    const double halfStep = rows > 1 ? (last - first) / (rows - 1) / 2 : 8;
    setThresholdRange(x, first - halfStep, last + halfStep);
    // Markers, each in its own style and labelled on the chart: the thresholds before and after the Valkey
    // change, and the leanest one (named with the marker it coincides with, if any; none when the
    // threshold has no effect in this range).
    const auto& points = m_model.result().points;
    const bool flat = flatSweep(points);
    const std::uint32_t best = flat ? 0 : points[leanestPoint(points)].threshold;
    struct Marker {
        std::uint32_t at;
        QString name;
        QColor color;
        Qt::PenStyle style;
    };
    std::vector<Marker> markers;
    if (best != 64)
        markers.push_back({ 64, QStringLiteral("64"), QColor(0x80, 0x80, 0x80), Qt::DashLine });
    if (best != 128)
        markers.push_back({ 128, QStringLiteral("128"), QColor(0x40, 0x60, 0xa0), Qt::DotLine });
    if (!flat)
        markers.push_back(
            { best, best == 64 || best == 128 ? tr("%1 = leanest").arg(best) : tr("leanest (%1)").arg(best),
                QColor(0x2e, 0x8b, 0x57), Qt::SolidLine });
    for (const Marker& m : markers) {
        if (m.at < first || m.at > last)
            continue;
        auto* line = new QLineSeries(chart);
        line->setName(m.name);
        QPen pen(m.color);
        pen.setStyle(m.style);
        pen.setWidthF(m.style == Qt::SolidLine ? 1.6 : 1.2);
        line->setPen(pen);
        line->append(m.at, yLow);
        line->append(m.at, yHigh);
        chart->addSeries(line);
        line->attachAxis(x);
        line->attachAxis(y);
        // Its name at the top of the line, on the chart itself.
        addChartLabel(chart, x, y, QPointF(m.at, yHigh), m.name, m.color, QStringLiteral("marker-label"));
    }
}

} // namespace layoutlab::gui
