// SPDX-License-Identifier: MIT
#pragma once

// The results database: one SQLite file that sqlite3 users can query (schema in docs/results-db.md).
//
//   traces        one row per trace file seen: source, format, content hash, statistics and histograms
//   runs          one row per sim/sweep (and, later, profile/drive): kind, layout, allocator, every
//                 parameter, tool version, status, start and end
//   points        one row per threshold of a run, every metric
//   size_classes  the per-size-class breakdown of each point
//   measurements  measured results (the reference engine, real servers), per threshold, next to the
//                 predictions of the run they belong to
//
// Nothing is lost: a run row is written as 'running' when the run starts, and its results are written,
// with the status set to 'complete', in one transaction at its end. A stopped run is 'interrupted', a
// failed one 'failed'. Each run names its owner (host, pid, the process's start, a heartbeat while it
// runs), so a 'running' run whose process died is told apart (RunRecord::live) and can be deleted or
// re-run, while a live one is left alone. WAL journaling keeps the file consistent through a crash.
// Writers from several processes wait for each other (busy timeout) rather than fail. A file that is
// not a layoutlab database is refused, never written to; reading commands open it read-only.

#include "layoutlab/expected.h"
#include "layoutlab/sim/results.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace layoutlab {

inline constexpr int kResultsSchemaVersion = 12;

struct TraceRecord {
    std::int64_t id = 0;
    std::string source;
    std::string format;
    std::string contentHash;
    std::uint64_t sizeBytes = 0;
    std::uint64_t requests = 0;
    std::uint64_t distinctKeys = 0;
    std::string statsJson; // import statistics with histograms, or "{}" when not computed
};

struct RunRecord {
    std::int64_t id = 0;
    std::string kind; // sim, sweep
    std::int64_t traceId = 0;
    std::string traceSource;
    std::string layout;
    // The name it was made under: the preset (valkey-8.1, redis-7.0:embstr-limit=64) or the layout file's
    // own name, as kept in its parameters; shown wherever runs are listed.
    std::string layoutName;
    std::string allocator;
    std::string parametersJson;
    std::string toolVersion;
    std::string status; // running, complete, failed, interrupted
    std::string error;
    std::string startedAt;
    std::string finishedAt;
    std::uint64_t points = 0;
    std::string replayJson; // the replay summary of a complete run: requests, keys, index tables
    std::string ownerHost;
    std::int64_t ownerPid = 0;
    std::string ownerProcess; // the owner's boot id and start time: a reused pid is not the owner
    std::string heartbeatAt;
    std::string batchCell; // the batch cell the run computes, if any
    // A 'running' run whose owner is still at it: on this host its process is alive, on another its
    // heartbeat is recent. False for every other status.
    bool live = false;
};

// This process as a run's owner.
struct RunOwner {
    std::string host;
    std::int64_t pid = 0;
    std::string process;
    static const RunOwner& self();
};
// Whether the owner of a 'running' run is still at it (see RunRecord::live).
bool ownerIsLive(const std::string& host, std::int64_t pid, const std::string& process, const std::string& heartbeatAt);

// What `db delete --incomplete` did.
struct IncompleteDeletion {
    std::uint64_t deleted = 0;
    std::uint64_t liveLeft = 0; // running runs whose owners are alive: left alone
};

// One measured figure: what a profile's reference engine (or a driven server) measured.
// One value of a collection limit a run swept, as stored: its collections (the point is the run's with them).
struct StoredLimitValue {
    std::int64_t value = 0;
    std::vector<CollectionUsage> collections;
};

struct Measurement {
    std::optional<std::uint32_t> threshold; // the threshold it was measured at (none: the whole run)
    std::string engine; // "reference", "redis-server", ...
    std::string engineVersion;
    std::string metric; // e.g. allocated_bytes, bytes_per_key, ns_per_get, l1_misses_per_get
    double value = 0;
    std::string unit; // bytes, ns, misses/GET, ...
    std::string detailsJson = "{}";

    bool operator==(const Measurement&) const = default;
};

class ResultsDb {
public:
    // Opens (creating and migrating as needed) the database at `path`. A file that is not a layoutlab
    // database (another SQLite file, or not SQLite) is refused.
    static Expected<std::unique_ptr<ResultsDb>> open(const std::string& path);
    // Opens the database for reading only: nothing in or beside the file is written (a database on a
    // read-only mount is read as it is). A missing file reads as an empty database; one with an older
    // schema is migrated first when it can be written, else refused with the reason.
    static Expected<std::unique_ptr<ResultsDb>> openReadOnly(const std::string& path);
    ~ResultsDb();
    ResultsDb(const ResultsDb&) = delete;
    ResultsDb& operator=(const ResultsDb&) = delete;

