// SPDX-License-Identifier: MIT
#include "report_limits.h"

#include "layoutlab/report/limit_advice.h"
#include "layoutlab/report/svg_chart.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab::cli {

std::optional<std::pair<std::string, std::string>> limitSweepChart(const SimulationResult& r, const std::string& base) {
    if (!r.limitSweep || r.limitSweep->points.size() < 2)
        return std::nullopt;
    const LimitSweepResult& s = *r.limitSweep;
    SvgSeries bytes { "bytes per key", {}, false, {} };
    for (const LimitPoint& p : s.points)
        bytes.points.emplace_back(static_cast<double>(p.value), p.point.usableBytesPerKey);
    std::sort(bytes.points.begin(), bytes.points.end());
    std::vector<SvgMarker> markers;
    if (auto advice = adviseLimit(s, AdviceWeights {}))
        markers.push_back({ static_cast<double>(advice->points[advice->chosen].value), "advised" });
    return std::make_pair(base + "-limit.svg",
        renderSvg({ fmt::format("Bytes per key against {} (threshold {})", s.name, s.threshold), s.name,
            "bytes per key", { std::move(bytes) }, std::move(markers) }));
}

std::string limitSweepTable(const SimulationResult& r) {
    if (!r.limitSweep)
        return {};
    const LimitSweepResult& s = *r.limitSweep;
    const std::string type = limitType(s.name);
    const std::string_view lookup = lookupCommand(type);
    std::string html = fmt::format(
        "<h3>{0} swept</h3>\n<p>Each value's keyspace at threshold {1}, the run's own value {2}: bytes per key, and "
        "the 64-byte lines one {3} of a {4}'s element reads (predicted from the engine's lookup, not measured).</p>\n"
        "<table class=\"points\">\n<tr><th>value</th><th>keys</th><th>bytes/key</th><th>vs {2}</th><th>lines/{3}</th>"
        "<th>collection keys by encoding</th></tr>\n",
        escapeXml(s.name), s.threshold, s.runValue, lookup, type);
    const LimitPoint* own = nullptr;
    for (const LimitPoint& p : s.points)
        if (p.value == s.runValue)
            own = &p;
    for (const LimitPoint& p : s.points) {
        std::string encodings;
        for (const CollectionUsage& c : p.collections)
            encodings += fmt::format("{}{} {} {}", encodings.empty() ? "" : ", ", c.keys, c.type, c.encoding);
        const std::string change = own && own->point.usableBytesPerKey > 0
            ? fmt::format("{:+.2f}%", 100 * (p.point.usableBytesPerKey / own->point.usableBytesPerKey - 1))
            : std::string("-");
        html += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.2f}</td><td>{}</td><td>{:.2f}</td><td>{}</td></tr>\n",
            p.value, p.point.keys, p.point.usableBytesPerKey, change, lookupLinesPerElement(p.collections, type),
            escapeXml(encodings));
    }
    html += "</table>\n";
    if (auto advice = adviseLimit(s, AdviceWeights {})) {
        const LimitAdvicePoint& c = advice->points[advice->chosen];
        html += fmt::format("<p class=\"verdict\">At equal weights (<code>advise --param</code>), {} = <b>{}</b>: "
                            "{:.2f} bytes per key, {:.2f} lines per {}; the leanest value is {}.</p>\n",
            escapeXml(s.name), c.value, c.bytesPerKey, c.lookupLines, lookup, advice->points[advice->leanest].value);
    }
    return html;
}

} // namespace layoutlab::cli
