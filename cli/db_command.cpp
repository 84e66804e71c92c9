// SPDX-License-Identifier: MIT
// `layoutlab db`: look into the results database.

#include "commands.h"
#include "run_store.h"

#include "layoutlab/report/reporter.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab::cli {

namespace {

nlohmann::json runJson(const RunRecord& r) {
    return { { "id", r.id }, { "kind", r.kind }, { "trace", r.traceSource }, { "layout", r.layout },
        { "allocator", r.allocator }, { "parameters", nlohmann::json::parse(r.parametersJson, nullptr, false) },
        { "tool_version", r.toolVersion }, { "status", r.status }, { "error", r.error }, { "started_at", r.startedAt },
        { "finished_at", r.finishedAt }, { "points", r.points } };
}

// A SimulationResult rebuilt from the stored run, so the normal reporters print it.
Expected<SimulationResult> storedResult(ResultsDb& db, std::int64_t runId) {
    auto run = db.run(runId);
    if (!run)
        return run.error();
    auto points = db.points(runId);
    if (!points)
        return points.error();
    SimulationResult r;
    r.traceName = run->traceSource;
    r.layoutSpec = run->layout;
    r.allocatorSpec = run->allocator;
    const auto params = nlohmann::json::parse(run->parametersJson, nullptr, false);
    if (params.is_object() && params.contains("threshold_parameter") && params["threshold_parameter"].is_string())
        r.thresholdName = params["threshold_parameter"].get<std::string>();
    r.points = std::move(*points);
    // The replay summary, as the run reported it.
    const auto replay = nlohmann::json::parse(run->replayJson, nullptr, false);
    if (replay.is_object() && replay.contains("replay")) {
        const auto& t = replay["replay"];
        auto u = [&t](const char* k) { return t.contains(k) ? t[k].get<std::uint64_t>() : 0; };
        r.trace.requests = u("requests");
        r.trace.getHits = u("get_hits");
        r.trace.getMisses = u("get_misses");
        r.trace.expiredKeys = u("expired_keys");
        r.trace.distinctKeys = u("distinct_keys");
        r.trace.liveKeys = u("live_keys");
        r.trace.maxLiveKeys = u("max_live_keys");
        r.trace.ttlKeys = u("ttl_keys");
        r.trace.distinctShapes = u("distinct_shapes");
        if (t.contains("requests_by_op"))
            for (int op = 0; op < kOpCount; ++op)
                if (t["requests_by_op"].contains(std::string(opName(static_cast<Op>(op)))))
                    r.trace.requestsByOp[static_cast<std::size_t>(op)]
                        = t["requests_by_op"][std::string(opName(static_cast<Op>(op)))].get<std::uint64_t>();
        const auto& index = replay["index"];
        r.indexBuckets = index.value("buckets", std::uint64_t { 0 });
        r.indexChildBuckets = index.value("child_buckets", 0.0);
        r.indexRehashing = index.value("rehashing", false);
        r.getWeightsFromTrace = replay.value("get_weights", std::string()) == "trace-gets";
        if (replay.contains("cache")) {
            r.cacheGeometry = replay["cache"].value("geometry", std::string());
            r.cacheSampledGets = replay["cache"].value("sampled_gets", std::uint64_t { 0 });
        }
    }
    return r;
}

struct DbCommandOptions {
    DbOptions db;
    bool json = false;
    bool csv = false;
    bool incomplete = false;
    std::vector<std::int64_t> runs;
    std::string output;
};

int withDb(const DbCommandOptions& o, const std::function<int(ResultsDb&)>& body) {
    auto db = o.db.open();
    if (!db)
        return reportError(db.error());
    return body(**db);
}

} // namespace

