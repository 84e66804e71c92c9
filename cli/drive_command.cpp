// SPDX-License-Identifier: MIT
// `layoutlab drive`: the drive job (layoutlab/jobs/drive_job.h) from the command line: load a trace into
// a real Valkey, Redis or memcached server (started here, or attached with --connect) and put the
// server's memory per key beside the simulator's prediction for the same trace.

#include "measured_job.h"

#include "layoutlab/alloc/memcached_page_model.h"
#include "layoutlab/collect/memory_latency.h"
#include "layoutlab/jobs/drive_job.h"
#include "layoutlab/jobs/engine_sweep_job.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>

namespace layoutlab::cli {

namespace {

// An engine sweep's settings: any of them makes `drive` measure several servers.
struct SweepOptions {
    std::string source;
    std::vector<std::uint32_t> thresholds;
    std::string builds;
    std::string slabSettings;
    bool unoptimized = false;
    bool quickBuild = false;

    bool asked() const { return !thresholds.empty() || !builds.empty() || !slabSettings.empty() || !source.empty(); }
};

struct DriveOptions {
    DriveRequest request;
    CacheSettingsOptions budget { "allkeys-lru" }; // a cache drive's (DriveRequest::budget)
    SweepOptions sweep;
    std::string engine;
    bool json = false;
    bool latency = false; // predict the GET throughput change between settings
    std::string cacheGeometry;
    std::optional<std::uint32_t> automoveWindow; // memcached's -o slab_automove_window for the started server
    std::string output;
    TraceSourceOptions source;
    DbOptions db;
};

int runEngineSweep(DriveOptions& o) {
    EngineSweepRequest sweep;
    sweep.drive = o.request;
    sweep.layout = std::exchange(sweep.drive.layout, {});
    sweep.source = o.sweep.source;
    sweep.thresholds = o.sweep.thresholds;
    sweep.buildSpeed = o.sweep.quickBuild ? EngineBuildSpeed::Quick
        : o.sweep.unoptimized             ? EngineBuildSpeed::Unoptimized
                                          : EngineBuildSpeed::Release;
    if (!o.sweep.builds.empty()) {
        auto builds = parseEngineBuilds(o.sweep.builds);
        if (!builds)
            return reportError(builds.error());
        sweep.builds = std::move(*builds);
    }
    if (!o.sweep.slabSettings.empty()) {
        auto settings = parseSlabSettings(o.sweep.slabSettings);
        if (!settings)
            return reportError(settings.error());
        sweep.serverSettings = std::move(*settings);
    }
    if (o.latency) {
        if (sweep.drive.engine == Engine::Memcached)
            return reportError(usageError("--latency predicts Valkey builds' GET throughput from the cache model; "
                                          "memcached settings move items between slab classes, not GET paths",
                "--latency"));
        auto geometry = o.cacheGeometry.empty() ? Expected<CacheGeometry>(CacheGeometry::detect())
                                                : CacheGeometry::parse(o.cacheGeometry);
        if (!geometry)
            return reportError(geometry.error());
        sweep.drive.cache = *geometry;
        fmt::print(stderr, "measuring this host's load latencies (pointer chase, a few seconds)\n");
        auto latencies = measureLoadLatencies(*geometry, interruptToken());
        if (!latencies)
            return reportError(latencies.error());
        sweep.latencies = *latencies;
    }
    if (auto ok = checkEngineSweepRequest(sweep); !ok)
        return reportError(ok.error());
    return runMeasuredJob(sweep, o, "engine sweep", runEngineSweepJob, renderEngineSweepTable);
}

int runDrive(DriveOptions o) {
    const auto engine = parseEngine(o.engine);
    if (!engine)
        return reportError(
            usageError(fmt::format("--engine must be valkey, redis or memcached, got '{}'", o.engine), "--engine"));
    auto importOptions = o.source.toImportOptions();
    if (!importOptions)
        return reportError(importOptions.error());
    DriveRequest& request = o.request;
    request.engine = *engine;
    request.importOptions = *importOptions;
    request.toolVersion = LAYOUTLAB_VERSION;
    request.notice = [](const std::string& text) { fmt::print(stderr, "{}\n", text); };
    const bool policyGiven = o.budget.policy != "allkeys-lru" || o.budget.samples != 5 || o.budget.lfuLogFactor != 10
        || o.budget.lfuDecayTime != 1;
    if (policyGiven && (o.budget.maxmemory.empty() || *engine == Engine::Memcached))
        return reportError(usageError(*engine == Engine::Memcached
                ? "memcached evicts each slab class's own LRU: it takes no --policy or policy settings"
                : "--policy and its settings are a cache drive's: give --maxmemory",
            "--policy"));
    if (!o.budget.memoryLimit.empty()) {
        if (*engine != Engine::Memcached)
            return reportError(usageError(
                "--memory-limit is memcached's -m; Valkey and Redis take --maxmemory and --policy", "--memory-limit"));
        if (o.sweep.asked() || o.latency)
            return reportError(usageError("a cache drive (--memory-limit) measures one server: no engine sweep or "
                                          "--latency with it",
                "--memory-limit"));
        auto budget = makeEvictionOptions(o.budget.memoryLimit, "noeviction", 5, 10, 1);
        if (!budget)
            return reportError(budget.error());
        request.budget = std::move(*budget);
    }
    if (!o.budget.maxmemory.empty()) {
        if (*engine == Engine::Memcached)
            return reportError(usageError("--maxmemory is Valkey's and Redis's budget: give memcached's -m as "
                                          "--memory-limit (it evicts by its own LRU, no policy to choose)",
                "--maxmemory"));
        if (o.sweep.asked() || o.latency)
            return reportError(usageError("a cache drive (--maxmemory) measures one server: no engine sweep or "
                                          "--latency with it",
                "--maxmemory"));
        auto budget = makeEvictionOptions(
            o.budget.maxmemory, o.budget.policy, o.budget.samples, o.budget.lfuLogFactor, o.budget.lfuDecayTime);
        if (!budget)
            return reportError(budget.error());
        if (!serverHasPolicy(budget->policy))
            return reportError(usageError(fmt::format("{} is layoutlab's reference policy; {} has none like it (its "
                                                      "policies: the others of {})",
                                              evictionPolicyName(budget->policy), o.engine, evictionPolicyList()),
                "--policy"));
        request.budget = std::move(*budget);
    }
    if (o.automoveWindow) {
        if (*engine != Engine::Memcached || !request.connect.empty())
            return reportError(usageError("--automove-window starts memcached with that page mover window: give "
                                          "--engine memcached, without --connect (a running server's own settings "
                                          "are read)",
                "--automove-window"));
        if (auto ok = checkPageMoverWindow(*o.automoveWindow); !ok)
            return reportError(ok.error());
        request.serverArgs.insert(request.serverArgs.end(),
            { "-o",
                *o.automoveWindow == 0 ? std::string("slab_automove=0")
                                       : fmt::format("slab_automove_window={}", *o.automoveWindow) });
    }
    if (o.sweep.asked())
        return runEngineSweep(o);
    if (o.latency)
        return reportError(usageError("--latency predicts the GET throughput change between settings: give an engine "
                                      "sweep (--source with --at-thresholds, or --builds)",
            "--latency"));
    if (auto ok = checkDriveRequest(request); !ok)
        return reportError(ok.error());
    return runMeasuredJob(request, o, "drive", runDriveJob, renderDriveTable);
}

} // namespace

void addDriveCommand(CLI::App& app, int& status) {
    auto o = std::make_shared<DriveOptions>();
    DriveRequest& r = o->request;
    auto* cmd = app.add_subcommand("drive",
        "Load a trace into a real Valkey, Redis or memcached server and put its memory per key beside the "
        "simulator's prediction");
    addTraceArgument(*cmd, r.tracePath);
    cmd->add_option("--engine", o->engine, "valkey, redis or memcached")->required();
    cmd->add_option("--framing", r.framing,
           "memcached: how values are framed before storing: raw, marshal-utf8, marshal-binary, rails-7.1")
        ->capture_default_str();
    cmd->add_option("--layout", r.layout,
        "valkey, redis: predict with this layout (see `layouts`) instead of the one the server is detected to have");
    addCollectionLimitOptions(*cmd, r.collectionLimits);
    cmd->add_flag("--calibrate", r.calibrate,
        "valkey, redis: tell the server's layout from calibration keys even when its version names one");
    cmd->add_flag("--as-captured", r.asCaptured,
        "valkey, redis: send a MONITOR capture's commands as they were captured (each in its database), instead of "
        "the requests its import makes; the prediction is the import's (blocking pops and the connection's own "
        "commands are not sent)");
    cmd->add_option("--server-binary", r.serverBinary,
        "Server to start (default: the engine's binary on PATH), on 127.0.0.1, a free port, persistence off");
    cmd->add_option("--connect", r.connect, "Attach to a running, empty server at HOST:PORT instead of starting one");
    cmd->add_flag("--allow-remote", r.allowRemote, "Allow --connect to a host other than loopback");
    cmd->add_option("--pipeline", r.pipeline, "Commands per pipelined batch in the load phase")->capture_default_str();
    cmd->add_option("--sample-keys", r.sampleKeys, "Keys sampled for OBJECT ENCODING and MEMORY USAGE")
        ->capture_default_str();
    cmd->add_option("--run-requests", r.run.requests,
           "Run phase: GETs to send, the trace's reads in order (0 with no --run-seconds: no run phase)")
        ->capture_default_str();
    cmd->add_option("--run-seconds", r.run.seconds, "Run phase: run for this long instead of a number of GETs");
    cmd->add_option("--expire-wait", r.expireWaitSeconds,
        "After the load, wait this many seconds before measuring, for the trace's TTLs to pass on the server's "
        "clock (valkey, redis: the prediction then replays the trace on the clock the server read, the load's "
        "and the wait's)");
    cmd->add_option("--run-set-fraction", r.run.setFraction,
           "Run phase: this share of the requests are SETs of the key's value size instead of GETs")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--connections", r.run.connections, "Run phase: client connections, one thread each")
        ->capture_default_str();
    cmd->add_option("--run-pipeline", r.run.pipeline, "Run phase: GETs per round trip on each connection")
        ->capture_default_str();
    auto* sweep = cmd->add_option_group("engine sweep",
        "Measure several servers, one per setting, beside the predicted curve (each error shown): Valkey builds "
        "at chosen thresholds, or memcached at several slab settings");
    sweep->add_option("--source", o->sweep.source,
        "valkey: a source archive to build at each of --at-thresholds (once, into the engine cache, through "
        "scripts/build-engine); --layout names the layout it builds (default valkey-8.1)");
    sweep->add_option("--at-thresholds", o->sweep.thresholds, "valkey: thresholds to build --source at, e.g. 32,64,128")
        ->delimiter(',');
    auto* quick = sweep->add_flag("--quick-build", o->sweep.quickBuild,
        "valkey: build at -O1 without link-time optimisation (the same memory layout, in about half the time, "
        "serving about twice as fast as -O0)");
    sweep
        ->add_flag("--unoptimized", o->sweep.unoptimized,
            "valkey: build with -O0 (the same memory layout, in about half the time)")
        ->excludes(quick);
    sweep->add_flag("--latency", o->latency,
        "valkey: measure this host's load latencies and put each build's predicted GET throughput against the first "
        "(from the cache model's misses) beside the measured");
    sweep->add_option("--cache-geometry", o->cacheGeometry,
        "With --latency: cache levels, SIZE:WAYS from L1 outward (default: this machine's)");
    sweep->add_option("--builds", o->sweep.builds,
        "valkey, redis: servers already built, as THRESHOLD=BINARY,... (instead of --source)");
    sweep->add_option("--slab-settings", o->sweep.slabSettings,
        fmt::format("memcached: slab settings to start the server with, as FACTOR:MIN_CHUNK,... (-f and -n), e.g. {}",
            kDefaultSlabSettings));
    auto* cache = cmd->add_option_group("cache drive",
        "Run the server under maxmemory (valkey, redis) or -m (memcached) and send the trace as a look-aside cache's "
        "client does (GET, and a SET of each miss after each --pipeline batch); its hit ratio and evictions beside "
        "the predicted");
    o->budget.addTo(*cache,
        "valkey, redis: the server's maxmemory, as it reads it: 100mb (MiB), 1gb, 100m (10^6 bytes), bytes",
        "memcached: the server's -m, in whole MiB (64mb); values go through --framing");
    cache->add_option("--automove-window", o->automoveWindow,
        "memcached: start the server with this page mover window (-o slab_automove_window, 3 or more; 0: no page "
        "mover); the prediction reads the server's own settings");
    o->source.addTo(*cmd);
    o->db.addTo(*cmd);
    addJsonAndOutput(*cmd, o->json, o->output,
        "One JSON object (measured_bytes_per_key, predicted_bytes_per_key, relative_error, load, samples; a cache "
        "drive: measured_hit_ratio, predicted_hit_ratio, evictions)");
    cmd->callback([o, &status] { status = runDrive(*o); });
}

} // namespace layoutlab::cli
