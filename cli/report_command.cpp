// SPDX-License-Identifier: MIT
// `layoutlab report RUN... -o DIR`: a standalone HTML report of stored runs (DIR/index.html, with its
// charts inline as SVG and also written beside it as .svg files). It needs no display to write and no
// network to read: no scripts, fonts, styles or images are fetched.

#include "commands.h"
#include "report_limits.h"
#include "run_store.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/get_time.h"
#include "layoutlab/report/migration.h"
#include "layoutlab/report/reporter.h"
#include "layoutlab/report/svg_chart.h"
#include "layoutlab/store/engine_sweep_points.h"
#include "layoutlab/store/run_parameters.h"
#include "layoutlab/store/stored_run.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

namespace layoutlab::cli {

namespace {

struct ReportOptions {
    std::vector<std::int64_t> runs;
    std::string output;
    DbOptions db;
};

// The points of `result` as (threshold, metric) for the metrics named.
std::vector<SvgSeries> seriesOf(const SimulationResult& result,
    const std::vector<std::pair<std::string, std::string>>& metrics, const std::string& prefix = {}) {
    std::vector<SvgSeries> out;
    for (const auto& [name, label] : metrics) {
        SvgSeries s { prefix + label, {}, false, {} };
        for (const auto& p : result.points)
            for (const auto& [metric, value] : pointMetrics(p))
                if (metric == name)
                    s.points.emplace_back(p.threshold, value);
        if (!s.points.empty())
            out.push_back(std::move(s));
    }
    return out;
}

std::vector<SvgMarker> markersOf(const SimulationResult& result) {
    std::vector<SvgMarker> out { { 64, "64" }, { 128, "128" } };
    if (const auto verdict = sweepVerdict(result); verdict.best)
        out.push_back(
            { static_cast<double>(verdict.best->threshold), fmt::format("best {}", verdict.best->threshold) });
    return out;
}

struct Figure {
    std::string file; // beside index.html
    std::string svg;
};

// An engine sweep's measured bytes per key as rings labelled with the prediction's error, at their
// thresholds (none for memcached's slab settings, which the table lists).
std::optional<SvgSeries> measuredSeries(const std::vector<EngineSweepPoint>& points, const std::string& name) {
    SvgSeries s { name, {}, true, {} };
    for (const auto& p : points)
        if (p.threshold) {
            s.points.emplace_back(*p.threshold, p.measuredBytesPerKey);
            s.labels.push_back(fmt::format("{:+.2f}%", 100.0 * p.relativeError()));
        }
    if (s.points.empty())
        return std::nullopt;
    return s;
}

// A run's timeline at one of its thresholds (the setting its engine ships with, else the first):
// allocated beside active bytes over the trace, in MiB.
std::optional<Figure> timelineFigure(const SimulationResult& r, const std::string& base) {
    if (r.timeline.empty() || r.points.empty())
        return std::nullopt;
    std::size_t at = 0;
    if (const ThresholdPoint* shipped = shippedPoint(r))
        at = static_cast<std::size_t>(shipped - r.points.data());
    SvgSeries allocated { "allocated", {}, false, {} }, active { "active", {}, false, {} };
    for (const auto& s : r.timeline) {
        allocated.points.emplace_back(
            static_cast<double>(s.requests), static_cast<double>(s.allocatedBytes[at]) / 1048576.0);
        active.points.emplace_back(static_cast<double>(s.requests), static_cast<double>(s.activeBytes[at]) / 1048576.0);
    }
    const std::string where = r.thresholdName.empty() ? std::string("its one setting")
                                                      : fmt::format("threshold {}", r.points[at].threshold);
    return Figure { base + "-timeline.svg",
        renderSvg({ fmt::format("The allocator over the trace at {}: allocated and active", where), "requests replayed",
            "MiB", { std::move(allocated), std::move(active) }, {} }) };
}

// A run under a memory budget: the hit ratio against the threshold, or, with several budgets, against the
// budget (a miss-ratio curve), a line per threshold.
std::optional<Figure> budgetFigure(const SimulationResult& r, const std::string& base) {
    if (r.points.empty() || !r.points.front().budget)
        return std::nullopt;
    std::map<std::uint32_t, SvgSeries> byThreshold;
    SvgSeries overThresholds { "hit ratio", {}, false, {} };
    std::set<std::uint64_t> budgets;
    for (const auto& p : r.points) {
        budgets.insert(p.budget->maxmemoryBytes);
        auto& line = byThreshold[p.threshold];
        line.name = r.thresholdName.empty() ? std::string("hit ratio") : fmt::format("threshold {}", p.threshold);
        line.points.emplace_back(static_cast<double>(p.budget->maxmemoryBytes) / 1048576.0, 100 * p.budget->hitRatio());
        overThresholds.points.emplace_back(p.threshold, 100 * p.budget->hitRatio());
    }
    // memcached's budget is its -m; a sampled curve says how much of the keyspace it replayed, and its error.
    const std::string limitName = r.layoutSpec.rfind("memcached", 0) == 0 ? "-m" : "maxmemory";
    const std::string sampled = r.budgetSampleRate < 1.0
        ? fmt::format("; {:.3g}% of the keys, ±{:.2f} points", 100 * r.budgetSampleRate, 100 * r.budgetSamplingError)
        : std::string();
    if (budgets.size() > 1) {
        std::vector<SvgSeries> lines;
        for (auto& [threshold, line] : byThreshold)
            lines.push_back(std::move(line));
        return Figure { base + "-hit-ratio.svg",
            renderSvg({ fmt::format("Hit ratio against the budget ({}{})", r.budgetPolicy, sampled),
                limitName + " (MiB)", "hit ratio (%)", std::move(lines), {} }) };
    }
    if (r.points.size() < 2)
        return std::nullopt;
    return Figure { base + "-hit-ratio.svg",
        renderSvg({ fmt::format("Hit ratio under {} {} ({}{})", limitName,
                        bytesText(static_cast<double>(*budgets.begin())), r.budgetPolicy, sampled),
            "threshold (bytes)", "hit ratio (%)", { std::move(overThresholds) }, markersOf(r) }) };
}

std::vector<Figure> figuresOf(const StoredRun& stored) {
    const auto& r = stored.result;
    const std::string base = fmt::format("run-{}", stored.run.id);
    std::vector<Figure> out;
    if (auto budget = budgetFigure(r, base)) {
        out.push_back(std::move(*budget));
        // Points of several budgets at each threshold: the charts against the threshold would fold over them.
        std::set<std::uint64_t> budgets;
        for (const auto& p : r.points)
            budgets.insert(p.budget->maxmemoryBytes);
        if (budgets.size() > 1)
            return out;
    }
    if (auto timeline = timelineFigure(r, base))
        out.push_back(std::move(*timeline));
    if (auto limit = limitSweepChart(r, base))
        out.push_back({ std::move(limit->first), std::move(limit->second) });
    const auto measured = engineSweepPoints(stored.measurements);
    if (auto series = measuredSeries(measured, "measured (real servers)")) {
        SvgSeries predicted { "predicted", {}, false, {} };
        for (const auto& p : measured)
            if (p.threshold)
                predicted.points.emplace_back(*p.threshold, p.predictedBytesPerKey);
        out.push_back({ base + "-measured.svg",
            renderSvg({ "Bytes per key: real servers against the prediction (hash index included)", "threshold (bytes)",
                "bytes per key", { std::move(predicted), std::move(*series) }, { { 64, "64" }, { 128, "128" } } }) });
    }
    if (r.points.size() < 2)
        return out; // one point: the table says it all
    const auto markers = markersOf(r);
    out.push_back({ base + "-memory.svg",
        renderSvg({ "Memory per key", "threshold (bytes)", "bytes per key",
            seriesOf(
                r, { { "usable_bytes_per_key", "bytes per key" }, { "overhead_bytes_per_key", "overhead per key" } }),
            markers }) });
    if (r.points.front().arena)
        out.push_back({ base + "-active.svg",
            renderSvg({ "What the allocator keeps: active bytes per key beside allocated", "threshold (bytes)",
                "bytes per key",
                seriesOf(r,
                    { { "usable_bytes_per_key", "allocated per key" }, { "active_bytes_per_key", "active per key" } }),
                markers }) });
    out.push_back({ base + "-access.svg",
        renderSvg({ "GET access path", "threshold (bytes)", "per GET",
            seriesOf(
                r, { { "lines_touched_per_get", "lines touched" }, { "dependent_loads_per_get", "dependent loads" } }),
            markers }) });
    if (!r.points.front().missesPerGet.empty())
        out.push_back({ base + "-misses.svg",
            renderSvg({ "Cache-model misses per GET", "threshold (bytes)", "misses per GET",
                seriesOf(r,
                    { { "l1_misses_per_get", "L1" }, { "l2_misses_per_get", "L2" }, { "llc_misses_per_get", "LLC" } }),
                markers }) });
    return out;
}

std::string cell(const std::string& text) {
    return "<td>" + escapeXml(text) + "</td>";
}

// One row per real server of an engine sweep: what it measured, what was predicted, the error.
std::string engineSweepTable(const std::vector<EngineSweepPoint>& points) {
    const bool memcached = points.front().engine == "memcached";
    std::string html = fmt::format(
        "<h3>Measured against predicted</h3>\n<p>Bytes per key: {}. Worst error {:+.2f}%.</p>\n"
        "<table class=\"points\">\n<tr><th>setting</th><th>keys</th><th>measured</th>"
        "<th>predicted</th><th>error</th><th>active/key measured</th><th>predicted</th><th>error</th>"
        "<th>GETs/s</th><th>server</th><th>model</th></tr>\n",
        memcached ? "slab chunk bytes per item, hash index not included" : "used_memory per key, hash index included",
        100.0 * worstError(points));
    for (const auto& p : points)
        html += "<tr>" + cell(p.setting) + cell(std::to_string(p.keys))
            + fmt::format("<td>{:.2f}</td><td>{:.2f}</td><td>{:+.2f}%</td>", p.measuredBytesPerKey,
                p.predictedBytesPerKey, 100.0 * p.relativeError())
            + (p.activeRelativeError() ? fmt::format("<td>{:.2f}</td><td>{:.2f}</td><td>{:+.2f}%</td>",
                   *p.measuredActiveBytesPerKey, *p.predictedActiveBytesPerKey, 100.0 * *p.activeRelativeError())
                                       : std::string("<td></td><td></td><td></td>"))
            + cell(p.getsPerSecond ? fmt::format("{:.0f}", *p.getsPerSecond) : std::string())
            + cell(fmt::format("{} {}{}", p.engine, p.version, p.build.empty() ? "" : " built with " + p.build))
            + cell(p.model) + "</tr>\n";
    return html + "</table>\n";
}

// The predicted memory stall per GET of a run made with --latency, from the latencies it keeps.
std::string stallTable(const StoredRun& stored) {
    const auto params = RunParameters::fromJson(stored.run.parametersJson);
    if (!params || !params->extra.contains("load_latencies"))
        return {};
    const auto latencies = loadLatenciesFromJson(params->extra["load_latencies"]);
    if (!latencies)
        return {};
    std::string html = fmt::format("<h3>Memory stall per GET</h3>\n<p>Predicted from the cache model's misses and "
                                   "this host's load latencies when the run was made (memory {:.1f} ns): the middle of "
                                   "the range from only the misses that start a dependent step to every miss "
                                   "serialized.</p>\n<table class=\"points\">\n<tr><th>threshold</th><th>stall "
                                   "ns/GET</th><th>±</th><th>overlapped</th><th>serialized</th></tr>\n",
        latencies->memoryNs);
    for (const auto& p : stored.result.points)
        if (const auto e = predictStall(p, *latencies))
            html += fmt::format("<tr><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td></tr>\n",
                p.threshold, e->ns, e->uncertaintyNs, e->overlappedNs, e->serializedNs);
    return html + "</table>\n";
}

// A run's collection keys by type and encoding (the same at every threshold, counted in each row above).
std::string collectionTable(const SimulationResult& r) {
    if (r.collections.empty())
        return {};
    std::string html = "<h3>Collection keys</h3>\n<p>The same at every threshold, and counted in each row's keys "
                       "and bytes (not in its size classes); each key's own allocations included.</p>\n"
                       "<table class=\"points\">\n<tr><th>type</th><th>encoding</th><th>keys</th><th>entries</th>"
                       "<th>entries/key</th><th>usable bytes</th><th>usable/key</th></tr>\n";
    for (const CollectionUsage& c : r.collections) {
        const double keys = static_cast<double>(std::max<std::uint64_t>(c.keys, 1));
        html += "<tr>" + cell(c.type) + cell(c.encoding)
            + fmt::format("<td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.0f}</td><td>{:.1f}</td></tr>\n", c.keys,
                c.entries, static_cast<double>(c.entries) / keys, c.usableBytes, c.usableBytes / keys);
    }
    return html + "</table>\n";
}

std::string runSection(const StoredRun& stored, const std::vector<Figure>& figures) {
    const auto& run = stored.run;
    const auto& r = stored.result;
    std::string html = fmt::format("<section id=\"run-{0}\">\n<h2>Run {0}: {1} of {2}</h2>\n<table class=\"params\">\n",
        run.id, escapeXml(run.kind), escapeXml(run.layoutName));
    const std::pair<const char*, std::string> rows[] { { "status", run.status }, { "trace", run.traceSource },
        { "layout", run.layoutName }, { "layout spec", run.layout }, { "allocator", run.allocator },
        { "tool version", run.toolVersion }, { "started (UTC)", run.startedAt }, { "finished (UTC)", run.finishedAt },
        { "error", run.error } };
    for (const auto& [name, value] : rows)
        if (!value.empty())
            html += "<tr><th>" + std::string(name) + "</th>" + cell(value) + "</tr>\n";
    html += "</table>\n<details><summary>every parameter</summary><pre>"
        + escapeXml(nlohmann::json::parse(run.parametersJson, nullptr, false).dump(2)) + "</pre></details>\n";
    if (r.trace.requests)
        html += fmt::format("<p>{} requests replayed; {} live keys at the end, in {} distinct shapes.{}</p>\n",
            r.trace.requests, r.trace.liveKeys, r.trace.distinctShapes,
            r.cacheGeometry.empty()
                ? std::string()
                : fmt::format(" Cache model {}, {} GETs sampled.", escapeXml(r.cacheGeometry), r.cacheSampledGets));
    if (const auto verdict = sweepVerdict(r); verdict.best && r.points.size() > 1) {
        html += fmt::format("<p class=\"verdict\">Fewest bytes per key at threshold <b>{}</b> ({:.2f} bytes per key, "
                            "{:.3f} lines per GET).",
            verdict.best->threshold, verdict.best->usableBytesPerKey, verdict.best->linesTouchedPerGet);
        for (const auto* p : { verdict.at64, verdict.at128 })
            if (p && p != verdict.best)
                html += fmt::format(" At {}: {:+.2f} bytes per key, {:+.3f} lines per GET.", p->threshold,
                    p->usableBytesPerKey - verdict.best->usableBytesPerKey,
                    p->linesTouchedPerGet - verdict.best->linesTouchedPerGet);
        html += "</p>\n";
    }
    for (const auto& f : figures)
        html
            += "<figure>" + f.svg + "<figcaption><a href=\"" + f.file + "\">" + f.file + "</a></figcaption></figure>\n";
    if (!r.points.empty()) {
        html += "<table class=\"points\">\n<tr><th>threshold</th>";
        const auto columns = metricsOf(kMetricOutput, r.points.front());
        for (const auto* m : columns)
            html += fmt::format("<th title=\"{} ({})\">{}</th>", escapeXml(std::string(m->description)),
                escapeXml(std::string(m->unit)), escapeXml(std::string(m->name)));
        html += "</tr>\n";
        for (const auto& p : r.points) {
            html += fmt::format("<tr><td>{}</td>", p.threshold);
            for (const auto* m : columns) {
                const auto v = m->get(p);
                html += !v ? std::string("<td></td>")
                           : fmt::format("<td>{:.{}f}</td>", *v, m->integral ? 0 : 4); // as --json rounds
            }
            html += "</tr>\n";
        }
        html += "</table>\n";
    }
    html += collectionTable(r);
    html += limitSweepTable(r);
    html += stallTable(stored);
    if (const auto measured = engineSweepPoints(stored.measurements); !measured.empty())
        html += engineSweepTable(measured);
    else if (!stored.measurements.empty()) {
        html += "<h3>Measured</h3>\n<table class=\"points\">\n<tr><th>threshold</th><th>metric</th><th>value</th>"
                "<th>unit</th><th>engine</th></tr>\n";
        for (const auto& m : stored.measurements)
            html += "<tr>" + cell(m.threshold ? std::to_string(*m.threshold) : "-") + cell(m.metric)
                + fmt::format("<td>{:.4f}</td>", m.value) + cell(m.unit) + cell(m.engine + " " + m.engineVersion)
                + "</tr>\n";
        html += "</table>\n";
    }
    return html + "</section>\n";
}

// Runs of several layouts on one trace: each at the setting its engine ships with, as one chart and
// table (layoutlab/report/migration.h); empty when the runs hold fewer than two layouts of the first
// run's trace.
std::string migrationSection(const std::vector<StoredRun>& runs, std::vector<Figure>& figures) {
    if (runs.empty())
        return {};
    MigrationTable table;
    table.trace = std::filesystem::path(runs.front().run.traceSource).filename().string();
    std::set<std::string> seen;
    std::string left;
    for (const auto& s : runs) {
        const std::string key = s.run.layoutName + "|" + s.run.allocator;
        if (s.run.traceId != runs.front().run.traceId || s.result.points.empty() || !seen.insert(key).second)
            continue;
        if (!shippedPoint(s.result)) {
            left += fmt::format(" Run {} ({}) did not evaluate the setting its engine ships with.", s.run.id,
                escapeXml(s.run.layoutName));
            continue;
        }
        table.rows.push_back(migrationRow(s.run.layoutName, s.result));
    }
    std::set<std::string> layouts;
    for (const auto& r : table.rows)
        layouts.insert(r.name);
    if (layouts.size() < 2)
        return {};
    Figure figure { "migration.svg", renderSvgBars(migrationChart(table)) };
    std::string html = fmt::format(
        "<section id=\"migration\">\n<h2>Engines and versions side by side</h2>\n<p>The runs of {}, each layout at "
        "the setting its engine ships with, against {} (the first). Bytes per key include the hash index; "
        "<i>measured</i>: the layout was checked against a real build, <i>predicted</i>: from source.{}</p>\n",
        escapeXml(table.trace), escapeXml(table.rows.front().name), left);
    html += "<figure>" + figure.svg + "<figcaption><a href=\"" + figure.file + "\">" + figure.file
        + "</a></figcaption></figure>\n";
    html += "<table class=\"points\">\n<tr><th>layout</th><th>setting</th><th>allocator</th><th>bytes/key</th>"
            "<th>total</th><th>vs the first</th><th>lines/GET</th><th>loads/GET</th><th>figures</th></tr>\n";
    for (const auto& r : table.rows)
        html += "<tr>" + cell(r.name) + cell(settingText(r)) + cell(r.allocator)
            + fmt::format("<td>{:.2f}</td>", r.bytesPerKey) + cell(bytesText(r.totalBytes(), 2))
            + cell(&r == &table.rows.front() ? std::string("(the base)")
                                             : fmt::format("{} ({:+.1f}%)", bytesText(-table.savingBytes(r), 2),
                                                 -100.0 * savingFraction(table, r)))
            + fmt::format("<td>{:.3f}</td><td>{:.3f}</td>", r.linesPerGet, r.dependentLoadsPerGet)
            + cell(r.measured ? "measured" : "predicted") + "</tr>\n";
    figures.push_back(std::move(figure));
    return html + "</table>\n</section>\n";
}

int runReport(const ReportOptions& o) {
    auto db = o.db.openForReading();
    if (!db)
        return reportError(db.error());
    std::vector<StoredRun> runs;
    for (const auto id : o.runs) {
        auto stored = loadStoredRun(**db, id);
        if (!stored)
            return reportError(stored.error());
        runs.push_back(std::move(*stored));
    }
    std::error_code ec;
    std::filesystem::create_directories(o.output, ec);
    if (ec)
        return reportError(ioError(fmt::format("cannot create the directory: {}", ec.message()), o.output));

    std::vector<Figure> all;
    std::string body;
    if (runs.size() > 1) {
        // The runs side by side: bytes per key of each.
        SvgChart together { "Bytes per key, every run", "threshold (bytes)", "bytes per key", {},
            { { 64, "64" }, { 128, "128" } } };
        for (const auto& s : runs) {
            for (auto& series : seriesOf(s.result, { { "usable_bytes_per_key", "" } }, fmt::format("run {}", s.run.id)))
                together.series.push_back(std::move(series));
            if (auto series
                = measuredSeries(engineSweepPoints(s.measurements), fmt::format("run {} measured", s.run.id)))
                together.series.push_back(std::move(*series));
        }
        Figure f { "runs-bytes-per-key.svg", renderSvg(together) };
        body
            += "<figure>" + f.svg + "<figcaption><a href=\"" + f.file + "\">" + f.file + "</a></figcaption></figure>\n";
        all.push_back(std::move(f));
        body += migrationSection(runs, all);
    }
    for (const auto& s : runs) {
        auto figures = figuresOf(s);
        body += runSection(s, figures);
        for (auto& f : figures)
            all.push_back(std::move(f));
    }
    std::string toc;
    if (body.find("<section id=\"migration\">") != std::string::npos)
        toc += "<li><a href=\"#migration\">Engines and versions side by side</a></li>\n";
    for (const auto& s : runs)
        toc += fmt::format("<li><a href=\"#run-{0}\">Run {0}</a>: {1}, {2} under {3}, {4}</li>\n", s.run.id,
            escapeXml(s.run.kind), escapeXml(s.run.layoutName), escapeXml(s.run.allocator), escapeXml(s.run.status));
    const std::string html = fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>layoutlab report</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1100px; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0; font-size: 13px; }}
th, td {{ border: 1px solid #ccc; padding: 2px 6px; text-align: right; }}
table.params th, table.params td {{ text-align: left; }}
figure {{ display: inline-block; margin: 0.5em; }}
figcaption {{ font-size: 12px; color: #666; }}
section {{ border-top: 2px solid #ddd; margin-top: 2em; }}
.points {{ display: block; overflow-x: auto; }}
</style>
</head>
<body>
<h1>layoutlab report</h1>
<p>Written by layoutlab {} from the results database {}. Every figure below is also a file beside this one.</p>
<ul>
{}</ul>
{}</body>
</html>
)",
        LAYOUTLAB_VERSION, escapeXml(std::filesystem::path(o.db.resolvedPath()).filename().string()), toc, body);
    if (auto ok = writeOutput(html, (std::filesystem::path(o.output) / "index.html").string()); !ok)
        return reportError(ok.error());
    for (const auto& f : all)
        if (auto ok = writeOutput(f.svg, (std::filesystem::path(o.output) / f.file).string()); !ok)
            return reportError(ok.error());
    fmt::print(stderr, "wrote {} ({} runs, {} charts)\n", (std::filesystem::path(o.output) / "index.html").string(),
        runs.size(), all.size());
    return kExitOk;
}

} // namespace

void addReportCommand(CLI::App& app, int& status) {
    auto o = std::make_shared<ReportOptions>();
    auto* cmd = app.add_subcommand("report", "Write a standalone HTML report (SVG charts, tables, parameters) of runs");
    cmd->add_option("runs", o->runs, "Run ids (see `layoutlab db list`)")->required();
    cmd->add_option("-o,--output", o->output, "Directory to write index.html and the charts' .svg files to")
        ->required();
    o->db.addTo(*cmd, false);
    cmd->callback([o, &status] { status = runReport(*o); });
}

} // namespace layoutlab::cli
