// SPDX-License-Identifier: MIT
// `layoutlab db`: look into the results database.

#include "commands.h"
#include "run_store.h"

#include "layoutlab/printable.h"
#include "layoutlab/report/reporter.h"
#include "layoutlab/store/measured_runs.h"
#include "layoutlab/store/stored_run.h"

#include "layoutlab/layout/layout_registry.h"
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <filesystem>

namespace layoutlab::cli {

namespace {

// The measurements of a run, one row per threshold and metric.
std::string renderMeasurements(const std::vector<Measurement>& measurements) {
    std::string out
        = fmt::format("{:>9}  {:<20} {:>16}  {:<10} {}\n", "threshold", "metric", "value", "unit", "engine");
    for (const auto& m : measurements)
        out += fmt::format("{:>9}  {:<20} {:>16.3f}  {:<10} {} {}\n", m.threshold ? std::to_string(*m.threshold) : "-",
            m.metric, m.value, m.unit, m.engine, m.engineVersion);
    return out;
}

nlohmann::json storedRunJson(const StoredRun& stored) {
    auto j = runJson(stored.run);
    j["result"] = toJson(stored.result);
    if (!stored.measurements.empty()) {
        auto rows = nlohmann::json::array();
        for (const auto& m : stored.measurements)
            rows.push_back(toJson(m));
        j["measurements"] = rows;
    }
    return j;
}

struct DbCommandOptions {
    DbOptions db;
    bool readOnly = false; // a reading command: the database is opened read-only
    bool json = false;
    bool csv = false;
    bool incomplete = false;
    std::vector<std::int64_t> runs;
    std::string output;
};

int withDb(const DbCommandOptions& o, const std::function<int(ResultsDb&)>& body) {
    auto db = o.readOnly ? o.db.openForReading() : o.db.open();
    if (!db)
        return reportError(db.error());
    return body(**db);
}

struct DbSubcommand {
    CLI::App* command;
    std::shared_ptr<DbCommandOptions> options;
};

// `db NAME` with its --db option.
DbSubcommand addDbSubcommand(CLI::App& db, const char* name, const char* help, bool readOnly = false) {
    DbSubcommand sub { db.add_subcommand(name, help), std::make_shared<DbCommandOptions>() };
    sub.options->readOnly = readOnly;
    sub.options->db.addTo(*sub.command, false);
    return sub;
}

// Runs `body` with the open database once the arguments are parsed.
void onDb(const DbSubcommand& sub, int& status, std::function<int(const DbCommandOptions&, ResultsDb&)> body) {
    sub.command->callback([options = sub.options, &status, body = std::move(body)] {
        status = withDb(*options, [&](ResultsDb& d) { return body(*options, d); });
    });
}

struct MergeOptions {
    std::vector<std::string> inputs;
    std::string output;
};

int listRuns(const DbCommandOptions& o, ResultsDb& d) {
    auto runs = d.listRuns();
    if (!runs)
        return reportError(runs.error());
    if (o.json) {
        auto j = nlohmann::json::array();
        for (const auto& r : *runs)
            j.push_back(runJson(r));
        fmt::print("{}\n", j.dump(2));
        return kExitOk;
    }
    // The layout by its preset name (valkey-8.1, valkey-8.1:threshold=128): the full spec is in --json and
    // `db show`.
    fmt::print("{:>5} {:<12} {:<11} {:>6} {:<21} {:<36} {}\n", "run", "kind", "status", "points", "started", "layout",
        "trace");
    for (const auto& r : *runs)
        fmt::print("{:>5} {:<12} {:<11} {:>6} {:<21} {:<36} {}\n", r.id, r.kind, displayStatus(r), r.points,
            r.startedAt, printable(r.layoutName), printable(r.traceSource));
    return kExitOk;
}

int listTraces(const DbCommandOptions&, ResultsDb& d) {
    auto all = d.listTraces();
    if (!all)
        return reportError(all.error());
    fmt::print("{:>5} {:<12} {:<16} {:>12} {:>12} {:>12} {}\n", "trace", "format", "content hash", "bytes", "requests",
        "keys", "source");
    for (const auto& t : *all)
        fmt::print("{:>5} {:<12} {:<16} {:>12} {:>12} {:>12} {}\n", t.id, t.format, t.contentHash, t.sizeBytes,
            t.requests, t.distinctKeys, t.source);
    return kExitOk;
}

int showRun(const DbCommandOptions& o, ResultsDb& d) {
    auto stored = loadStoredRun(d, o.runs.front());
    if (!stored)
        return reportError(stored.error());
    if (o.json) {
        fmt::print("{}\n", storedRunJson(*stored).dump(2));
        return kExitOk;
    }
    const auto& run = stored->run;
    fmt::print("run {} ({}, {}), started {}, finished {}\n{}", run.id, run.kind, run.status, run.startedAt,
        run.finishedAt.empty() ? "-" : run.finishedAt,
        run.error.empty() ? std::string() : "error: " + run.error + "\n");
    if (!stored->measurements.empty()) {
        // A measured run (the reference engine of a profile): its figures; the prediction is its own run.
        fmt::print(
            "layout     {}\nallocator  {}\n\n{}", run.layout, run.allocator, renderMeasurements(stored->measurements));
        return kExitOk;
    }
    fmt::print("{}", renderTable(stored->result, run.kind == "sim"));
    return kExitOk;
}

int exportRuns(const DbCommandOptions& o, ResultsDb& d) {
    std::string text;
    auto array = nlohmann::json::array();
    for (const auto id : o.runs) {
        auto stored = loadStoredRun(d, id);
        if (!stored)
            return reportError(stored.error());
        if (o.json) {
            array.push_back(storedRunJson(*stored));
        } else {
            const auto csv = renderCsv(stored->result);
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
    if (o.json)
        text = array.dump(2) + "\n";
    return printOutput(text, o.output);
}

int deleteRuns(const DbCommandOptions& o, ResultsDb& d) {
    if (o.runs.empty() && !o.incomplete)
        return reportError(usageError("name the runs to delete, or --incomplete", "runs"));
    if (o.incomplete) {
        auto done = d.deleteIncompleteRuns();
        if (!done)
            return reportError(done.error());
        fmt::print("deleted {} run{}", done->deleted, done->deleted == 1 ? "" : "s");
        if (done->liveLeft)
            fmt::print("; left {} running run{} alone (their processes are still at work)", done->liveLeft,
                done->liveLeft == 1 ? "" : "s");
        fmt::print("\n");
        return kExitOk;
    }
    auto n = d.deleteRuns(o.runs);
    if (!n)
        return reportError(n.error());
    fmt::print("deleted {} run{}\n", *n, *n == 1 ? "" : "s");
    return kExitOk;
}

int vacuumDb(const DbCommandOptions&, ResultsDb& d) {
    if (auto ok = d.vacuum(); !ok)
        return reportError(ok.error());
    return kExitOk;
}

int checkDb(const DbCommandOptions&, ResultsDb& d) {
    auto result = d.integrityCheck();
    if (!result)
        return reportError(result.error());
    fmt::print("{}\n", *result);
    return *result == "ok" ? kExitOk : kExitData;
}

int mergeDatabases(const MergeOptions& m) {
    std::error_code ec;
    for (const auto& input : m.inputs)
        if (std::filesystem::exists(m.output) && std::filesystem::equivalent(input, m.output, ec))
            return reportError(usageError("the output is also an input: " + input, "-o"));
    for (const auto& input : m.inputs)
        if (!std::filesystem::exists(input)) {
            Error e = ioError("no such database");
            e.file = input;
            return reportError(e);
        }
    auto out = ResultsDb::open(m.output);
    if (!out)
        return reportError(out.error());
    for (const auto& input : m.inputs) {
        auto copied = (*out)->mergeFrom(input);
        if (!copied)
            return reportError(copied.error());
        fmt::print(stderr, "merged {} runs from {}\n", *copied, input);
    }
    return kExitOk;
}

} // namespace

void addDbCommands(CLI::App& app, int& status) {
    auto* db = app.add_subcommand("db", "Look into the results database (list, show, export, delete, merge, vacuum)");
    db->require_subcommand(1);

    auto list = addDbSubcommand(*db, "list", "List the stored runs", true);
    list.command->add_flag("--json", list.options->json, "JSON output");
    onDb(list, status, listRuns);

    auto traces = addDbSubcommand(*db, "traces", "List the traces the database knows", true);
    onDb(traces, status, listTraces);

    auto show = addDbSubcommand(*db, "show", "Show one stored run", true);
    show.command->add_option("run", show.options->runs, "Run id")->required()->expected(1);
    show.command->add_flag("--json", show.options->json, "JSON output");
    onDb(show, status, showRun);

    auto exp = addDbSubcommand(*db, "export", "Export stored runs' points as CSV or JSON", true);
    exp.command->add_option("runs", exp.options->runs, "Run ids")->required();
    auto* json = exp.command->add_flag("--json", exp.options->json, "One JSON array of runs with their points");
    exp.command->add_flag("--csv", exp.options->csv, "CSV rows (a run column first)")->excludes(json);
    exp.command->add_option("-o,--output", exp.options->output, "Write to this file instead of stdout");
    onDb(exp, status, exportRuns);

    auto remove = addDbSubcommand(*db, "delete", "Delete stored runs (with their points)");
    remove.command->add_option("runs", remove.options->runs, "Run ids");
    remove.command->add_flag(
        "--incomplete", remove.options->incomplete, "Delete every run that is not complete (interrupted or failed)");
    onDb(remove, status, deleteRuns);

    // merge: its own options (several inputs, one output), so not through addDbSubcommand.
    auto merge = std::make_shared<MergeOptions>();
    auto* mergeCommand = db->add_subcommand(
        "merge", "Combine databases (e.g. the shards of a batch) into one: layoutlab db merge A.db B.db -o ALL.db");
    mergeCommand->add_option("databases", merge->inputs, "The databases to copy runs from")->required();
    mergeCommand->add_option("-o,--output", merge->output, "The database to merge into (created if missing)")
        ->required();
    mergeCommand->callback([merge, &status] { status = mergeDatabases(*merge); });

    auto vacuum = addDbSubcommand(*db, "vacuum", "Compact the database file");
    onDb(vacuum, status, vacuumDb);

    auto check = addDbSubcommand(*db, "check", "Run SQLite's integrity check", true);
    onDb(check, status, checkDb);
}

} // namespace layoutlab::cli
