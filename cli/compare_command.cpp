// SPDX-License-Identifier: MIT
// `layoutlab compare A B`: two stored runs, point by point. For every threshold either run has, every
// metric of A and of B, B - A and the relative change; by default only the values that differ.

#include "commands.h"
#include "run_store.h"

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
    for (const PointPair& pair : pairByThreshold(a->points, b->points)) {
        nlohmann::json point { { "threshold", pair.threshold }, { "in_a", pair.a != nullptr },
            { "in_b", pair.b != nullptr } };
        if (!pair.a || !pair.b) {
            table += fmt::format("{:>9}  only in run {}\n", pair.threshold, pair.a ? "A" : "B");
            points.push_back(point);
            continue;
        }
        auto metricsB = pointMetrics(*pair.b);
        std::map<std::string, double> byName(metricsB.begin(), metricsB.end());
        nlohmann::json metrics = nlohmann::json::array();
        for (const auto& [name, va] : pointMetrics(*pair.a)) {
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
            table += fmt::format("{:>9}  {:<30} {:>16.{}f} {:>16.{}f} {:>+14.{}f} {:>9}\n", pair.threshold, name, va,
                decimals, vb, decimals, vb - va, decimals,
                change ? fmt::format("{:+.2f}%", 100 * *change) : std::string("-"));
        }
        point["metrics"] = metrics;
        points.push_back(point);
    }

    std::string text;
    if (o.json) {
        nlohmann::json out { { "a", runJson(a->run) }, { "b", runJson(b->run) }, { "differing_parameters", differing },
            { "values_compared", values }, { "values_differing", differ }, { "points", points } };
        text = out.dump(2) + "\n";
    } else {
        for (const auto* r : { &a->run, &b->run })
            text += fmt::format("{}  run {}  {}  {}  {}  {}\n", r == &a->run ? "A" : "B", r->id, r->kind, r->layout,
                r->allocator, r->traceSource);
        std::string names;
        for (const auto& d : differing)
            names += (names.empty() ? "" : ", ") + d;
        text += fmt::format("parameters that differ: {}\n\n", names.empty() ? "none" : names);
        text += table;
        text += fmt::format("\n{} of {} values differ{}\n", differ, values, o.all ? "" : " (--all shows every value)");
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
