// SPDX-License-Identifier: MIT
#include "chart_panel.h"

#include <QContextMenuEvent>
#include <QCoreApplication>
#include <QCursor>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPainter>
#include <QSettings>
#include <QSvgGenerator>
#include <QTextStream>
#include <QToolTip>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <limits>

#include <algorithm>
#include <cmath>

namespace layoutlab::gui {

namespace {
QString csvField(const QVariant& v) {
    if (v.typeId() == QMetaType::Double)
        return QString::number(v.toDouble(), 'g', 12);
    QString s = v.toString();
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n')))
        s = QLatin1Char('"') + s.replace(QLatin1String("\""), QLatin1String("\"\"")) + QLatin1Char('"');
    return s;
}
} // namespace

bool writeCsv(const QAbstractItemModel& model, const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text))
        return false;
    QTextStream out(&file);
    QStringList row;
    for (int c = 0; c < model.columnCount(); ++c)
        row << csvField(model.headerData(c, Qt::Horizontal));
    out << row.join(QLatin1Char(',')) << '\n';
    for (int r = 0; r < model.rowCount(); ++r) {
        row.clear();
        for (int c = 0; c < model.columnCount(); ++c)
            row << csvField(model.data(model.index(r, c), Qt::EditRole));
        out << row.join(QLatin1Char(',')) << '\n';
    }
    out.flush();
    return file.error() == QFile::NoError;
}

QAbstractAxis* makeCategoryAxis(QChart* chart, const QStringList& categories) {
    if (categories.size() <= 16) {
        auto* axis = new QBarCategoryAxis(chart);
        axis->append(categories);
        // Many long labels ("103,496") side by side overlap and are cut to "1…": slanted, each has room.
        qsizetype characters = 0;
        for (const QString& c : categories)
            characters += c.size();
        if (categories.size() > 6 && characters > 4 * categories.size())
            axis->setLabelsAngle(-45);
        return axis;
    }
    auto* axis = new QCategoryAxis(chart);
    axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    const qsizetype every = (categories.size() + 15) / 16;
    for (qsizetype bar = 0; bar < categories.size(); bar += every)
        axis->append(categories[bar], double(bar));
    axis->setRange(-0.5, double(categories.size()) - 0.5);
    axis->setLabelsAngle(-45);
    return axis;
}

DisplayUnit durationUnit(double largestMicros) {
    if (largestMicros >= 10e6)
        return { 1e6, QStringLiteral("s") };
    if (largestMicros >= 10e3)
        return { 1e3, QStringLiteral("ms") };
    return { 1, QStringLiteral("µs") };
}

DisplayUnit byteUnit(double largestBytes) {
    if (largestBytes >= 10.0 * 1024 * 1024 * 1024)
        return { 1024.0 * 1024 * 1024, QStringLiteral("GiB") };
    if (largestBytes >= 10.0 * 1024 * 1024)
        return { 1024.0 * 1024, QStringLiteral("MiB") };
    if (largestBytes >= 10.0 * 1024)
        return { 1024.0, QStringLiteral("KiB") };
    return { 1, QStringLiteral("B") };
}

QString byteLabel(double bytes) {
    const char* const units[] { "B", "KiB", "MiB", "GiB" };
    int unit = 0;
    while (bytes >= 1024 && unit < 3) {
        bytes /= 1024;
        ++unit;
    }
    // Whole numbers as they are; others with one decimal (1.5 KiB), never a rounded-away difference.
    const bool whole = std::abs(bytes - std::round(bytes)) < 1e-9;
    return QStringLiteral("%1 %2").arg(QLocale().toString(bytes, 'f', whole ? 0 : 1), QLatin1String(units[unit]));
}

