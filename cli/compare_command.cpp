// SPDX-License-Identifier: MIT
// `layoutlab compare A B`: two stored runs, point by point. For every threshold either run has, every
// metric of A and of B, B - A and the relative change; by default only the values that differ.

#include "commands.h"
#include "run_store.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/migration.h"
#include "layoutlab/store/run_parameters.h"

#include "layoutlab/report/compare.h"
#include "layoutlab/report/reporter.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

namespace layoutlab::cli {

namespace {

struct CompareOptions {
    std::int64_t runA = 0;
    std::int64_t runB = 0;
    bool all = false;
    bool json = false;
    std::string output;
    DbOptions db;
};

struct Loaded {
    RunRecord run;
    std::vector<ThresholdPoint> points;
};

Expected<Loaded> load(ResultsDb& db, std::int64_t id) {
    auto run = db.run(id);
    if (!run)
        return run.error();
    if (run->points == 0)
        return usageError(
            fmt::format("run {} ({}, {}) has no threshold points to compare", id, run->kind, run->status), "run");
    auto points = db.points(id);
    if (!points)
        return points.error();
    return Loaded { *run, std::move(*points) };
}

// The run parameters a reader compares first; the ones that differ are named.
std::vector<std::string> differingParameters(const RunRecord& a, const RunRecord& b) {
    std::vector<std::string> out;
    const std::pair<const char*, bool> fields[] { { "trace", a.traceSource != b.traceSource },
        { "kind", a.kind != b.kind }, { "layout", a.layout != b.layout }, { "allocator", a.allocator != b.allocator },
        { "tool_version", a.toolVersion != b.toolVersion } };
    for (const auto& [name, differs] : fields)
        if (differs)
            out.push_back(name);
    const auto typedA = RunParameters::fromJson(a.parametersJson);
    const auto typedB = RunParameters::fromJson(b.parametersJson);
    if (typedA && typedB) {
        const auto pa = typedA->toJson();
        const auto pb = typedB->toJson();
        std::map<std::string, int> keys;
        for (const auto& [k, v] : pa.items())
            keys[k] |= 1;
        for (const auto& [k, v] : pb.items())
            keys[k] |= 2;
        for (const auto& [k, where] : keys)
            if (k != "trace" && k != "layout" && k != "allocator" && (where != 3 || pa[k] != pb[k]))
                out.push_back(k);
    }
    return out;
}

const ThresholdPoint* shippedPoint(const Loaded& loaded) {
    return layoutlab::shippedPoint(loaded.run.layout, loaded.points);
}

// The line above the point-by-point table: which thresholds both runs have.
std::string pointsSharedText(const std::vector<ThresholdPoint>& a, const std::vector<ThresholdPoint>& b) {
    std::size_t shared = 0;
    for (const PointPair& pair : pairByThreshold(a, b))
        shared += pair.a && pair.b ? 1 : 0;
    return shared ? fmt::format("at the {} thresholds both runs evaluated:\n", shared)
                  : std::string("no threshold was evaluated by both runs\n");
}

bool same(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

int runCompare(const CompareOptions& o) {
    auto db = o.db.openForReading();
    if (!db)
        return reportError(db.error());
    auto a = load(**db, o.runA);
    if (!a)
        return reportError(a.error());
    auto b = load(**db, o.runB);
    if (!b)
        return reportError(b.error());
    const auto differing = differingParameters(a->run, b->run);

    nlohmann::json points = nlohmann::json::array();
    std::string table
        = fmt::format("{:>9}  {:<30} {:>16} {:>16} {:>14} {:>9}\n", "threshold", "metric", "A", "B", "B - A", "change");
    std::size_t values = 0, differ = 0;
    // Every metric both points have: counted, kept in `metrics`, and listed when it differs (or --all).
    auto comparePoints = [&](const std::string& label, const ThresholdPoint& pa, const ThresholdPoint& pb,
                             std::string& lines) {
        auto metricsB = pointMetrics(pb);
        std::map<std::string, double> byName(metricsB.begin(), metricsB.end());
        nlohmann::json metrics = nlohmann::json::array();
        for (const auto& [name, va] : pointMetrics(pa)) {
            const auto it = byName.find(name);
            if (it == byName.end())
                continue; // e.g. cache-model misses in one run only
            const double vb = it->second;
            ++values;
            const bool equal = same(va, vb);
            differ += equal ? 0 : 1;
            const auto change = relativeChange(va, vb);
            metrics.push_back({ { "name", name }, { "a", va }, { "b", vb }, { "difference", vb - va },
                { "change", change ? nlohmann::json(*change) : nlohmann::json(nullptr) } });
            if (equal && !o.all)
                continue;
            const auto* metric = findPointMetric(name);
            const int decimals = metric && metric->integral ? 0 : 4; // counts stay whole
            lines += fmt::format("{:>9}  {:<30} {:>16.{}f} {:>16.{}f} {:>+14.{}f} {:>9}\n", label, name, va, decimals,
                vb, decimals, vb - va, decimals, change ? fmt::format("{:+.2f}%", 100 * *change) : std::string("-"));
        }
        return metrics;
    };
    // Runs of different layouts meet first at the settings their engines ship with.
    nlohmann::json shipped;
    std::string shippedTable;
    if (a->run.layout != b->run.layout) {
        const auto *pa = shippedPoint(*a), *pb = shippedPoint(*b);
        if (pa && pb) {
            shipped = { { "a_threshold", pa->threshold }, { "b_threshold", pb->threshold },
                { "metrics",
                    comparePoints(fmt::format("{}|{}", pa->threshold, pb->threshold), *pa, *pb, shippedTable) } };
        }
    }
    std::size_t onlyInOne = 0;
    for (const PointPair& pair : pairByThreshold(a->points, b->points)) {
        nlohmann::json point { { "threshold", pair.threshold }, { "in_a", pair.a != nullptr },
            { "in_b", pair.b != nullptr } };
        if (!pair.a || !pair.b) {
            ++onlyInOne; // not a difference: the runs did not both evaluate this threshold
            table += fmt::format("{:>9}  only in run {}\n", pair.threshold, pair.a ? "A" : "B");
            points.push_back(point);
            continue;
        }
        point["metrics"] = comparePoints(std::to_string(pair.threshold), *pair.a, *pair.b, table);
        points.push_back(point);
    }

    std::string text;
    if (o.json) {
        nlohmann::json out { { "a", runJson(a->run) }, { "b", runJson(b->run) }, { "differing_parameters", differing },
            { "values_compared", values }, { "values_differing", differ }, { "points", points },
            { "points_in_one_run_only", onlyInOne } };
        if (!shipped.is_null())
            out["shipped"] = shipped;
        text = out.dump(2) + "\n";
    } else {
        for (const auto* r : { &a->run, &b->run })
            text += fmt::format("{}  run {}  {}  {}  {}  {}\n", r == &a->run ? "A" : "B", r->id, r->kind, r->layoutName,
                r->allocator, r->traceSource);
        std::string names;
        for (const auto& d : differing)
            names += (names.empty() ? "" : ", ") + d;
        text += fmt::format("parameters that differ: {}\n\n", names.empty() ? "none" : names);
        if (!shipped.is_null())
            text += fmt::format("at the settings their engines ship with (A at {}, B at {}):\n{}{}\n",
                shipped["a_threshold"].get<std::uint32_t>(), shipped["b_threshold"].get<std::uint32_t>(),
                table.substr(0, table.find('\n') + 1), shippedTable);
        text += pointsSharedText(a->points, b->points);
        if (onlyInOne < points.size())
            text += table;
        text += fmt::format("\n{} of {} values differ{}", differ, values, o.all ? "" : " (--all shows every value)");
        text += onlyInOne ? fmt::format("; {} thresholds are in one run only (not differences)\n", onlyInOne) : "\n";
    }
    return printOutput(text, o.output);
}

} // namespace

void addCompareCommand(CLI::App& app, int& status) {
    auto o = std::make_shared<CompareOptions>();
    auto* cmd = app.add_subcommand("compare", "Two stored runs point by point: every metric of A and B, B - A, change");
    cmd->add_option("A", o->runA, "The first run's id (see `layoutlab db list`)")->required();
    cmd->add_option("B", o->runB, "The second run's id")->required();
    cmd->add_flag("--all", o->all, "Show every value, not only those that differ");
    addJsonAndOutput(
        *cmd, o->json, o->output, "One JSON object: both runs, the differing parameters, every metric per point");
    o->db.addTo(*cmd, false);
    cmd->callback([o, &status] { status = runCompare(*o); });
}

} // namespace layoutlab::cli
