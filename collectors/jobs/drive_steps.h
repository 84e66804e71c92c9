// SPDX-License-Identifier: MIT
#pragma once

// The drive job's steps that its engines share (drive_job.cpp, drive_memcached_job.cpp).

#include "layoutlab/jobs/drive_job.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/store/measured_runs.h"
#include "layoutlab/trace/restamped_trace.h"

#include <memory>

namespace layoutlab::drive {

// An RDB file (`snapshot`) is driven by a Valkey or Redis server the job starts, with no budget
// (drive_request.cpp).
Status checkSnapshotDrive(const DriveRequest& request, bool snapshot);
// DriveRequest::asCaptured: a MONITOR capture, into Valkey or Redis, without a budget.
Status checkCapturedDrive(const DriveRequest& request, const std::string& format);

// The server to measure: started for this job (and stopped with it), or attached (`server` stays null).
struct DriveTarget {
    std::unique_ptr<EngineServer> server;
    Endpoint endpoint;

    static Expected<DriveTarget> open(const DriveRequest& request);
    std::string describe() const;
    // The error to show for `error`: a stop stops the server first and says so; when the server exited on
    // its own, the end of its log is added.
    Error failure(const Error& error);
};

// The parameters both stored runs carry: the trace, the models, the engine and how it was reached.
RunParameters driveParameters(const DriveRequest& request, const LayoutAndAllocator& models, const DriveReport& report,
    const DriveTarget& target);

// The load phase's progress: the requests read, as a fraction of the trace's `total` when known.
inline std::function<void(std::uint64_t)> loadProgress(ProgressSink* progress, std::uint64_t total) {
    return [progress, total](std::uint64_t done) {
        if (progress)
            progress->progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
    };
}

// The run phase, unless the request has none or the trace has no reads.
Expected<std::optional<RunPhaseResult>> runPhase(const DriveRequest& request, const std::vector<RunKey>& readKeys,
    const std::function<Expected<std::unique_ptr<GetConnection>>()>& connect, std::stop_token stop);

// After the load: the request's wait for the trace's TTLs to pass on the server's clock (none by default).
Status waitForExpiry(const DriveRequest& request, ProgressSink* progress, std::stop_token stop);

// The predicted figures of the report from its prediction (memcached: the slab classes beside the
// measured ones).
void completePrediction(DriveReport& report);

// The keys the server holds after the trace (DBSIZE) and its used_memory growth per key, into `report`
// (usedBefore and usedAfter read already).
Status countServerKeys(RespClient& client, DriveReport& report);

// The prediction made with `config` on the request's trace, then both runs completed. With `sentOn`, the clock
// the drive sent the trace on, the trace is replayed restamped with it (RestampedTrace): its TTLs expire, and
// the budget's clocks advance, as the server saw them.
Status predictAndComplete(const DriveRequest& request, const SimulationConfig& config, DriveReport& report,
    MeasuredRuns& runs, ProgressSink* progress, std::stop_token stop, const std::vector<ClockPoint>* sentOn = nullptr);

// The end of every drive once the server is measured: the prediction, then both runs completed.
Status finish(const DriveRequest& request, const LayoutAndAllocator& models, DriveReport& report, MeasuredRuns& runs,
    ProgressSink* progress, std::stop_token stop);

// A cache drive once the server is up and empty (`client` connected, `models` chosen): the budget set, the
// runs begun with `parameters` (not before: a budget below what the empty server uses stores nothing), the
// trace sent as a look-aside client sends it, the server's counters read, the prediction made.
Status driveBudget(const DriveRequest& request, RespClient& client, const LayoutAndAllocator& models,
    const RunParameters& parameters, DriveReport& report, MeasuredRuns& runs, TraceReader& trace,
    ProgressSink* progress, std::stop_token stop);

// A memcached cache drive (DriveRequest::budget: the server started with -m) once the server is up and
// empty: the runs begun, the trace sent as a look-aside client sends it through `framing`, get_hits,
// get_misses and evictions read, the prediction made.
Status driveMemcachedBudget(const DriveRequest& request, MemcachedClient& client, Framing framing,
    const LayoutAndAllocator& models, const RunParameters& parameters, DriveReport& report, MeasuredRuns& runs,
    TraceReader& trace, ProgressSink* progress, std::stop_token stop);

// memcached's classes as `stats slabs` and `stats items` give them: chunks in use, items, pages held and
// evictions, by chunk size.
std::vector<DriveSlabClass> measuredSlabClasses(const MemcachedSlabs& slabs);

// The memcached drive once the server is up and the trace open.
Status driveMemcached(const DriveRequest& request, DriveTarget& target, DriveReport& report, MeasuredRuns& runs,
    TraceReader& trace, ProgressSink* progress, std::stop_token stop);

} // namespace layoutlab::drive

namespace layoutlab {
// The layout choice as the report's JSON and the runs' parameters give it.
nlohmann::json layoutChoiceJson(const DriveReport& report);
} // namespace layoutlab