void drawBarChart(QChart* chart, const QStringList& categories,
    const std::vector<std::pair<QString, QList<double>>>& sets, const QString& xTitle, const QString& yTitle,
    bool valueLabels) {
    auto* series = new QBarSeries(chart);
    const QColor colors[] { QColor(0x46, 0x82, 0xb4), QColor(0xe0, 0x7b, 0x39), QColor(0x2e, 0x8b, 0x57) };
    std::size_t i = 0;
    for (const auto& [name, values] : sets) {
        auto* set = new QBarSet(name);
        set->append(values);
        set->setColor(colors[i++ % 3]);
        series->append(set);
    }
    if (valueLabels) {
        series->setLabelsVisible(true);
        series->setLabelsFormat(QStringLiteral("@value"));
        series->setLabelsPrecision(6);
    }
    chart->addSeries(series);
    QAbstractAxis* x = makeCategoryAxis(chart, categories);
    x->setTitleText(xTitle);
    double low = std::numeric_limits<double>::max(), high = 0;
    bool counts = true; // whole numbers get whole-number labels
    for (const auto& set : sets)
        for (const double v : set.second) {
            counts = counts && v == std::floor(v);
            if (v > 0)
                low = std::min(low, v);
            high = std::max(high, v);
        }
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    if (high > 0 && low > 0 && high / low >= 100) {
        // Values spanning decades: on a linear axis the small ones would be invisible slivers.
        auto* y = new QLogValueAxis(chart);
        y->setTitleText(yTitle + QCoreApplication::translate("ChartPanel", " (log scale)"));
        y->setBase(10);
        const double floor = std::pow(10.0, std::floor(std::log10(low)));
        y->setRange(floor, std::pow(10.0, std::ceil(std::log10(high))));
        // An empty bar stands at the axis floor: zero has no place on a log scale.
        for (QBarSet* set : series->barSets())
            for (int v = 0; v < set->count(); ++v)
                if (set->at(v) <= 0)
                    set->replace(v, floor);
        y->setLabelFormat(QStringLiteral("%.%1f").arg(std::max(0, int(-std::floor(std::log10(low))))));
        chart->addAxis(y, Qt::AlignLeft);
        series->attachAxis(y);
    } else {
        auto* y = new QValueAxis(chart);
        y->setTitleText(yTitle);
        chart->addAxis(y, Qt::AlignLeft);
        series->attachAxis(y);
        if (high <= 0) // nothing to draw (a trace of collections has no string values): an empty 0-1 axis
            y->setRange(0, 1);
        y->applyNiceNumbers();
        y->setLabelFormat(counts ? QStringLiteral("%.0f") : QStringLiteral("%.1f"));
    }
    chart->legend()->setVisible(sets.size() > 1);
}

void setThresholdRange(QValueAxis* axis, double first, double last) {
    axis->setRange(first, std::max(last, first + 1));
    double interval = 1;
    while ((last - first) / interval > 8)
        interval *= 2;
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(interval);
    // Whole bytes. "%.0f", not "%d": Qt 6.4 draws no dynamic-tick labels for "%d" once numbers are localised.
    axis->setLabelFormat(QStringLiteral("%.0f"));
}

ChartPanel::ChartPanel(const QString& exportName, QWidget* parent)
    : QChartView(parent)
    , m_exportName(exportName) {
    setRenderHint(QPainter::Antialiasing);
    setMinimumSize(320, 220);
    chart()->setMargins(QMargins(4, 4, 4, 4));
    chart()->setTheme(themeForPalette());
    chart()->setLocalizeNumbers(true);
}

QChart::ChartTheme ChartPanel::themeForPalette() const {
    // A dark window palette gets dark charts: white charts and black labels on it are unreadable.
    return palette().color(QPalette::Window).lightness() < 128 ? QChart::ChartThemeDark : QChart::ChartThemeLight;
}

void ChartPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange && chart()->theme() != themeForPalette())
        chart()->setTheme(themeForPalette());
    QChartView::changeEvent(event);
}

QSize ChartPanel::defaultExportSize() const {
    return viewport()->size().expandedTo(QSize(640, 400));
}

