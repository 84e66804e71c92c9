// SPDX-License-Identifier: MIT
#pragma once

// The drive job: load a trace into a real Valkey, Redis or memcached server (started for the job, or
// attached), measure its memory per key once it has settled, run GETs against it, and put the
// simulator's prediction for the same trace beside it. The CLI (`layoutlab drive`) and the GUI's Engine
// view both run this job: the CLI on its main thread, the GUI on its worker thread, with progress through
// a ProgressSink and cancel through a stop token. Its report is one typed struct for every engine, which
// renders as the table and the JSON both front ends show.

#include "layoutlab/collect/engine_server.h"
#include "layoutlab/collect/layout_calibration.h"
#include "layoutlab/collect/look_aside.h"
#include "layoutlab/collect/memcached_driver.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/collect/run_phase.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/progress.h"
#include "layoutlab/sim/cache_model.h"
#include "layoutlab/sim/eviction.h"
#include "layoutlab/sim/results.h"
#include "layoutlab/store/results_db.h"

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

// The run phase: GETs (and a share of SETs) from `connections` connections, `pipeline` per round trip;
// `requests` of them, or for `seconds` when that is positive. None when requests and seconds are 0.
struct RunPhaseSettings {
    std::uint64_t requests = 100000;
    double seconds = 0;
    std::uint32_t connections = 4;
    std::uint32_t pipeline = 16;
    double setFraction = 0;
};

struct DriveRequest {
    std::string tracePath;
    ImportOptions importOptions;
    Engine engine = Engine::Valkey;
    std::string serverBinary; // the server to start (empty: the engine's binary on PATH)
    std::vector<std::string> serverArgs; // added to the started server's arguments (memcached: -f, -n)
    std::string connect; // HOST:PORT of a running, empty server to attach to instead
    bool allowRemote = false; // attach to a host other than loopback
    std::string framing = "raw"; // memcached: how values are framed (raw, marshal-utf8, ...)
    std::string layout; // valkey, redis: predict with this layout instead of the one detected
    bool calibrate = false; // valkey, redis: tell the layout from calibration keys even when the version could
    // valkey, redis: a MONITOR capture's commands sent as they were captured (loadCapturedCommands), not the
    // requests its import makes; the prediction is the import's all the same.
    bool asCaptured = false;
    std::uint32_t pipeline = 256; // load phase: commands per round trip
    std::uint32_t sampleKeys = 5; // keys sampled for OBJECT ENCODING and MEMORY USAGE
    // After the load, wait this long before the server is measured, for the trace's TTLs to pass on the
    // server's clock too (the replay expires keys on the trace's; the load runs faster than it).
    double expireWaitSeconds = 0;
    RunPhaseSettings run;
    // valkey, redis: run the cache model with the prediction (its misses per GET), as an engine sweep's
    // predicted GET throughput change needs (EngineSweepRequest::latencies).
    std::optional<CacheGeometry> cache;
    // valkey, redis: a cache drive. The server runs under this budget (maxmemory and its policy, set with
    // CONFIG SET) and the trace is sent as a look-aside cache's client sends it, in batches of `pipeline`
    // requests (layoutlab/collect/look_aside.h); its hit ratio and evictions go beside the predicted, which
    // starts from the server's own used_memory and reads the clock the drive ran on.
    std::optional<EvictionOptions> budget;
    // valkey, redis: the collections' limits to run the server with, set by CONFIG SET on a server the job starts
    // before the load (those left at config.c's defaults are not sent). The prediction takes the limits the
    // server then reports (CONFIG GET), whether set here or not.
    CollectionLimits collectionLimits;
    std::string toolVersion;
    // Notes and warnings on the way (the model chosen, a calibration, a server that did not settle).
    std::function<void(const std::string&)> notice;
};

// The request's fields checked together; errors name the field.
Status checkDriveRequest(const DriveRequest& request);

// The trace's reads kept for the run phase (its keys, in order, cycled).
inline constexpr std::size_t kMaxRunKeys = 1000000;

struct DriveKeySample {
    std::string key;
    std::string encoding;
    std::uint64_t memoryUsage = 0;
};

// One memcached slab class: chunks used and pages held, as measured and as predicted.
struct DriveSlabClass {
    std::uint64_t chunkBytes = 0;
    std::uint64_t measuredChunks = 0;
    std::uint64_t predictedChunks = 0;
    std::uint64_t measuredItems = 0;
    std::uint64_t measuredPages = 0; // `stats slabs` total_pages
    std::uint64_t predictedPages = 0; // the slab model's pages of the class
    // A cache drive (--memory-limit): the items the class's LRU evicted (`stats items` evicted), and the model's.
    std::uint64_t measuredEvictions = 0;
    std::uint64_t predictedEvictions = 0;
};

// What the allocator holds for the trace, measured and predicted by the slab model: Valkey/Redis INFO
// memory's allocator_allocated and allocator_active (jemalloc's stats.allocated and stats.active), after
// the load less before it; memcached's slab-chunk bytes and total_malloced (its pages).
struct DriveAllocatorFigures {
    bool measured = false; // the server reports them (a libc build does not)
    bool predicted = false; // the slab model covers the server's allocator
    std::uint64_t allocatedBefore = 0;
    std::uint64_t allocatedAfter = 0;
    std::uint64_t activeBefore = 0;
    std::uint64_t activeAfter = 0;
    std::uint64_t predictedAllocated = 0;
    std::uint64_t predictedActive = 0;

