// SPDX-License-Identifier: MIT
#include "layoutlab/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace layoutlab {

namespace {

// Colour-blind-safe palette (Okabe–Ito), then repeated.
constexpr const char* kColors[]
    = { "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000" };

// A step of 1, 2 or 5 × 10^k giving about `count` intervals over [low, high].
double niceStep(double low, double high, int count) {
    const double raw = (high - low) / count;
    if (raw <= 0)
        return 1;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : { 1.0, 2.0, 5.0, 10.0 })
        if (raw <= m * magnitude)
            return m * magnitude;
    return 10 * magnitude;
}

std::string number(double v) {
    if (std::abs(v - std::round(v)) < 1e-9)
        return fmt::format("{:.0f}", v);
    return fmt::format("{:.6g}", v);
}

} // namespace

std::string escapeXml(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string renderSvg(const SvgChart& chart) {
    const double left = 64, right = 16, top = 56, bottom = 48;
    const double plotW = chart.width - left - right, plotH = chart.height - top - bottom;
    double xMin = std::numeric_limits<double>::max(), xMax = std::numeric_limits<double>::lowest();
    double yMin = std::numeric_limits<double>::max(), yMax = std::numeric_limits<double>::lowest();
    for (const auto& s : chart.series)
        for (const auto& [x, y] : s.points) {
            xMin = std::min(xMin, x);
            xMax = std::max(xMax, x);
            yMin = std::min(yMin, y);
            yMax = std::max(yMax, y);
        }
    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
        "<text x=\"{2}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{3}</text>\n",
        chart.width, chart.height, chart.width / 2, escapeXml(chart.title));
    if (xMin > xMax) {
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no data</text>\n</svg>\n", chart.width / 2,
            chart.height / 2);
        return out;
    }
    if (xMax - xMin < 1e-12) {
        xMin -= 1;
        xMax += 1;
    }
    if (yMax - yMin < 1e-12) {
        const double pad = std::max(std::abs(yMax) * 0.05, 0.5);
        yMin -= pad;
        yMax += pad;
    }
    const double yStep = niceStep(yMin, yMax, 5);
    yMin = std::floor(yMin / yStep) * yStep;
    yMax = std::ceil(yMax / yStep) * yStep;
    auto px = [&](double x) { return left + (x - xMin) / (xMax - xMin) * plotW; };
    auto py = [&](double y) { return top + plotH - (y - yMin) / (yMax - yMin) * plotH; };

    // Grid and ticks.
    for (double y = yMin; y <= yMax + yStep / 2; y += yStep)
        out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
                           "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
            left, py(y), left + plotW, py(y), left - 6, py(y) + 4, number(y));
    const double xStep = niceStep(xMin, xMax, 8);
    for (double x = std::ceil(xMin / xStep) * xStep; x <= xMax + xStep / 1e6; x += xStep)
        out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>"
                           "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
            px(x), top, px(x), top + plotH, px(x), top + plotH + 16, number(x));
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>\n", left,
        top, plotW, plotH);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + plotW / 2,
        chart.height - 10, escapeXml(chart.xLabel));
    out += fmt::format("<text transform=\"translate(14 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
        top + plotH / 2, escapeXml(chart.yLabel));

    for (const auto& m : chart.markers) {
        if (m.x < xMin || m.x > xMax)
            continue;
        out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#666\" "
                           "stroke-dasharray=\"4 3\"/><text x=\"{3:.1f}\" y=\"{4:.1f}\" fill=\"#444\">{5}</text>\n",
            px(m.x), top, top + plotH, px(m.x) + 3, top + 12, escapeXml(m.label));
    }
    double legendX = left;
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        const auto& s = chart.series[i];
        const char* color = kColors[i % std::size(kColors)];
        if (s.pointsOnly) {
            for (std::size_t k = 0; k < s.points.size(); ++k) {
                const auto [x, y] = s.points[k];
                const std::string label = k < s.labels.size() ? s.labels[k] : std::string();
                out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"none\" stroke=\"{}\" "
                                   "stroke-width=\"2\"><title>{}: {} at {}{}</title></circle>\n",
                    px(x), py(y), color, escapeXml(s.name), number(y), number(x),
                    label.empty() ? std::string() : " (" + escapeXml(label) + ")");
                if (!label.empty())
                    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" font-size=\"11\">{}</text>\n",
                        px(x) + 7, py(y) - 7, color, escapeXml(label));
            }
            out += fmt::format(
                "<circle cx=\"{:.1f}\" cy=\"36\" r=\"4\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>"
                "<text x=\"{:.1f}\" y=\"40\">{}</text>\n",
                legendX + 6, color, legendX + 16, escapeXml(s.name));
            legendX += 28 + 7.0 * static_cast<double>(s.name.size());
            continue;
        }
        std::string points;
        for (const auto& [x, y] : s.points)
            points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px(x), py(y));
        out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"><title>{}</title>"
                           "</polyline>\n",
            color, points, escapeXml(s.name));
        if (s.points.size() <= 64)
            for (const auto& [x, y] : s.points)
                out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}: {} at {}"
                                   "</title></circle>\n",
                    px(x), py(y), color, escapeXml(s.name), number(y), number(x));
        out += fmt::format("<rect x=\"{:.1f}\" y=\"34\" width=\"12\" height=\"4\" fill=\"{}\"/>"
                           "<text x=\"{:.1f}\" y=\"40\">{}</text>\n",
            legendX, color, legendX + 16, escapeXml(s.name));
        legendX += 28 + 7.0 * static_cast<double>(s.name.size());
    }
    out += "</svg>\n";
    return out;
}

