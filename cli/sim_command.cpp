// SPDX-License-Identifier: MIT
#include "commands.h"
#include "interrupts.h"
#include "progress_bar.h"
#include "run_store.h"

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/reporter.h"
#include "layoutlab/store/simulation_request.h"
#include "layoutlab/trace/trace_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <optional>

namespace layoutlab::cli {

namespace {
struct SimOptions {
    std::string trace;
    std::string layout;
    std::string alloc;
    std::optional<std::uint32_t> threshold;
    std::string thresholds;
    bool json = false;
    bool csv = false;
    bool classes = false;
    std::string output;
    TraceSourceOptions source;
    DbOptions db;
    bool cache = false;
    std::string cacheGeometry;
};

int runSim(const SimOptions& o, bool sweep) {
    SimulationRequest request;
    if (auto ok = fillTraceAndModels(request, o); !ok)
        return reportError(ok.error());
    request.threshold = sweep ? std::nullopt : o.threshold;
    request.thresholds = sweep ? o.thresholds : std::string();
    request.cache = o.cache;
    request.cacheGeometry = o.cacheGeometry;
    request.kind = sweep ? "sweep" : "sim";
    request.toolVersion = LAYOUTLAB_VERSION;
    auto job = buildSimulationJob(request);
    if (!job)
        return reportError(job.error());
    auto db = o.db.open();
    if (!db)
        return reportError(db.error());
    ProgressBar bar(job->kind);
    auto outcome = runSimulationJob(*job, db->get(), &bar, interruptToken());
    if (!outcome)
        return reportError(outcome.error());
    if (*db)
        fmt::print(stderr, "stored as run {} in {}\n", outcome->runId, o.db.resolvedPath());
    const SimulationResult& result = outcome->result;
    const std::string text = o.json ? renderJson(result)
        : o.csv                     ? renderCsv(result)
                                    : renderTable(result, o.classes || !sweep);
    if (auto ok = writeOutput(text, o.output); !ok)
        return reportError(ok.error());
    if (!outcome->captureNotes.empty())
        fmt::print(stderr, "note: {}", outcome->captureNotes);
    if (const auto unseen = result.trace.unseenKeyRewrites; unseen != 0 && outcome->captureNotes.empty())
        fmt::print(stderr,
            "note: {} APPEND, SETRANGE or INCR requests changed keys the trace never wrote; they were taken as "
            "absent (created by the command), which is wrong if the server held them before the capture began\n",
            unseen);
    if (outcome->rejectedLines)
        fmt::print(stderr,
            "note: {} input lines were rejected and skipped (run `layoutlab import {} --stats` for details)\n",
            outcome->rejectedLines, o.trace);
    return kExitOk;
}

CLI::App* addCommon(CLI::App& app, const char* name, const char* help, SimOptions& o) {
    auto* cmd = app.add_subcommand(name, help);
    addTraceArgument(*cmd, o.trace);
    o.source.addTo(*cmd);
    o.db.addTo(*cmd);
    cmd->add_flag("--cache", o.cache,
        "Run the cache model: L1/L2/LLC misses per GET for the trace's last GETs (geometry from sysfs)");
    cmd->add_option("--cache-geometry", o.cacheGeometry,
        "Cache levels for --cache, SIZE:WAYS from L1 outward, e.g. 32K:8,512K:8,32M:16 (implies --cache)");
    addLayoutOptions(*cmd, o.layout,
        "Layout and parameters, e.g. valkey-9.1, valkey:threshold=128,header=8, redis-7.0, memcached-1.6 "
        "(see `layoutlab layouts`)");
    cmd->add_option("--alloc", o.alloc,
        "Allocator, e.g. jemalloc (as linked), jemalloc:quantum=8,page=4096, memcached, glibc "
        "(default: the layout's engine default; see `layoutlab allocators`)");
    auto* json = cmd->add_flag("--json", o.json, "One JSON object with a `points` array");
    cmd->add_flag("--csv", o.csv, "CSV rows, one per threshold")->excludes(json);
    cmd->add_option("-o,--output", o.output, "Write the output to this file instead of stdout");
    return cmd;
}
} // namespace

void addSimCommands(CLI::App& app, int& status) {
    auto simOptions = std::make_shared<SimOptions>();
    auto* sim = addCommon(app, "sim", "Replay a trace through one layout and allocator", *simOptions);
    sim->add_option("--threshold", simOptions->threshold, "Embed threshold (default: the layout's own)");
    sim->callback([simOptions, &status] { status = runSim(*simOptions, false); });

    auto sweepOptions = std::make_shared<SimOptions>();
    auto* sweep = addCommon(app, "sweep", "Replay a trace once and evaluate many embed thresholds", *sweepOptions);
    sweep->add_option("--thresholds", sweepOptions->thresholds, "FIRST:LAST:STEP (e.g. 32:512:16) or a list (64,128)")
        ->required();
    sweep->add_flag("--classes", sweepOptions->classes, "Also print the size-class breakdown of every threshold");
    sweep->callback([sweepOptions, &status] { status = runSim(*sweepOptions, true); });
}

} // namespace layoutlab::cli