void ChartPanel::renderLaidOutAt(QPainter& painter, const QSize& size) const {
    // The chart is laid out again at `size` (axes, legend and labels placed for it), rendered, and put
    // back: scaling the on-screen view instead keeps its aspect ratio and leaves part of the image empty.
    QChart* c = chart();
    QGraphicsScene* s = scene();
    const QSizeF shown = c->size();
    const QRectF shownRect = s->sceneRect();
    const QRectF target(QPointF(0, 0), QSizeF(size));
    c->resize(target.size());
    s->setSceneRect(target);
    s->render(&painter, target, target);
    c->resize(shown);
    s->setSceneRect(shownRect);
}

bool ChartPanel::exportPng(const QString& path, QSize size, qreal scale) const {
    if (size.isEmpty())
        size = defaultExportSize();
    // Drawn at `scale` times the size, so the image stays sharp in documents.
    QImage image(size * scale, QImage::Format_ARGB32);
    // The chart's own background around it (a theme's background may be a gradient: its first colour).
    const QBrush background = chart()->backgroundBrush();
    image.fill(background.gradient() && !background.gradient()->stops().isEmpty()
            ? background.gradient()->stops().front().second
            : background.color());
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.scale(scale, scale);
    renderLaidOutAt(painter, size);
    painter.end();
    return image.save(path, "PNG");
}

bool ChartPanel::exportSvg(const QString& path, QSize size) const {
    if (size.isEmpty())
        size = defaultExportSize();
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(chart()->title().isEmpty() ? m_exportName : chart()->title());
    svg.setDescription(QStringLiteral("layoutlab chart"));
    QPainter painter;
    if (!painter.begin(&svg))
        return false;
    renderLaidOutAt(painter, size);
    return painter.end() && QFileInfo(path).size() > 0;
}

bool ChartPanel::exportCsv(const QString& path) const {
    return m_model && writeCsv(*m_model, path);
}

void ChartPanel::exportInteractively(const QString& kind) {
    QSettings settings;
    const QString dir = settings.value(QStringLiteral("export/directory")).toString();
    const QString filter = kind == QLatin1String("png") ? tr("PNG image (*.png)")
        : kind == QLatin1String("svg")                  ? tr("SVG image (*.svg)")
                                                        : tr("CSV data (*.csv)");
    const QString path = QFileDialog::getSaveFileName(this, tr("Export %1").arg(m_exportName),
        dir + QLatin1Char('/') + m_exportName + QLatin1Char('.') + kind, filter);
    if (path.isEmpty())
        return;
    settings.setValue(QStringLiteral("export/directory"), QFileInfo(path).absolutePath());
    const bool ok = kind == QLatin1String("png") ? exportPng(path)
        : kind == QLatin1String("svg")           ? exportSvg(path)
                                                 : exportCsv(path);
    if (!ok)
        QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1.").arg(path));
}

void ChartPanel::addHoverTips(QXYSeries* series, const QString& xLabel, int decimals) {
    connect(series, &QXYSeries::hovered, this, [this, series, xLabel, decimals](const QPointF& at, bool entered) {
        if (!entered || series->count() == 0) {
            QToolTip::hideText();
            return;
        }
        const auto points = series->points();
        const QPointF* nearest = &points.front();
        for (const QPointF& p : points)
            if (std::abs(p.x() - at.x()) < std::abs(nearest->x() - at.x()))
                nearest = &p;
        QToolTip::showText(QCursor::pos(),
            QStringLiteral("%1 %2\n%3: %4")
                .arg(xLabel, QString::number(nearest->x(), 'f', 0), series->name(),
                    QString::number(nearest->y(), 'f', decimals)),
            this);
    });
}

QChart* ChartPanel::freshChart() {
    QChart* old = chart();
    auto* fresh = new QChart;
    fresh->setMargins(old->margins());
    fresh->setTheme(themeForPalette()); // before any series: the theme colours them
    fresh->setLocalizeNumbers(true); // axis labels with thousands separators: 150,000, not 150000
    setChart(fresh); // the view releases the old chart without deleting it
    delete old;
    return fresh;
}

