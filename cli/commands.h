// SPDX-License-Identifier: MIT
#pragma once

// The layoutlab subcommands. Each add* function registers a subcommand with CLI11 and returns the
// exit status through the shared `status` once the command has run.
//
// Exit codes: 0 success, 1 data or I/O error (bad trace, failed server), 2 usage error.

#include "layoutlab/expected.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_model.h"
#include "layoutlab/report/get_time.h"
#include "layoutlab/sim/cache_model.h"
#include "layoutlab/store/simulation_request.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace layoutlab {
struct SimulationJob;
}

namespace layoutlab::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitData = 1;
inline constexpr int kExitUsage = 2;

// Prints "layoutlab: error: ..." on stderr, in the CLI's words (inCliWords), and returns the exit code
// for the error's kind.
int reportError(const Error& error);
// The error with its field named by the flag that sets it (thresholds → --thresholds) and the CLI's hint
// for its tag, if any.
Error inCliWords(Error error);
// Writes `text` to stdout, or atomically to `path` when it is not empty.
Status writeOutput(const std::string& text, const std::string& path);
// A command's last step: writes `text` to `path` ("" or "-": stdout) and returns its exit code.
int printOutput(const std::string& text, const std::string& path);

// Options of every command that reads a trace: the source format and the bad-input policy.
struct TraceSourceOptions {
    std::string format = "auto";
    std::string onError = "fail";
    std::uint32_t keyBytes = 16;

    void addTo(CLI::App& command);
    Expected<ImportOptions> toImportOptions() const;
};

// --layout NAME and --layout-file FILE (a layout file: docs/layout-files.md), either one; the file sets
// `layout` to its spec ("file:PATH"), which parseLayout() reads. Commands whose layout is required check
// requireLayout() when they run.
// --layout and --layout-file. With `every`, each may be given several times and every value is kept
// there: the --layout values in the order given, then the --layout-file ones (the last is `layout`).
void addLayoutOptions(
    CLI::App& command, std::string& layout, const std::string& help, std::vector<std::string>* every = nullptr);
// The collections' limits, one option each by the engine's name (--hash-max-listpack-entries N, ...), their
// defaults config.c's (layouts, sim, sweep, advise).
void addCollectionLimitOptions(CLI::App& command, CollectionLimits& limits);
// The trace argument of the commands that read one (sim, sweep, advise, profile, drive).
void addTraceArgument(CLI::App& command, std::string& trace);
// --json (described by `jsonHelp`) and -o/--output FILE.
void addJsonAndOutput(CLI::App& command, bool& json, std::string& output, const std::string& jsonHelp);
Status requireLayout(const std::string& layout);

// What the requests of sim, sweep, advise and profile share: the trace, how it is read, and the models.
template <class Request, class Options> Status fillTraceAndModels(Request& request, const Options& o) {
    if (auto ok = requireLayout(o.layout); !ok)
        return ok;
    auto importOptions = o.source.toImportOptions();
    if (!importOptions)
        return importOptions.error();
    request.tracePath = o.trace;
    request.importOptions = *importOptions;
    request.layout = o.layout;
    request.allocator = o.alloc;
    return Ok {};
}

// This host's load latencies for the job's cache geometry (a pointer chase of a few seconds, announced on
// stderr), as the stall prediction takes them (layoutlab/report/get_time.h), kept in the job's run
// parameters (`load_latencies`) for `report`.
Expected<LoadLatencies> keepLatenciesWith(SimulationJob& job);
// The GET-stall prediction's options, beside --latency (which they need): what GETs a client pipelines, and
// the server's prefetch batch (SimulationRequest::getPipeline, ::prefetchBatch).
struct StallOptions {
    bool latency = false;
    std::uint32_t getPipeline = 1;
    std::optional<std::uint32_t> prefetchBatch;
    void addTo(CLI::App& cmd, const std::string& latencyHelp);
    template <class Request> void fill(Request& request) const {
        request.getPipeline = getPipeline;
        request.prefetchBatch = prefetchBatch;
    }
};
// The server's cache settings, as `sim`/`sweep` and `drive` both take them: maxmemory (Valkey, Redis) or
// memcached's -m, and the eviction policy with its settings. The policy's default is the front end's:
// `sim` models a server as configured, whose default is noeviction (config.c); `drive` measures a cache,
// allkeys-lru.
struct CacheSettingsOptions {
    explicit CacheSettingsOptions(std::string defaultPolicy)
        : policy(std::move(defaultPolicy)) { }
    std::string maxmemory;
    std::string memoryLimit;
    std::string policy;
    std::uint32_t samples = 5;
    std::uint32_t lfuLogFactor = 10;
    std::uint32_t lfuDecayTime = 1;
    // --maxmemory, --memory-limit (excluding each other), --policy, --maxmemory-samples, --lfu-log-factor,
    // --lfu-decay-time into `group`, the limits' help as given.
    void addTo(CLI::Option_group& group, const std::string& maxmemoryHelp, const std::string& memoryLimitHelp);
};

// A memory budget's options (SimulationRequest::maxmemory and the rest): the server's cache settings, what
// the model counts besides them, and look-aside filling.
struct BudgetOptions {
    CacheSettingsOptions server { "noeviction" };
    std::string baseMemory;
    std::uint64_t seed = 1;
    bool rawSizes = false;
    double sampleRate = 1.0;
    bool fillOnMiss = false;
    bool noFillOnMiss = false;
    std::uint32_t fillBatch = 1;
    void addTo(CLI::App& cmd);
    void fill(SimulationRequest& request) const;
};
// keepLatenciesWith when `asked` (--latency), else nothing.
Expected<std::optional<LoadLatencies>> latenciesIfAsked(bool asked, SimulationJob& job);
// JSON output whose `points` follow `result`'s (a sweep's, advise's), each with its predicted stall, and
// the latencies it came from.
std::string withStall(const std::string& json, const SimulationResult& result, const LoadLatencies& latencies);

void addGenCommand(CLI::App& app, int& status);
void addImportCommands(CLI::App& app, int& status);
void addDbCommands(CLI::App& app, int& status);
void addSimCommands(CLI::App& app, int& status);
void addListCommands(CLI::App& app, int& status);
void addProfileCommands(CLI::App& app, int& status);
void addDriveCommand(CLI::App& app, int& status);
void addCompareCommand(CLI::App& app, int& status);
void addAdviseCommand(CLI::App& app, int& status);
void addReportCommand(CLI::App& app, int& status);
void addBatchCommand(CLI::App& app, int& status);
void addLatencyCommand(CLI::App& app, int& status);

} // namespace layoutlab::cli
