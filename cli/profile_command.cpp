// SPDX-License-Identifier: MIT
// `layoutlab profile`: the simulator and the reference engine on the same trace, side by side; and
// `layoutlab profile-replay`, the reference replay run under valgrind's cache simulator (an internal command).

#include "interrupts.h"
#include "measured_job.h"
#include "progress_bar.h"
#include "run_store.h"

#include "layoutlab/collect/profiler.h"
#include "layoutlab/jobs/profile_job.h"
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
    CollectionLimits limits;
    bool json = false;
    std::string output;
    TraceSourceOptions source;
    DbOptions db;
    // profile-replay only
    std::uint32_t threshold = 0;
    std::uint64_t warmKeys = 0;
};

std::string selfExecutable() {
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("layoutlab") : path.string();
}

int runProfileCommand(const ProfileOptions& o) {
    ProfileRequest request;
    if (auto ok = fillTraceAndModels(request, o); !ok)
        return reportError(ok.error());
    request.thresholdsText = o.thresholds;
    request.counters = o.counters;
    request.cacheGeometry = o.cacheGeometry;
    request.sampleGets = o.sampleGets;
    request.collectionLimits = o.limits;
    request.replayProgram = selfExecutable();
    request.toolVersion = LAYOUTLAB_VERSION;
    return runMeasuredJob(request, o, "profile", runProfileJob, renderProfileTable);
}

int runProfileReplay(const ProfileOptions& o) {
    auto models = parseLayoutAndAllocator(o.layout, "jemalloc");
    if (!models)
        return reportError(models.error());
    auto importOptions = o.source.toImportOptions();
    if (!importOptions)
        return reportError(importOptions.error());
    // One thread: no decoding thread beside the simulated replay.
    importOptions->decodeAhead = false;
    auto trace = openTrace(o.trace, *importOptions);
    if (!trace)
        return reportError(trace.error());
    auto report = runReplayUnderSimulation(
        { models->layout, models->allocator, o.threshold, o.sampleGets, o.limits }, **trace, o.warmKeys);
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
    addTraceArgument(*cmd, o->trace);
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
    addCollectionLimitOptions(*cmd, o->limits);
    o->source.addTo(*cmd);
    o->db.addTo(*cmd);
    addJsonAndOutput(*cmd, o->json, o->output, "One JSON object with a `points` array");
    cmd->callback([o, &status] { status = runProfileCommand(*o); });

    auto r = std::make_shared<ProfileOptions>();
    auto* replay = app.add_subcommand(
        "profile-replay", "internal: the reference replay `profile` runs under valgrind's cache simulator");
    replay->group(""); // hidden from --help
    replay->add_option("trace", r->trace)->required();
    replay->add_option("--layout", r->layout)->required();
    replay->add_option("--threshold", r->threshold);
    replay->add_option("--gets", r->sampleGets);
    replay->add_option("--warm-keys", r->warmKeys);
    addCollectionLimitOptions(*replay, r->limits);
    r->source.addTo(*replay);
    replay->callback([r, &status] { status = runProfileReplay(*r); });
}

} // namespace layoutlab::cli