void addDbCommands(CLI::App& app, int& status) {
    auto* db = app.add_subcommand("db", "Look into the results database (list, show, export, delete, vacuum)");
    db->require_subcommand(1);

    auto lo = std::make_shared<DbCommandOptions>();
    auto* list = db->add_subcommand("list", "List the stored runs");
    lo->db.addTo(*list, false);
    list->add_flag("--json", lo->json, "JSON output");
    list->callback([lo, &status] {
        status = withDb(*lo, [&](ResultsDb& d) {
            auto runs = d.listRuns();
            if (!runs)
                return reportError(runs.error());
            if (lo->json) {
                auto j = nlohmann::json::array();
                for (const auto& r : *runs)
                    j.push_back(runJson(r));
                fmt::print("{}\n", j.dump(2));
                return kExitOk;
            }
            fmt::print("{:>5} {:<6} {:<9} {:>6} {:<21} {:<66} {}\n", "run", "kind", "status", "points", "started",
                "layout", "trace");
            for (const auto& r : *runs)
                fmt::print("{:>5} {:<6} {:<9} {:>6} {:<21} {:<66} {}\n", r.id, r.kind, r.status, r.points, r.startedAt,
                    r.layout, r.traceSource);
            return kExitOk;
        });
    });

    auto to = std::make_shared<DbCommandOptions>();
    auto* traces = db->add_subcommand("traces", "List the traces the database knows");
    to->db.addTo(*traces, false);
    traces->callback([to, &status] {
        status = withDb(*to, [&](ResultsDb& d) {
            auto all = d.listTraces();
            if (!all)
                return reportError(all.error());
            fmt::print("{:>5} {:<12} {:<16} {:>12} {:>12} {:>12} {}\n", "trace", "format", "content hash", "bytes",
                "requests", "keys", "source");
            for (const auto& t : *all)
                fmt::print("{:>5} {:<12} {:<16} {:>12} {:>12} {:>12} {}\n", t.id, t.format, t.contentHash, t.sizeBytes,
                    t.requests, t.distinctKeys, t.source);
            return kExitOk;
        });
    });

    auto so = std::make_shared<DbCommandOptions>();
    auto* show = db->add_subcommand("show", "Show one stored run");
    so->db.addTo(*show, false);
    show->add_option("run", so->runs, "Run id")->required()->expected(1);
    show->add_flag("--json", so->json, "JSON output");
    show->callback([so, &status] {
        status = withDb(*so, [&](ResultsDb& d) {
            const auto id = so->runs.front();
            auto run = d.run(id);
            if (!run)
                return reportError(run.error());
            auto result = storedResult(d, id);
            if (!result)
                return reportError(result.error());
            if (so->json) {
                auto j = runJson(*run);
                j["result"] = toJson(*result);
                fmt::print("{}\n", j.dump(2));
                return kExitOk;
            }
            fmt::print("run {} ({}, {}), started {}, finished {}\n{}", run->id, run->kind, run->status, run->startedAt,
                run->finishedAt.empty() ? "-" : run->finishedAt,
                run->error.empty() ? std::string() : "error: " + run->error + "\n");
            fmt::print("{}", renderTable(*result, run->kind == "sim"));
            return kExitOk;
        });
    });

    auto eo = std::make_shared<DbCommandOptions>();
    auto* exp = db->add_subcommand("export", "Export stored runs' points as CSV or JSON");
    eo->db.addTo(*exp, false);
    exp->add_option("runs", eo->runs, "Run ids")->required();
    auto* json = exp->add_flag("--json", eo->json, "One JSON array of runs with their points");
    exp->add_flag("--csv", eo->csv, "CSV rows (a run column first)")->excludes(json);
    exp->add_option("-o,--output", eo->output, "Write to this file instead of stdout");
    exp->callback([eo, &status] {
        status = withDb(*eo, [&](ResultsDb& d) {
            std::string text;
            auto array = nlohmann::json::array();
            for (const auto id : eo->runs) {
                auto run = d.run(id);
                if (!run)
                    return reportError(run.error());
                auto result = storedResult(d, id);
                if (!result)
                    return reportError(result.error());
                if (eo->json) {
                    auto j = runJson(*run);
                    j["result"] = toJson(*result);
                    array.push_back(std::move(j));
                } else {
                    const auto csv = renderCsv(*result);
                    const auto header = csv.substr(0, csv.find('\n') + 1);
                    if (text.empty())
                        text = "run," + header;
                    std::size_t at = header.size();
                    while (at < csv.size()) {
                        const auto end = csv.find('\n', at);
                        text += fmt::format("{},{}\n", id, csv.substr(at, end - at));
                        at = end + 1;
                    }
                }
            }
            if (eo->json)
                text = array.dump(2) + "\n";
            if (auto ok = writeOutput(text, eo->output); !ok)
                return reportError(ok.error());
            return kExitOk;
        });
    });

    auto del = std::make_shared<DbCommandOptions>();
    auto* remove = db->add_subcommand("delete", "Delete stored runs (with their points)");
    del->db.addTo(*remove, false);
    remove->add_option("runs", del->runs, "Run ids");
    remove->add_flag("--incomplete", del->incomplete, "Delete every run that is not complete (interrupted or failed)");
    remove->callback([del, &status] {
        status = withDb(*del, [&](ResultsDb& d) {
            if (del->runs.empty() && !del->incomplete)
                return reportError(usageError("name the runs to delete, or --incomplete", "runs"));
            auto n = del->incomplete ? d.deleteIncompleteRuns() : d.deleteRuns(del->runs);
            if (!n)
                return reportError(n.error());
            fmt::print("deleted {} run{}\n", *n, *n == 1 ? "" : "s");
            return kExitOk;
        });
    });

    auto vo = std::make_shared<DbCommandOptions>();
    auto* vacuum = db->add_subcommand("vacuum", "Compact the database file");
    vo->db.addTo(*vacuum, false);
    vacuum->callback([vo, &status] {
        status = withDb(*vo, [&](ResultsDb& d) {
            if (auto ok = d.vacuum(); !ok)
                return reportError(ok.error());
            return kExitOk;
        });
    });

    auto co = std::make_shared<DbCommandOptions>();
    auto* check = db->add_subcommand("check", "Run SQLite's integrity check");
    co->db.addTo(*check, false);
    check->callback([co, &status] {
        status = withDb(*co, [&](ResultsDb& d) {
            auto result = d.integrityCheck();
            if (!result)
                return reportError(result.error());
            fmt::print("{}\n", *result);
            return *result == "ok" ? kExitOk : kExitData;
        });
    });
}

} // namespace layoutlab::cli
