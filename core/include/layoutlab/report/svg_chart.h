// SPDX-License-Identifier: MIT
#pragma once

// Line charts as standalone SVG text, for reports that must render without a display or a network
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

// Escapes &, <, >, " and ' for XML and HTML text and attributes.
std::string escapeXml(std::string_view text);

} // namespace layoutlab