std::string renderSvgBars(const SvgBarChart& chart) {
    constexpr double kRow = 40, kTop = 44, kBottom = 40, kCharWidth = 7;
    std::size_t longest = 8;
    for (const auto& b : chart.bars)
        longest = std::max({ longest, b.label.size(), b.note.size() * 10 / 11 });
    const double left = 16 + kCharWidth * static_cast<double>(longest), right = 96;
    const double plotW = std::max(120.0, chart.width - left - right);
    const int height
        = static_cast<int>(kTop + kBottom + kRow * static_cast<double>(std::max<std::size_t>(chart.bars.size(), 1)));
    double high = 0;
    for (const auto& b : chart.bars)
        high = std::max(high, b.value);
    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
        "<text x=\"{2}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{3}</text>\n",
        chart.width, height, chart.width / 2, escapeXml(chart.title));
    if (chart.bars.empty() || high <= 0)
        return out
            + fmt::format(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no data</text>\n</svg>\n", chart.width / 2, height / 2);
    const double step = niceStep(0, high, 5);
    const double top = std::ceil(high / step) * step;
    auto px = [&](double v) { return left + v / top * plotW; };
    const double plotBottom = kTop + kRow * static_cast<double>(chart.bars.size());
    for (double v = 0; v <= top + step / 2; v += step)
        out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e4e4e4\"/>"
                           "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
            px(v), kTop, plotBottom, plotBottom + 16, number(v));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + plotW / 2, height - 6,
        escapeXml(chart.valueLabel));
    for (std::size_t i = 0; i < chart.bars.size(); ++i) {
        const auto& b = chart.bars[i];
        const double y = kTop + kRow * static_cast<double>(i);
        const char* color = kColors[i % std::size(kColors)];
        out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: "
                           "{}</title></rect>\n",
            left, y + 6, std::max(0.0, px(b.value) - left), kRow - 16, color, escapeXml(b.label),
            escapeXml(b.valueText));
        out += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 8, y + 18, escapeXml(b.label));
        if (!b.note.empty())
            out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#666\" font-size=\"11\">{}"
                               "</text>\n",
                left - 8, y + 31, escapeXml(b.note));
        out += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", px(b.value) + 6, y + 24, escapeXml(b.valueText));
    }
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#888\"/>\n", left, kTop, plotBottom);
    return out + "</svg>\n";
}

} // namespace layoutlab
