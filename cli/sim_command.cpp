// SPDX-License-Identifier: MIT
#include "commands.h"
#include "interrupts.h"
#include "progress_bar.h"
#include "run_store.h"

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/collect/memory_latency.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/get_time.h"
#include "layoutlab/report/migration.h"
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
    std::vector<std::string> layouts; // every --layout and --layout-file given, in order
    std::string alloc;
    std::vector<std::string> allocs; // every --alloc given
    std::string keysAt;
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
    std::string startRegions;
    StallOptions stall;
    bool slabs = false;
    bool noThreadCache = false;
    std::uint32_t automoveWindow = SlabModelOptions {}.pageMoverWindow;
    std::uint32_t timeline = 0;
    BudgetOptions budget;
    CollectionLimits limits;
    std::string limitSweep; // sweep --param
};

// The slab model's part of a request, as the options give it.
void fillSlabModel(SimulationRequest& request, const SimOptions& o) {
    request.slabs = o.slabs;
    request.slabThreadCache = !o.noThreadCache;
    request.pageMoverWindow = o.automoveWindow;
    request.timeline = o.timeline;
    o.budget.fill(request);
    request.collectionLimits = o.limits;
    request.limitSweep = o.limitSweep;
}

// Several layouts: each at its shipped setting, one table (layoutlab/report/migration.h); a sweep also
// evaluates each at the thresholds given, beside its shipped one, and names its leanest. Every layout's
// run is stored as a run of its own.
int runMigration(const SimOptions& o, bool sweep) {
    if (o.allocs.size() > 1 && o.allocs.size() != o.layouts.size())
        return reportError(usageError(fmt::format("give one --alloc for all the layouts or one for each ({} layouts, "
                                                  "{} allocators)",
                                          o.layouts.size(), o.allocs.size()),
            "--alloc"));
    MigrationTable table;
    table.trace = o.trace;
    table.sweptThresholds = sweep ? o.thresholds : std::string();
    if (!o.keysAt.empty()) {
        auto keys = parseKeyCount(o.keysAt);
        if (!keys)
            return reportError(keys.error());
        table.keysAt = *keys;
    }
    auto db = o.db.open();
    if (!db)
        return reportError(db.error());
    for (std::size_t i = 0; i < o.layouts.size(); ++i) {
        SimOptions one = o;
        one.layout = o.layouts[i];
        one.alloc = o.allocs.empty() ? std::string() : o.allocs.size() == 1 ? o.allocs[0] : o.allocs[i];
        SimulationRequest request;
        if (auto ok = fillTraceAndModels(request, one); !ok)
            return reportError(ok.error());
        request.cache = o.cache;
        request.cacheGeometry = o.cacheGeometry;
        request.startRegions = o.startRegions;
        fillSlabModel(request, o);
        request.slabsWhereCovered = true; // glibc beside them has no slab model
        request.kind = sweep ? "sweep" : "sim";
        if (sweep) {
            request.thresholds = o.thresholds;
            request.withShippedThreshold
                = SimulationRequest::Shipped::Always; // each layout's row is at its shipped setting
            request.layoutWithoutThresholdRunsOnce = true; // memcached beside them: its one point
        }
        request.toolVersion = LAYOUTLAB_VERSION;
        auto job = buildSimulationJob(request);
        if (!job) {
            Error e = job.error();
            e.message = fmt::format("{}: {}", one.layout, e.message);
            return reportError(e);
        }
        ProgressBar bar(fmt::format("{} {}", request.kind, one.layout));
        auto outcome = runSimulationJob(*job, db->get(), &bar, interruptToken());
        if (!outcome)
            return reportError(outcome.error());
        if (*db)
            fmt::print(stderr, "stored {} as run {} in {}\n", one.layout, outcome->runId, o.db.resolvedPath());
        table.rows.push_back(migrationRow(one.layout, outcome->result));
    }
    return printOutput(o.json ? toJson(table).dump(2) + "\n" : renderMigrationTable(table), o.output);
}