void ChartPanel::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton && !chart()->series().isEmpty()
        && chart()->plotArea().contains(event->position()))
        emit pointerAt(chart()->mapToValue(event->position()).x());
    QChartView::mousePressEvent(event);
}

void ChartPanel::mouseMoveEvent(QMouseEvent* event) {
    if ((event->buttons() & Qt::LeftButton) && !chart()->series().isEmpty()
        && chart()->plotArea().contains(event->position()))
        emit pointerAt(chart()->mapToValue(event->position()).x());
    QChartView::mouseMoveEvent(event);
}

void ChartPanel::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    menu.addAction(tr("Export chart as PNG…"), this, [this] { exportInteractively(QStringLiteral("png")); });
    menu.addAction(tr("Export chart as SVG…"), this, [this] { exportInteractively(QStringLiteral("svg")); });
    auto* csv = menu.addAction(tr("Export data as CSV…"), this, [this] { exportInteractively(QStringLiteral("csv")); });
    csv->setEnabled(m_model != nullptr);
    menu.exec(event->globalPos());
}

QString relativeErrorText(double relativeError) {
    return QStringLiteral("%1%2 %").arg(
        relativeError >= 0 ? QStringLiteral("+") : QString(), QLocale().toString(100 * relativeError, 'f', 2));
}

void addMeasuredPoints(ChartPanel* panel, QValueAxis* x, QValueAxis* y, const std::vector<MeasuredMark>& marks,
    const QString& name, const QColor& color) {
    if (marks.empty())
        return;
    QChart* chart = panel->chart();
    auto* rings = new QScatterSeries(chart);
    rings->setObjectName(QStringLiteral("measured"));
    rings->setName(name);
    rings->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    rings->setMarkerSize(12);
    rings->setColor(Qt::transparent);
    QPen pen(color);
    pen.setWidthF(2.2);
    rings->setPen(pen);
    double low = y->min(), high = y->max();
    for (const auto& m : marks) {
        rings->append(m.x, m.measured);
        low = std::min(low, m.measured);
        high = std::max(high, m.measured);
    }
    if (low < y->min() || high > y->max()) {
        const double pad = (high - low) * 0.05;
        y->setRange(std::max(0.0, low - pad), high + pad);
        y->applyNiceNumbers();
    }
    chart->addSeries(rings);
    rings->attachAxis(x);
    rings->attachAxis(y);
    panel->addHoverTips(rings, QCoreApplication::translate("ChartPanel", "threshold"), 2);
    // Each ring's error beside it: one invisible point per ring carrying its own label, every other one
    // below its ring so that neighbours' labels do not run together.
    const double below = (y->max() - y->min()) * 0.16;
    for (std::size_t k = 0; k < marks.size(); ++k) {
        const MeasuredMark& m = marks[k];
        addChartLabel(chart, x, y, QPointF(m.x, k % 2 ? m.measured - below : m.measured),
            relativeErrorText(m.relativeError), color, QStringLiteral("measured-label"));
    }
}

void addChartLabel(QChart* chart, QAbstractAxis* x, QAbstractAxis* y, QPointF at, const QString& text,
    const QColor& color, const QString& objectName) {
    auto* label = new QScatterSeries(chart);
    label->setObjectName(objectName);
    label->setMarkerSize(1);
    label->setColor(color);
    label->setBorderColor(color);
    label->append(at);
    label->setPointLabelsFormat(text);
    label->setPointLabelsColor(color);
    label->setPointLabelsClipping(false);
    label->setPointLabelsVisible(true);
    chart->addSeries(label);
    label->attachAxis(x);
    label->attachAxis(y);
    for (QLegendMarker* marker : chart->legend()->markers(label))
        marker->setVisible(false);
}

} // namespace layoutlab::gui
