// SPDX-License-Identifier: MIT
#pragma once

// A chart view every chart of the application uses: exports itself as PNG and SVG and its data (the
// table model it was drawn from) as CSV, from its context menu or File → Export; shows exact values
// when the pointer rests on a series.

#include <QAbstractItemModel>
#include <QPointer>
#include <QtCharts/QChartView>
#include <QtCharts/QValueAxis>
#include <QtCharts/QXYSeries>

namespace layoutlab::gui {

class ChartPanel final : public QChartView {
    Q_OBJECT
public:
    explicit ChartPanel(const QString& exportName, QWidget* parent = nullptr);

    // The model whose rows the chart shows: what "Export data as CSV" writes.
    void setDataModel(QAbstractItemModel* model) { m_model = model; }
    QAbstractItemModel* dataModel() const { return m_model; }
    QString exportName() const { return m_exportName; }

    // The chart laid out at `size` (default: as shown, at least 640x400) fills the image; a PNG is drawn at
    // `scale` times that size.
    bool exportPng(const QString& path, QSize size = {}, qreal scale = 2) const;
    bool exportSvg(const QString& path, QSize size = {}) const;
    bool exportCsv(const QString& path) const;
    // Asks for a file name and exports as `kind` ("png", "svg" or "csv"); errors in a dialog.
    void exportInteractively(const QString& kind);

    // Shows "<x label> X: <series> Y" for the data point nearest the pointer on `series`.
    void addHoverTips(QXYSeries* series, const QString& xLabel, int decimals);
    // Replaces the chart with an empty one (same margins) and returns it: every redraw starts from a fresh
    // chart, since axes removed from a chart that was never shown can leave their drawing behind.
    QChart* freshChart();

signals:
    // The left button pressed, or dragged, over the plot: the x value under the pointer.
    void pointerAt(double x);

protected:
    void contextMenuEvent(QContextMenuEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    QSize defaultExportSize() const;
    QChart::ChartTheme themeForPalette() const;
    void renderLaidOutAt(QPainter& painter, const QSize& size) const;

    QString m_exportName;
    QPointer<QAbstractItemModel> m_model;
};

// The x axis of bars over `categories`: up to 16, every bar is labelled; beyond that every n-th bar is, so
// no label is elided.
QAbstractAxis* makeCategoryAxis(QChart* chart, const QStringList& categories);

// Draws grouped bars on an empty chart (ChartPanel::freshChart()): one bar set per (name, values) over `categories`,
// with axis titles; the legend shows only when there are several sets; `valueLabels` prints each bar's value.
// A unit that keeps a quantity's numbers readable: values are divided by `divisor` and shown in `name`.
struct DisplayUnit {
    double divisor = 1;
    QString name;
};
// µs, ms or s for durations given in microseconds, chosen by the largest.
DisplayUnit durationUnit(double largestMicros);
// B, KiB, MiB or GiB for byte counts, chosen by the largest (from 10 of the next unit up).
DisplayUnit byteUnit(double largestBytes);
// One size with its own unit, for a category label: "96 B", "1.5 KiB", "512 KiB", "1 MiB".
QString byteLabel(double bytes);

void drawBarChart(QChart* chart, const QStringList& categories,
    const std::vector<std::pair<QString, QList<double>>>& sets, const QString& xTitle, const QString& yTitle,
    bool valueLabels = false);

// A threshold axis from `first` to `last` bytes, ticks on multiples of a power of two (about eight).
void setThresholdRange(QValueAxis* axis, double first, double last);

// A text on the chart itself at (`at`), attached to `x` and `y`: one invisible point carrying the text as its
// label (Qt Charts has no free text item that follows the axes), left out of the legend.
void addChartLabel(QChart* chart, QAbstractAxis* x, QAbstractAxis* y, QPointF at, const QString& text,
    const QColor& color, const QString& objectName);

// A point measured on a real server and the prediction's error there, for addMeasuredPoints.
struct MeasuredMark {
    double x = 0;
    double measured = 0;
    double relativeError = 0; // (predicted - measured) / measured
};
// Measured values on a chart of predicted lines: open rings without a line, each labelled with the
// prediction's error (objectName "measured"; the labels "measured-label"). The y axis widens to hold
// them.
void addMeasuredPoints(ChartPanel* panel, QValueAxis* x, QValueAxis* y, const std::vector<MeasuredMark>& marks,
    const QString& name, const QColor& color);
// "+0.05 %" in the reader's locale.
QString relativeErrorText(double relativeError);

// Writes `model` as CSV: the horizontal headers, then every row's EditRole values (exact numbers).
bool writeCsv(const QAbstractItemModel& model, const QString& path);

} // namespace layoutlab::gui
