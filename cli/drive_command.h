// SPDX-License-Identifier: MIT
#pragma once

// `layoutlab drive`, shared between its engines: the options, and the runs it stores (a `sim` run for
// the prediction, a `drive` run for what the server measured).

#include "commands.h"
#include "run_store.h"

#include "layoutlab/collect/engine_server.h"
#include "layoutlab/collect/run_phase.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"

#include <fmt/format.h>
#include <functional>

namespace layoutlab::cli {

struct DriveOptions {
    std::string trace;
    std::string engine;
    std::string serverBinary;
    std::string connect;
    bool allowRemote = false;
    std::string framing = "raw"; // memcached
    std::string layout; // valkey, redis: the layout to predict with, instead of the one detected
    bool calibrate = false; // valkey, redis: tell the layout from calibration keys even when the version could
    std::uint32_t pipeline = 256;
    std::uint32_t sampleKeys = 5;
    // The run phase: GETs from `connections` connections, `runPipeline` per round trip.
    std::uint64_t runRequests = 100000;
    double runSeconds = 0;
    std::uint32_t connections = 4;
    std::uint32_t runPipeline = 16;
    double runSetFraction = 0;
    bool json = false;
    std::string output;
    TraceSourceOptions source;
    DbOptions db;
};

// The server to measure: started for this run, or attached (`server` stays null).
struct DriveTarget {
    std::unique_ptr<EngineServer> server;
    Endpoint endpoint;
    std::string describe() const { return fmt::format("{}:{}", endpoint.host, endpoint.port); }
};
Expected<DriveTarget> driveTarget(const DriveOptions& o, Engine engine);

// The two runs of a drive, or none with --no-db; fail() marks both failed and adds the server's log
// when it has exited.
class DriveRuns {
public:
    Status begin(const DriveOptions& o, const ImportOptions& importOptions, const std::string& layout,
        const std::string& allocator, const nlohmann::json& parameters);
    Status complete(const SimulationResult& prediction, const std::vector<Measurement>& measurements,
        const std::string& summaryJson);
    int fail(const Error& error, DriveTarget& target);
    std::int64_t prediction() const { return m_runs.prediction; }
    std::int64_t measured() const { return m_runs.measured; }

private:
    std::unique_ptr<ResultsDb> m_db;
    std::string m_path;
    RunPair m_runs;
    std::unique_ptr<RunHeartbeat> m_heartbeat; // while the runs are at work (their owner is seen alive)
};

// Runs the simulator on a freshly opened copy of the trace, with a progress bar.
Expected<SimulationResult> predictDrive(
    const DriveOptions& o, const ImportOptions& importOptions, const LayoutPtr& layout, const AllocatorPtr& alloc);

// The load phase's progress callback: the requests read, as a fraction of the trace's `total` when known.
inline std::function<void(std::uint64_t)> loadProgress(ProgressSink& bar, std::uint64_t total) {
    return [&bar, total](std::uint64_t done) {
        bar.progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
    };
}

// The trace's reads kept for the run phase (its keys, in order, cycled).
inline constexpr std::size_t kMaxRunKeys = 1000000;

// The run phase, unless disabled (--run-requests 0 without --run-seconds) or the trace has no reads.
Expected<std::optional<RunPhaseResult>> runPhase(const DriveOptions& o, const std::vector<RunKey>& readKeys,
    const std::function<Expected<std::unique_ptr<GetConnection>>()>& connect);
nlohmann::json runJson(const std::optional<RunPhaseResult>& run);
std::string runTable(const std::optional<RunPhaseResult>& run);
void addRunMeasurements(const std::optional<RunPhaseResult>& run, const std::string& engine, const std::string& version,
    std::vector<Measurement>& out);

// The end of every drive, once the server is measured: the prediction, both runs stored, the output.
// `renderJson(result, predictionRun, measuredRun)`, `renderTable(result)` and `measurements(result)`
// are the engine's.
template <class Result, class RenderJson, class RenderTable, class Measurements>
int finishDrive(const DriveOptions& o, const ImportOptions& importOptions, const LayoutAndAllocator& models,
    Result& result, DriveRuns& runs, DriveTarget& target, RenderJson renderJson, RenderTable renderTable,
    Measurements measurements) {
    auto prediction = predictDrive(o, importOptions, models.layout, models.allocator);
    if (!prediction)
        return runs.fail(prediction.error(), target);
    result.prediction = std::move(*prediction);
    if (auto ok = runs.complete(result.prediction, measurements(result), renderJson(result, 0, 0).dump()); !ok)
        return runs.fail(ok.error(), target);
    const std::string text
        = o.json ? renderJson(result, runs.prediction(), runs.measured()).dump(2) + "\n" : renderTable(result);
    if (auto ok = writeOutput(text, o.output); !ok)
        return reportError(ok.error());
    return kExitOk;
}

int runDriveMemcached(const DriveOptions& o);

} // namespace layoutlab::cli
