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
// with the status set to 'complete', in one transaction at its end. A run whose process died stays
// 'running' (never 'complete'); WAL journaling keeps the file consistent through a crash. Writers from
// several processes wait for each other (busy timeout) rather than fail.

#include "layoutlab/expected.h"
#include "layoutlab/sim/results.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace layoutlab {

inline constexpr int kResultsSchemaVersion = 3;

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
    std::string allocator;
    std::string parametersJson;
    std::string toolVersion;
    std::string status; // running, complete, failed
    std::string error;
    std::string startedAt;
    std::string finishedAt;
    std::uint64_t points = 0;
    std::string replayJson; // the replay summary of a complete run: requests, keys, index tables
};

// One measured figure: what a profile's reference engine (or a driven server) measured.
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
    // Opens (creating and migrating as needed) the database at `path`.
    static Expected<std::unique_ptr<ResultsDb>> open(const std::string& path);
    ~ResultsDb();
    ResultsDb(const ResultsDb&) = delete;
    ResultsDb& operator=(const ResultsDb&) = delete;

    int schemaVersion() const { return m_version; }

    // Finds the trace by content hash and format, or adds it; updates its statistics when given.
    Expected<std::int64_t> upsertTrace(const TraceRecord& trace);
    // A new run in state 'running'.
    Expected<std::int64_t> beginRun(const RunRecord& run);
    // Writes the points and size classes and marks the run complete, in one transaction.
    Status completeRun(std::int64_t runId, const SimulationResult& result);
    // Writes the measurements and the replay summary and marks the run complete, in one transaction.
    Status completeMeasuredRun(
        std::int64_t runId, const std::vector<Measurement>& measurements, const std::string& replayJson = "{}");
    Status failRun(std::int64_t runId, const std::string& error);

    Expected<std::vector<RunRecord>> listRuns();
    Expected<RunRecord> run(std::int64_t runId);
    Expected<std::vector<TraceRecord>> listTraces();
    // The run's points with their size classes, as sim/sweep produced them.
    Expected<std::vector<ThresholdPoint>> points(std::int64_t runId);
    Expected<std::vector<Measurement>> measurements(std::int64_t runId);
    Expected<std::uint64_t> deleteRuns(const std::vector<std::int64_t>& runIds);
    Expected<std::uint64_t> deleteIncompleteRuns();
    Status vacuum();
    // Copies the runs of the database at `otherPath` (with their traces, points, size classes and
    // measurements) into this one under new ids, in one transaction; a run already here is skipped.
    // Returns the number of runs copied.
    Expected<std::uint64_t> mergeFrom(const std::string& otherPath);
    Expected<std::string> integrityCheck();

private:
    ResultsDb() = default;
    Status exec(const char* sql);
    void rollbackQuietly();
    // Rolls the open transaction back and returns the error `what` with SQLite's message.
    Error rollbackWith(const char* what);
    // Inside a write transaction: marks a running run complete with its replay summary.
    Status markComplete(std::int64_t runId, const std::string& replayJson);
    Status migrate();

    sqlite3* m_db = nullptr;
    std::string m_path;
    int m_version = 0;
};

// A 64-bit content hash of a file (hex), read in large blocks.
Expected<std::string> hashFile(const std::string& path, std::uint64_t* sizeBytes = nullptr);
// The current UTC time as ISO 8601 ("2026-11-30T09:45:00Z").
std::string utcNow();

} // namespace layoutlab