    int schemaVersion() const { return m_version; }

    // Finds the trace by content hash and format, or adds it; updates its statistics when given.
    Expected<std::int64_t> upsertTrace(const TraceRecord& trace);
    // A new run in state 'running', owned by this process.
    Expected<std::int64_t> beginRun(const RunRecord& run);
    // For a batch cell (run.batchCell): begins the run unless the cell is complete or a live run computes
    // it, in one transaction, so that concurrent batches share the cells. Returns the new run's id, or 0
    // when the cell is taken (`takenBy` then names the run that has it).
    Expected<std::int64_t> claimCell(const RunRecord& run, std::int64_t* takenBy = nullptr);
    // Tells readers the owner of these runs is alive (RunHeartbeat calls it).
    Status heartbeat(const std::vector<std::int64_t>& runIds);
    // Writes the points and size classes and marks the run complete, in one transaction.
    Status completeRun(std::int64_t runId, const SimulationResult& result);
    // Writes the measurements and the replay summary and marks the run complete, in one transaction.
    Status completeMeasuredRun(
        std::int64_t runId, const std::vector<Measurement>& measurements, const std::string& replayJson = "{}");
    Status failRun(std::int64_t runId, const std::string& error);
    // Marks a running run 'interrupted' (a signal or a cancel stopped it): `batch` runs it again.
    Status interruptRun(std::int64_t runId, const std::string& reason = "interrupted");

    Expected<std::vector<RunRecord>> listRuns();
    Expected<RunRecord> run(std::int64_t runId);
    Expected<std::vector<TraceRecord>> listTraces();
    // The run's points with their size classes, as sim/sweep produced them.
    Expected<std::vector<ThresholdPoint>> points(std::int64_t runId);
    // The run's timeline (empty: it has none), the bytes per point in point order.
    Expected<std::vector<TimelineSample>> timeline(std::int64_t runId);
    // The run's collection keys by type and encoding (empty: its trace held only strings).
    Expected<std::vector<CollectionUsage>> collections(std::int64_t runId);
    // A collection limit the run swept (sweep --param): each value's point figures and collections, in the
    // sweep's order (empty: none). The points are the run's point with them: limitSweepOfStoredRun.
    Expected<std::vector<StoredLimitValue>> limitValues(std::int64_t runId);
    Expected<std::vector<Measurement>> measurements(std::int64_t runId);
    Expected<std::uint64_t> deleteRuns(const std::vector<std::int64_t>& runIds);
    // Deletes the failed and interrupted runs, and the running ones whose owner is gone; live runs stay.
    Expected<IncompleteDeletion> deleteIncompleteRuns();
    Status vacuum();
    // Copies the runs of the database at `otherPath` (with their traces, points, size classes and
    // measurements) into this one under new ids, in one transaction; a run already here is skipped.
    // Returns the number of runs copied.
    Expected<std::uint64_t> mergeFrom(const std::string& otherPath);
    Expected<std::string> integrityCheck();
    const std::string& path() const { return m_path; }
    bool readOnly() const { return m_readOnly; }

private:
    ResultsDb() = default;
    Status exec(const char* sql);
    void rollbackQuietly();
    // Rolls the open transaction back and returns the error `what` with SQLite's message.
    Error rollbackWith(const char* what);
    // Inside a write transaction: marks a running run complete with its replay summary.
    Status markComplete(std::int64_t runId, const std::string& replayJson);
    // Inside a write transaction: the rows of a swept collection limit.
    Status storeLimitSweep(std::int64_t runId, const LimitSweepResult& sweep);
    Status migrate();
    // Refuses a file that holds tables but no layoutlab schema.
    Status checkIsOurs();
    Expected<int> storedSchemaVersion();

    sqlite3* m_db = nullptr;
    std::string m_path;
    int m_version = 0;
    bool m_readOnly = false;
};

// While it lives, a thread of its own updates the heartbeat of `runIds` every kHeartbeatSeconds through
// its own connection, so that other processes see the runs' owner at work (RunRecord::live).
class RunHeartbeat {
public:
    static constexpr int kHeartbeatSeconds = 20;
    RunHeartbeat(std::string dbPath, std::vector<std::int64_t> runIds);
    ~RunHeartbeat();
    RunHeartbeat(const RunHeartbeat&) = delete;
    RunHeartbeat& operator=(const RunHeartbeat&) = delete;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

// A 64-bit content hash of a file (hex), read in large blocks.
Expected<std::string> hashFile(const std::string& path, std::uint64_t* sizeBytes = nullptr);
// The current UTC time as ISO 8601 ("2026-11-30T09:45:00Z").
std::string utcNow();

} // namespace layoutlab