int runSim(const SimOptions& o, bool sweep) {
    if (o.layouts.size() > 1)
        return runMigration(o, sweep);
    if (!o.keysAt.empty())
        return reportError(usageError("--keys-at scales the totals of several layouts side by side", "--keys-at"));
    if (o.stall.latency && !o.cache && o.cacheGeometry.empty())
        return reportError(
            usageError("the stall is predicted from the cache model's misses: add --cache", "--latency"));
    if (o.stall.latency && o.csv)
        return reportError(usageError("--latency adds to the table or the JSON, not the CSV", "--latency"));
    SimulationRequest request;
    if (auto ok = fillTraceAndModels(request, o); !ok)
        return reportError(ok.error());
    if (sweep && o.thresholds.empty() && o.limitSweep.empty())
        return reportError(usageError("a sweep needs --thresholds, --param or both", "--thresholds"));
    request.threshold = sweep ? std::nullopt : o.threshold;
    request.thresholds = sweep ? o.thresholds : std::string();
    request.cache = o.cache;
    request.cacheGeometry = o.cacheGeometry;
    request.startRegions = o.startRegions;
    o.stall.fill(request);
    fillSlabModel(request, o);
    request.kind = sweep ? "sweep" : "sim";
    request.toolVersion = LAYOUTLAB_VERSION;
    auto job = buildSimulationJob(request);
    if (!job)
        return reportError(job.error());
    // Measured before the run, so that the run keeps them (`report` shows the stall from them).
    auto kept = latenciesIfAsked(o.stall.latency, *job);
    if (!kept)
        return reportError(kept.error());
    const std::optional<LoadLatencies> latencies = *kept;
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
    std::string text = o.json ? renderJson(result)
        : o.csv               ? renderCsv(result)
                              : renderTable(result, o.classes || !sweep);
    if (latencies)
        text = o.json ? withStall(text, result, *latencies) : text + renderStallTable(result, *latencies);
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
    cmd->add_option("--start-regions", o.startRegions,
        "With --cache: regions of each size class the server's own objects hold before the trace, SIZE:REGIONS "
        "(e.g. 40:41); keys' allocations start after them (see docs/cache-model.md)");
    addLayoutOptions(*cmd, o.layout,
        "Layout and parameters, e.g. valkey-9.1, valkey:threshold=128,header=8, redis-7.0, memcached-1.6 "
        "(see `layoutlab layouts`); several: each at its shipped setting, side by side (a sweep adds each "
        "one's leanest threshold)",
        &o.layouts);
    cmd->add_option("--alloc", o.alloc,
           "Allocator, e.g. jemalloc (as linked), jemalloc:quantum=8,page=4096, memcached, glibc "
           "(default: the layout's engine default; see `layoutlab allocators`); with several layouts, one for "
           "all or one each")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
        ->each([&o](const std::string& value) { o.allocs.push_back(value); });
    cmd->add_option("--keys-at", o.keysAt,
        "With several layouts: scale each total to this many keys (e.g. 20M), as a store of that size would hold");
    o.stall.addTo(*cmd,
        "With --cache: measure this host's load latencies and predict each point's memory stall per GET, with its "
        "uncertainty");
    cmd->add_flag("--slabs", o.slabs,
        "Model the allocator's memory through the trace: allocated and active bytes at the end and at the peak, "
        "per threshold (jemalloc: what stats.allocated and stats.active, INFO's allocator_allocated and "
        "allocator_active, would say; memcached: slab-chunk bytes and total_malloced, pages per class)");
    cmd->add_flag("--no-thread-cache", o.noThreadCache,
        "With --slabs: allocate straight from the arena, without a thread cache in front (as the reference engine "
        "does)");
    cmd->add_option("--automove-window", o.automoveWindow,
           "With --slabs or --memory-limit on memcached: the page mover's window in seconds of the trace's clock, "
           "as -o slab_automove_window (3 or more; 0: no page moves, as -o slab_automove=0)")
        ->capture_default_str();
    cmd->add_option("--timeline", o.timeline,
        "Sample the live keys and each threshold's allocated and active bytes at N even steps of the trace "
        "(implies --slabs)");
    o.budget.addTo(*cmd);
    addCollectionLimitOptions(*cmd, o.limits);
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
    sweep->add_option("--thresholds", sweepOptions->thresholds, "FIRST:LAST:STEP (e.g. 32:512:16) or a list (64,128)");
    sweep->add_option("--param", sweepOptions->limitSweep,
        "A collection limit at several values in the same pass, NAME=FIRST:LAST:STEP or NAME=V1,V2 (e.g. "
        "hash-max-listpack-entries=64:1024:64; the names are the --*-max-* options')");
    sweep->add_flag("--classes", sweepOptions->classes, "Also print the size-class breakdown of every threshold");
    sweep->callback([sweepOptions, &status] { status = runSim(*sweepOptions, true); });
}

} // namespace layoutlab::cli
