// SPDX-License-Identifier: MIT
#include "limit_sweep_panel.h"

#include "chart_panel.h"

#include "layoutlab/report/limit_advice.h"
#include "layoutlab/sim/limit_sweep.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QVBoxLayout>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace layoutlab::gui {

namespace {
QString qt(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

// Values typical of each limit, to start from when one is chosen.
QString suggestedValues(const QString& limit) {
    if (limit == QLatin1String("list-max-listpack-size"))
        return QStringLiteral("-5,-4,-3,-2,-1,16,64,128,512");
    if (limit.endsWith(QLatin1String("-value")))
        return QStringLiteral("16:256:16");
    return QStringLiteral("32,64,128,256,512,1024,2048");
}
} // namespace

LimitSweepControls::LimitSweepControls(QWidget* parent)
    : QWidget(parent)
    , m_limit(new QComboBox(this))
    , m_values(new QLineEdit(this)) {
    m_limit->addItem(tr("none"), QString());
    for (const std::string_view name : allCollectionLimitNames())
        m_limit->addItem(qt(name), qt(name));
    m_limit->setToolTip(tr("Sweep one of the collections' compact-encoding limits in the same pass: each value's "
                           "bytes per key and lines per element lookup, at the layout's threshold"));
    m_values->setToolTip(tr("FIRST:LAST:STEP or a list, as the engine takes the limit (list-max-listpack-size: "
                            "-5 to -1 for a node's bytes, or its entries)"));
    m_values->setEnabled(false);
    connect(m_limit, &QComboBox::currentIndexChanged, this, [this] {
        const QString name = m_limit->currentData().toString();
        m_values->setEnabled(!name.isEmpty());
        if (!name.isEmpty() && m_values->text().trimmed().isEmpty())
            m_values->setText(suggestedValues(name));
    });
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_limit);
    row->addWidget(m_values, 1);
}

QString LimitSweepControls::parameter() const {
    const QString name = m_limit->currentData().toString();
    if (name.isEmpty())
        return {};
    return name + QLatin1Char('=') + m_values->text().trimmed();
}

void LimitSweepControls::setFromParameters(const QString& name, const std::vector<std::int64_t>& values) {
    const int index = m_limit->findData(name);
    m_limit->setCurrentIndex(std::max(index, 0));
    QStringList parts;
    for (const auto v : values)
        parts << QString::number(v);
    m_values->setText(index > 0 ? parts.join(QLatin1Char(',')) : QString());
}

void LimitSweepControls::saveSettings() const {
    QSettings settings;
    settings.setValue(QStringLiteral("sweep/limit"), m_limit->currentData().toString());
    settings.setValue(QStringLiteral("sweep/limitValues"), m_values->text());
}

void LimitSweepControls::restoreSettings() {
    QSettings settings;
    m_values->setText(settings.value(QStringLiteral("sweep/limitValues")).toString());
    m_limit->setCurrentIndex(std::max(0, m_limit->findData(settings.value(QStringLiteral("sweep/limit")).toString())));
}

LimitSweepChart::LimitSweepChart(QWidget* parent)
    : QWidget(parent)
    , m_chart(new ChartPanel(QStringLiteral("collection-limit"), this))
    , m_advice(new QLabel(this)) {
    m_chart->setDataModel(&m_data);
    m_advice->setWordWrap(true);
    m_advice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_chart, 1);
    layout->addWidget(m_advice);
    hide();
}

QString LimitSweepChart::adviceText() const {
    return m_advice->text();
}

