// SPDX-License-Identifier: MIT
#pragma once

// Line and bar charts as standalone SVG text, for reports that must render without a display or a network
// (`layoutlab report`): axes with round ticks, one polyline per series, dashed vertical markers, a
// legend. Deterministic: the same data gives the same bytes.

#include <string>
#include <utility>
#include <vector>

namespace layoutlab {

struct SvgSeries {
    std::string name;
    std::vector<std::pair<double, double>> points; // (x, y), in x order
    // Measured points: drawn as open rings without a line, each with its label (an error) beside it.
    bool pointsOnly = false;
    std::vector<std::string> labels; // one per point, or none
};

struct SvgMarker {
    double x = 0;
    std::string label;
};

struct SvgChart {
    std::string title;
    std::string xLabel;
    std::string yLabel;
    std::vector<SvgSeries> series;
    std::vector<SvgMarker> markers;
    int width = 640;
    int height = 340;
};

std::string renderSvg(const SvgChart& chart);

// One bar of a horizontal bar chart: its label at the left, its value's text at the bar's end, and a note
// (e.g. the GET path) under the label.
struct SvgBar {
    std::string label;
    double value = 0;
    std::string valueText;
    std::string note;
};

struct SvgBarChart {
    std::string title;
    std::string valueLabel; // under the value axis
    std::vector<SvgBar> bars; // top to bottom
    int width = 720;
};

// Horizontal bars from zero, a colour each, on a value axis with round ticks; as deterministic as renderSvg.
std::string renderSvgBars(const SvgBarChart& chart);

// Escapes &, <, >, " and ' for XML and HTML text and attributes.
std::string escapeXml(std::string_view text);

} // namespace layoutlab