    std::int64_t measuredAllocated() const {
        return static_cast<std::int64_t>(allocatedAfter) - static_cast<std::int64_t>(allocatedBefore);
    }
    std::int64_t measuredActive() const {
        return static_cast<std::int64_t>(activeAfter) - static_cast<std::int64_t>(activeBefore);
    }
    bool comparable() const { return measured && predicted && measuredActive() > 0; }
    // The prediction's error relative to the measured growth of the active bytes.
    double activeRelativeError() const {
        return comparable() ? (static_cast<double>(predictedActive) - static_cast<double>(measuredActive()))
                / static_cast<double>(measuredActive())
                            : 0.0;
    }
};

// A cache drive's figures (DriveRequest::budget): what the client sent and saw, the server's counters
// after it (INFO stats keyspace_hits, keyspace_misses, evicted_keys; DBSIZE; used_memory), and the budget.
struct DriveBudgetFigures {
    std::uint64_t maxmemoryBytes = 0;
    std::string policy;
    std::uint64_t baseBytes = 0; // used_memory before the trace, counted by the prediction
    LookAsideReport sent;
    std::uint64_t keyspaceHits = 0;
    std::uint64_t keyspaceMisses = 0;
    std::uint64_t evictedKeys = 0;
    // MEMORY STATS clients.normal before and after the drive: the clients' buffers, part of used_memory.
    std::uint64_t clientsBefore = 0;
    std::uint64_t clientsAfter = 0;
    // memcached: pages its mover moved (slabs_moved): the age-balancing rule the model lacks, when not 0.
    std::uint64_t pagesMoved = 0;

    double measuredHitRatio() const {
        const std::uint64_t gets = keyspaceHits + keyspaceMisses;
        return gets ? static_cast<double>(keyspaceHits) / static_cast<double>(gets) : 0.0;
    }
};

struct DriveReport {
    std::string trace;
    CapturedCommandSkips capturedSkips; // DriveRequest::asCaptured: the capture's commands not sent
    std::string engine; // valkey, redis, memcached (as the server says)
    std::string version;
    std::string endpoint; // HOST:PORT
    bool started = false; // started for this job (else attached)
    std::string memAllocator; // valkey, redis: INFO's mem_allocator
    std::string framing; // memcached
    // valkey, redis: the layout predicted with, why that one, and the calibration when one ran.
    std::string chosenLayout;
    std::string layoutReason;
    // valkey, redis: the collections' limits the server held for the load (CONFIG GET; config.c's default for
    // one it does not have), which the prediction takes.
    CollectionLimits collectionLimits;
    std::optional<Calibration> calibration;
    SettleReport settled; // valkey, redis: how the server settled after the load
    // valkey, redis: the milliseconds from the load's start to the settled measurement (on the load's clock,
    // LoadReport::clock): with --expire-wait, the prediction's clock runs to it.
    std::uint64_t measuredAtMs = 0;
    std::uint64_t usedBefore = 0; // valkey, redis: used_memory before and after the load
    std::uint64_t usedAfter = 0;
    // valkey, redis: mem_clients_normal before and after the load, left out of the measured bytes per key (the
    // load's connection holds buffers no key does).
    std::uint64_t clientsBefore = 0;
    std::uint64_t clientsAfter = 0;
    std::uint64_t serverKeys = 0; // keys (memcached: items) the server holds after the load
    LoadReport load;
    std::vector<DriveKeySample> samples; // valkey, redis
    std::vector<DriveSlabClass> classes; // memcached
    DriveAllocatorFigures allocator;
    // valkey, redis on jemalloc: the bins the server held before the load, its thread cache drained; the slab
    // model starts from them.
    std::vector<JemallocArenaModel::StartBin> startBins;
    std::optional<RunPhaseResult> run;
    std::optional<DriveBudgetFigures> budget; // a cache drive's
    SimulationResult prediction;
    // Measured: the growth of used_memory less the clients' buffers, per key (memcached: slab-chunk bytes per item).
    // Predicted: the model's bytes per key (memcached: chunk bytes per item, without the hash index, as measured).
    double measuredBytesPerKey = 0;
    double predictedBytesPerKey = 0;
    std::int64_t predictionRun = 0; // stored runs (0: not stored)
    std::int64_t measuredRun = 0;

    // The prediction's error relative to the measurement.
    double relativeError() const {
        return measuredBytesPerKey != 0 ? (predictedBytesPerKey - measuredBytesPerKey) / measuredBytesPerKey : 0;
    }
    bool isMemcached() const { return engine == "memcached"; }
    // A cache drive's predicted hit ratio (0 without one).
    double predictedHitRatio() const {
        return !prediction.points.empty() && prediction.points.front().budget
            ? prediction.points.front().budget->hitRatio()
            : 0.0;
    }
};

// Runs the drive, storing a prediction run and a measured run in `db` when not null. A stop request
// stops the server, marks the runs interrupted and ends with ErrorCode::Cancelled. When the server exits
// on its own, the error carries the end of its log.
Expected<DriveReport> runDriveJob(
    const DriveRequest& request, ResultsDb* db, ProgressSink* progress = nullptr, std::stop_token stop = {});

// The report as `drive --json` prints it and the GUI reads it.
nlohmann::json toJson(const DriveReport& report);
// The report as `drive` prints it.
std::string renderDriveTable(const DriveReport& report);
// What the measured run stores.
std::vector<Measurement> driveMeasurements(const DriveReport& report);

} // namespace layoutlab