void LimitSweepChart::show(const SimulationResult& result) {
    m_data.clear();
    if (!result.limitSweep || result.limitSweep->points.empty()) {
        hide();
        return;
    }
    QWidget::show();
    const LimitSweepResult& sweep = *result.limitSweep;
    const std::string type = limitType(sweep.name);
    const QString lookup = qt(lookupCommand(type));
    m_data.setHorizontalHeaderLabels(
        { qt(sweep.name), tr("bytes per key"), tr("lines per %1").arg(lookup), tr("%1 keys").arg(qt(type)) });
    double lowBytes = 1e300, highBytes = 0, highLines = 0;
    for (const LimitPoint& p : sweep.points) {
        const double lines = lookupLinesPerElement(p.collections, type);
        std::uint64_t keys = 0;
        for (const CollectionUsage& c : p.collections)
            keys += c.type == type ? c.keys : 0;
        QList<QStandardItem*> row;
        for (const double v : { double(p.value), p.point.usableBytesPerKey, lines, double(keys) }) {
            auto* item = new QStandardItem;
            item->setData(v, Qt::DisplayRole);
            row << item;
        }
        m_data.appendRow(row);
        lowBytes = std::min(lowBytes, p.point.usableBytesPerKey);
        highBytes = std::max(highBytes, p.point.usableBytesPerKey);
        highLines = std::max(highLines, lines);
    }
    QChart* chart = m_chart->freshChart();
    const auto [first, last] = std::minmax_element(sweep.points.begin(), sweep.points.end(),
        [](const LimitPoint& a, const LimitPoint& b) { return a.value < b.value; });
    // Entry counts spread over powers of two (16 to 2,048): a log axis, so that the small values, where
    // most keys change encoding, are not crowded into the left edge. Linear for list-max-listpack-size's
    // negative byte classes and for narrow ranges.
    const bool logScale = first->value > 0 && last->value >= 16 * first->value;
    QAbstractAxis* x = nullptr;
    if (logScale) {
        auto* axis = new QLogValueAxis(chart);
        axis->setBase(2);
        axis->setLabelFormat(QStringLiteral("%.0f"));
        axis->setMinorTickCount(-1);
        x = axis;
    } else {
        auto* axis = new QValueAxis(chart);
        axis->setLabelFormat(QStringLiteral("%.0f"));
        const double span = std::max<double>(1, double(last->value - first->value));
        axis->setRange(double(first->value) - 0.03 * span, double(last->value) + 0.03 * span);
        x = axis;
    }
    x->setTitleText(qt(sweep.name));
    auto* bytes = new QValueAxis(chart);
    bytes->setTitleText(tr("bytes per key"));
    auto* lines = new QValueAxis(chart);
    lines->setTitleText(tr("lines per %1").arg(lookup));
    chart->addAxis(x, Qt::AlignBottom);
    if (logScale) // a log axis takes its range once it is on the chart
        x->setRange(double(first->value) / 1.25, double(last->value) * 1.25);
    chart->addAxis(bytes, Qt::AlignLeft);
    chart->addAxis(lines, Qt::AlignRight);
    auto line = [&](const QString& name, int column, QValueAxis* axis, bool dashed) {
        auto* series = new QLineSeries(chart);
        series->setName(name);
        series->setPointsVisible(true);
        for (int r = 0; r < m_data.rowCount(); ++r)
            series->append(m_data.item(r, 0)->data(Qt::DisplayRole).toDouble(),
                m_data.item(r, column)->data(Qt::DisplayRole).toDouble());
        chart->addSeries(series);
        series->attachAxis(x);
        series->attachAxis(axis);
        if (dashed) {
            QPen pen = series->pen();
            pen.setStyle(Qt::DashLine);
            series->setPen(pen);
        }
        m_chart->addHoverTips(series, qt(sweep.name), 2);
        return series;
    };
    line(tr("bytes per key"), 1, bytes, false);
    line(tr("lines per %1").arg(lookup), 2, lines, true);
    // Bytes per key on an axis fitted to them: the values differ by a few percent of the whole keyspace.
    const double pad = std::max(0.05 * (highBytes - lowBytes), 0.005 * highBytes);
    bytes->setRange(std::max(0.0, lowBytes - pad), highBytes + pad);
    bytes->applyNiceNumbers();
    lines->setRange(0, std::max(1.0, highLines * 1.08));
    lines->applyNiceNumbers();
    chart->setTitle(tr("%1: bytes per key and lines per %2").arg(qt(sweep.name), lookup));

    auto advice = adviseLimit(sweep, AdviceWeights {});
    if (!advice) {
        m_advice->setText(qt(advice.error().message));
        return;
    }
    const LimitAdvicePoint& chosen = advice->points[advice->chosen];
    auto* marks = new QScatterSeries(chart);
    marks->setName(tr("advised"));
    marks->setMarkerSize(12);
    marks->append(double(chosen.value), chosen.bytesPerKey);
    chart->addSeries(marks);
    marks->attachAxis(x);
    marks->attachAxis(bytes);
    const LimitAdvicePoint& leanest = advice->points[advice->leanest];
    m_advice->setText(tr("Advised at equal weights: %1 = %2 (%3 bytes per key, %4 lines per %5). Leanest: %6 (%7 "
                         "bytes per key, %8 lines). The engine's default is %9; lines per lookup are predicted "
                         "from the engines' lookups.")
                          .arg(qt(sweep.name))
                          .arg(chosen.value)
                          .arg(chosen.bytesPerKey, 0, 'f', 2)
                          .arg(chosen.lookupLines, 0, 'f', 2)
                          .arg(lookup)
                          .arg(leanest.value)
                          .arg(leanest.bytesPerKey, 0, 'f', 2)
                          .arg(leanest.lookupLines, 0, 'f', 2)
                          .arg(advice->defaultValue));
}

} // namespace layoutlab::gui
