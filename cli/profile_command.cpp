// SPDX-License-Identifier: MIT
// `layoutlab profile`: the simulator and the reference engine on the same trace, side by side; and
// `layoutlab profile-replay`, the reference replay that cachegrind runs (an internal command).

#include "commands.h"
#include "interrupts.h"
#include "progress_bar.h"
#include "run_store.h"

#include "layoutlab/collect/profiler.h"
#include "layoutlab/layout/layout_file.h"
#include "layoutlab/layout/layout_registry.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>

namespace layoutlab::cli {

namespace {

struct ProfileOptions {
    std::string trace;
    std::string layout;
    std::string alloc = "jemalloc";
    std::string thresholds;
    std::string counters = "auto";
    std::string cacheGeometry;
    std::uint32_t sampleGets = 100000;
    bool json = false;
    std::string output;
    TraceSourceOptions source;
    DbOptions db;
    // profile-replay only
    std::uint32_t threshold = 0;
    std::string phase = "measure";
};

double relativeError(double measured, double predicted) {
    return predicted != 0 ? (measured - predicted) / predicted : 0;
}

nlohmann::json optionalNumber(const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json renderProfileJson(
    const ProfileResult& r, const std::string& trace, std::int64_t predictionRun, std::int64_t measuredRun) {
    nlohmann::json points = nlohmann::json::array();
    const std::string source(counterSourceName(r.counterSource));
    for (const auto& p : r.points) {
        nlohmann::json bins = nlohmann::json::array();
        for (const auto& b : p.arena.bins)
            bins.push_back({ { "region_bytes", b.regionBytes }, { "nregs", b.regionsPerSlab },
                { "slab_bytes", b.slabBytes }, { "curregs", b.currentRegions }, { "curslabs", b.currentSlabs },
                { "utilisation", b.utilisation } });
        const bool haveCounters = r.counterSource != CounterSource::None;
        points.push_back({ { "threshold", p.threshold }, { "keys", p.keys },
            { "predicted_bytes_per_key", p.predictedBytesPerKey }, { "measured_bytes_per_key", p.measuredBytesPerKey },
            { "bytes_relative_error", relativeError(p.measuredBytesPerKey, p.predictedBytesPerKey) },
            { "predicted_usable_bytes", p.predictedUsableBytes },
            { "measured_allocated_bytes", p.measuredAllocatedBytes },
            { "predicted_child_buckets", p.predictedChildBuckets },
            { "measured_child_buckets", p.measuredChildBuckets }, { "lines_touched_per_get", p.linesTouchedPerGet },
            { "dependent_loads_per_get", p.dependentLoadsPerGet },
            { "predicted_misses_per_get",
                p.predictedMissesPerGet.empty() ? nlohmann::json(nullptr)
                                                : nlohmann::json(p.predictedMissesPerGet.front()) },
            { "measured_misses_per_get", haveCounters ? optionalNumber(p.measuredL1MissesPerGet) : nullptr },
            { "predicted_llc_misses_per_get",
                p.predictedMissesPerGet.empty() ? nlohmann::json(nullptr)
                                                : nlohmann::json(p.predictedMissesPerGet.back()) },
            { "measured_llc_misses_per_get", haveCounters ? optionalNumber(p.measuredLlcMissesPerGet) : nullptr },
            { "predicted_misses_per_get_by_level", p.predictedMissesPerGet }, { "counter_source", source },
            { "ns_per_get", p.nsPerGet }, { "measured_gets", p.measuredGets }, { "measured_hits", p.measuredHits },
            { "arena",
                { { "allocated_bytes", p.arena.allocatedBytes }, { "active_bytes", p.arena.activeBytes },
                    { "resident_bytes", p.arena.residentBytes }, { "bins", bins } } } });
    }
    nlohmann::json out { { "trace", trace }, { "layout", r.prediction.layoutSpec },
        { "allocator", r.prediction.allocatorSpec }, { "threshold_parameter", r.prediction.thresholdName },
        { "cache_geometry", r.geometry }, { "counter_source", source }, { "counter_note", r.counterNote },
        { "live_keys", r.liveKeys }, { "sampled_gets", r.prediction.cacheSampledGets }, { "points", points } };
    if (predictionRun)
        out["runs"] = { { "prediction", predictionRun }, { "measured", measuredRun } };
    return out;
}

std::string renderProfileTable(const ProfileResult& r, const std::string& trace) {
    std::string out = fmt::format("profile of {}\n  layout {} on the linked {}; {} live keys; cache {}\n", trace,
        r.prediction.layoutSpec, ReferenceEngine::allocatorVersion(), r.liveKeys, r.geometry);
    const bool haveCounters = r.counterSource != CounterSource::None;
    const std::string note = !r.counterNote.empty() ? r.counterNote
        : r.counterSource == CounterSource::None    ? "--counters none: measured misses are not counted"
                                                    : "";
    out += fmt::format(
        "  misses measured by: {}{}\n\n", counterSourceName(r.counterSource), note.empty() ? "" : " (" + note + ")");
    out += fmt::format(
        "{:>9}  {:>26}  {:>22}  {:>22}  {:>8}\n", "", "bytes per key", "L1 misses per GET", "LLC misses per GET", "");
    out += fmt::format("{:>9}  {:>8} {:>8} {:>8}  {:>10} {:>11}  {:>10} {:>11}  {:>8}\n",
        r.prediction.thresholdName.empty() ? "-" : r.prediction.thresholdName, "model", "jemalloc", "error", "model",
        "measured", "model", "measured", "ns/GET");
    auto measured = [&](const std::optional<double>& v) {
        return haveCounters && v ? fmt::format("{:.3f}", *v) : std::string("-");
    };
    for (const auto& p : r.points) {
        const double l1 = p.predictedMissesPerGet.empty() ? 0 : p.predictedMissesPerGet.front();
        const double llc = p.predictedMissesPerGet.empty() ? 0 : p.predictedMissesPerGet.back();
        out += fmt::format("{:>9}  {:>8.2f} {:>8.2f} {:>7.2f}%  {:>10.3f} {:>11}  {:>10.3f} {:>11}  {:>8.1f}\n",
            p.threshold, p.predictedBytesPerKey, p.measuredBytesPerKey,
            100 * relativeError(p.measuredBytesPerKey, p.predictedBytesPerKey), l1, measured(p.measuredL1MissesPerGet),
            llc, measured(p.measuredLlcMissesPerGet), p.nsPerGet);
    }
    return out;
}

std::vector<Measurement> measurementsOf(const ProfileResult& r, const std::string& jemallocVersion) {
    std::vector<Measurement> out;
    const std::string source(counterSourceName(r.counterSource));
    for (const auto& p : r.points) {
        auto add = [&](const char* metric, double value, const char* unit,
                       nlohmann::json details = nlohmann::json::object()) {
            out.push_back({ p.threshold, "reference", jemallocVersion, metric, value, unit, details.dump() });
        };
        nlohmann::json bins = nlohmann::json::array();
        for (const auto& b : p.arena.bins)
            bins.push_back({ b.regionBytes, b.regionsPerSlab, b.currentRegions, b.currentSlabs });
        add("allocated_bytes", static_cast<double>(p.measuredAllocatedBytes), "bytes",
            { { "bins", bins }, { "bin_columns", { "region_bytes", "nregs", "curregs", "curslabs" } } });
        add("active_bytes", static_cast<double>(p.arena.activeBytes), "bytes");
        add("resident_bytes", static_cast<double>(p.arena.residentBytes), "bytes");
        add("bytes_per_key", p.measuredBytesPerKey, "bytes");
        add("child_buckets", static_cast<double>(p.measuredChildBuckets), "buckets");
        add("ns_per_get", p.nsPerGet, "ns", { { "gets", p.measuredGets }, { "hits", p.measuredHits } });
        const nlohmann::json counter { { "counter_source", source }, { "geometry", r.geometry },
            { "note", r.counterNote } };
        if (p.measuredL1MissesPerGet)
            add("l1_misses_per_get", *p.measuredL1MissesPerGet, "misses/GET", counter);
        if (p.measuredLlcMissesPerGet)
            add("llc_misses_per_get", *p.measuredLlcMissesPerGet, "misses/GET", counter);
    }
    return out;
}

std::string selfExecutable() {
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("layoutlab") : path.string();
}

// The layout as the replay names it from its private directory: a layout file by its absolute path.
std::string replayLayoutSpec(const LayoutModel& layout) {
    const auto file = layoutFilePath(layout.spec());
    return file.empty() ? layout.spec() : layoutFileSpec(std::filesystem::absolute(file).string());
}

int runProfileCommand(const ProfileOptions& o) {
    if (auto ok = requireLayout(o.layout); !ok)
        return reportError(ok.error());
    auto layout = parseLayout(o.layout);
    if (!layout)
        return reportError(layout.error());
    if (const auto policy = (*layout)->indexPolicy(); policy.params != engineIndexParams(policy.kind))
        return reportError(usageError(
            fmt::format("profile's reference engine builds the engines' own hash tables, and {} changes the [index] "
                        "geometry (bucket size, entries, sizing or fill): compare it with `layoutlab sweep` instead",
                o.layout),
            "--layout"));
    if ((*layout)->indexPolicy().kind == IndexKind::MemcachedAssoc)
        return reportError(usageError("profile builds malloc-based stores (Valkey, Redis) in its reference engine; "
                                      "memcached items live in memcached's own slab allocator: measure them with "
                                      "`layoutlab drive`",
            "--layout"));
    auto models = parseLayoutAndAllocator(o.layout, o.alloc);
    if (!models)
        return reportError(models.error());
    auto counters = parseCounterSource(o.counters);
    if (!counters)
        return reportError(counters.error());
    ProfileConfig config;
    config.layout = models->layout;
    config.allocator = models->allocator;
    config.counters = *counters;
    config.sampleGets = o.sampleGets;
    const auto param = models->layout->threshold();
    if (!o.thresholds.empty()) {
        auto list = resolveThresholds(*models->layout, o.thresholds);
        if (!list)
            return reportError(list.error());
        config.thresholds = *list;
    }
    if (!o.cacheGeometry.empty()) {
        auto geometry = CacheGeometry::parse(o.cacheGeometry);
        if (!geometry)
            return reportError(geometry.error());
        config.geometry = *geometry;
    }
    auto importOptions = o.source.toImportOptions();
    if (!importOptions)
        return reportError(importOptions.error());
    config.openTrace = [path = o.trace, options = *importOptions] { return openTrace(path, options); };
    // The replay runs in a private directory: it gets the trace's absolute path.
    config.replayCommand = { selfExecutable(), "profile-replay", std::filesystem::absolute(o.trace).string(),
        "--layout", replayLayoutSpec(*config.layout), "--format", o.source.format, "--on-error", o.source.onError,
        "--key-size", std::to_string(o.source.keyBytes) };

    auto db = o.db.open();
    if (!db)
        return reportError(db.error());
    std::int64_t predictionRun = 0, measuredRun = 0;
    if (*db) {
        const nlohmann::json parameters { { "trace", o.trace }, { "layout", config.layout->spec() },
            { "allocator", config.allocator->spec() }, { "thresholds", config.thresholds }, { "counters", o.counters },
            { "cache_geometry", o.cacheGeometry }, { "sample_gets", o.sampleGets }, { "format", o.source.format },
            { "on_error", o.source.onError }, { "key_size", o.source.keyBytes },
            { "threshold_parameter", param ? param->name : std::string() } };
        auto runs = beginMeasuredRuns(**db, o.trace, *importOptions, "profile", "reference", config.layout->spec(),
            config.allocator->spec(), parameters);
        if (!runs)
            return reportError(runs.error());
        predictionRun = runs->prediction;
        measuredRun = runs->measured;
    }
    ProgressBar bar("profile");
    std::optional<RunHeartbeat> heartbeat;
    if (*db)
        heartbeat.emplace(o.db.resolvedPath(), std::vector<std::int64_t> { predictionRun, measuredRun });
    auto result = runProfile(config, &bar, interruptToken());
    heartbeat.reset();
    if (!result) {
        if (*db && result.error().code == ErrorCode::Cancelled) {
            (void)(*db)->interruptRun(predictionRun);
            (void)(*db)->interruptRun(measuredRun);
            Error stopped = result.error();
            stopped.message = fmt::format("stopped; runs {} and {} marked interrupted", predictionRun, measuredRun);
            return reportError(stopped);
        }
        if (*db) {
            (void)(*db)->failRun(predictionRun, result.error().describe());
            (void)(*db)->failRun(measuredRun, result.error().describe());
        }
        return reportError(result.error());
    }
    if (*db) {
        // Results the database will not take are kept beside it, never dropped.
        auto keep = [&](const Error& why) {
            return reportError(keepUnstoredResults(**db, { predictionRun, measuredRun },
                renderProfileJson(*result, o.trace, predictionRun, measuredRun), why));
        };
        if (auto ok = (*db)->completeRun(predictionRun, result->prediction); !ok)
            return keep(ok.error());
        const nlohmann::json replay { { "live_keys", result->liveKeys },
            { "counter_source", counterSourceName(result->counterSource) }, { "counter_note", result->counterNote },
            { "cache_geometry", result->geometry } };
        if (auto ok = (*db)->completeMeasuredRun(
                measuredRun, measurementsOf(*result, ReferenceEngine::allocatorVersion()), replay.dump());
            !ok)
            return keep(ok.error());
        fmt::print(stderr, "stored as runs {} (prediction) and {} (measured) in {}\n", predictionRun, measuredRun,
            o.db.resolvedPath());
    }
    const std::string text = o.json ? renderProfileJson(*result, o.trace, predictionRun, measuredRun).dump(2) + "\n"
                                    : renderProfileTable(*result, o.trace);
    if (auto ok = writeOutput(text, o.output); !ok)
        return reportError(ok.error());
    return kExitOk;
}

int runProfileReplay(const ProfileOptions& o) {
    auto models = parseLayoutAndAllocator(o.layout, "jemalloc");
    if (!models)
        return reportError(models.error());
    auto importOptions = o.source.toImportOptions();
    if (!importOptions)
        return reportError(importOptions.error());
    // One thread: cachegrind's counts of two runs are subtracted, and a decoding thread would interleave
    // differently in each.
    importOptions->decodeAhead = false;
    auto trace = openTrace(o.trace, *importOptions);
    if (!trace)
        return reportError(trace.error());
    if (o.phase != "warm" && o.phase != "measure")
        return reportError(usageError("--phase is warm or measure", "--phase"));
    auto report = runReplayPhase(
        { models->layout, models->allocator, o.threshold, o.sampleGets }, **trace, o.phase == "measure");
    if (!report)
        return reportError(report.error());
    fmt::print("{}\n",
        nlohmann::json { { "gets", report->gets }, { "hits", report->hits }, { "checksum", report->checksum } }.dump());
    return kExitOk;
}

} // namespace

void addProfileCommands(CLI::App& app, int& status) {
    auto o = std::make_shared<ProfileOptions>();
    auto* cmd = app.add_subcommand("profile",
        "Simulator beside the reference engine (real jemalloc, real hash table): bytes per key, misses per GET, ns per "
        "GET");
    cmd->add_option("trace", o->trace, "Trace: a layoutlab trace, or any importable format (see `import`)")->required();
    addLayoutOptions(*cmd, o->layout, "Layout, e.g. valkey-9.1, redis-7.0 (malloc-based layouts only)");
    cmd->add_option("--alloc", o->alloc,
           "Allocator model: the linked jemalloc, which the reference engine allocates from (other models are refused)")
        ->capture_default_str();
    cmd->add_option("--thresholds", o->thresholds,
        "Thresholds to profile: a list (64,128) or FIRST:LAST:STEP (default: the layout's own)");
    cmd->add_option("--counters", o->counters,
           "Where measured misses come from: auto (perf when the machine has hardware counters, else cachegrind), "
           "perf, cachegrind, none")
        ->capture_default_str();
    cmd->add_option("--cache-geometry", o->cacheGeometry,
        "Cache levels SIZE:WAYS from L1 outward for the model (and cachegrind's D1 and LL); default: this machine's");
    cmd->add_option(
           "--gets", o->sampleGets, "How many of the trace's last GET hits to replay (the first tenth warms up)")
        ->capture_default_str();
    o->source.addTo(*cmd);
    o->db.addTo(*cmd);
    cmd->add_flag("--json", o->json, "One JSON object with a `points` array");
    cmd->add_option("-o,--output", o->output, "Write the output to this file instead of stdout");
    cmd->callback([o, &status] { status = runProfileCommand(*o); });

    auto r = std::make_shared<ProfileOptions>();
    auto* replay
        = app.add_subcommand("profile-replay", "internal: the reference replay `profile` runs under cachegrind");
    replay->group(""); // hidden from --help
    replay->add_option("trace", r->trace)->required();
    replay->add_option("--layout", r->layout)->required();
    replay->add_option("--threshold", r->threshold);
    replay->add_option("--gets", r->sampleGets);
    replay->add_option("--phase", r->phase);
    r->source.addTo(*replay);
    replay->callback([r, &status] { status = runProfileReplay(*r); });
}

} // namespace layoutlab::cli
