// SPDX-License-Identifier: MIT
#pragma once

// The stored jobs the CLI and the GUI share, so that work started from either is done and stored the
// same way:
//   - an import: read any trace format, optionally write layoutlab's binary trace, count its statistics,
//     and record the trace with them in the results database;
//   - a generation: write a synthetic trace;
//   - a simulation (`sim`, `sweep`): open the trace, record it and a 'running' run, simulate, then
//     complete the run with its points, or mark it failed with the error.

#include "layoutlab/import/import_stats.h"
#include "layoutlab/import/importer.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/store/results_db.h"
#include "layoutlab/trace/generator.h"

#include <nlohmann/json_fwd.hpp>

#include <stop_token>

namespace layoutlab {

// Records the trace file (content hash, format) and returns its id. `contentHash`: the file's hash when
// the caller has it already (hashFile), else it is computed.
Expected<std::int64_t> recordTrace(ResultsDb& db, const std::string& path, const std::string& format,
    const std::string& statsJson = "{}", std::uint64_t requests = 0, std::uint64_t distinctKeys = 0,
    const std::string& contentHash = {});

// Starts a run of `kind` ('running' until completed or failed) and returns its id. `toolVersion` is the
// version of the program that runs it.
Expected<std::int64_t> beginRun(ResultsDb& db, const std::string& kind, std::int64_t traceId, const std::string& layout,
    const std::string& allocator, const nlohmann::json& parameters, const std::string& toolVersion);

// The results of runs the database would not take (locked past the busy timeout, full, read-only):
// written as JSON beside the database (DB.run-ID[-ID].json, else in the temp directory), the runs marked
// failed with where they are (as far as the database lets), and `why` returned saying so.
Error keepUnstoredResults(
    ResultsDb& db, const std::vector<std::int64_t>& runIds, const nlohmann::json& results, const Error& why);

struct ImportJob {
    std::string sourcePath;
    ImportOptions importOptions;
    std::string outputPath; // empty: statistics only
};

// Runs `job`, recording the source trace and its statistics in `db` when not null. A stop request ends it
// with ErrorCode::Cancelled; the output is written
// whole or not at all.
Expected<TraceStats> runImportJob(
    const ImportJob& job, ResultsDb* db, ProgressSink* progress = nullptr, std::stop_token stop = {});

// Writes the synthetic trace `config` describes to `outputPath` (what `layoutlab gen` does). A stop
// request ends it with ErrorCode::Cancelled; the output is written whole or not at all. Returns the requests
// written.
Expected<std::uint64_t> runGenerateJob(const GeneratorConfig& config, const std::string& outputPath,
    ProgressSink* progress = nullptr, std::stop_token stop = {});

struct SimulationJob {
    std::string tracePath;
    ImportOptions importOptions;
    SimulationConfig config;
    std::string kind = "sweep"; // "sim", "sweep" or "advise"
    std::string toolVersion;
    std::string extraParametersJson = "{}"; // stored with the run's parameters (e.g. advise's weights)
    std::string traceContentHash; // hashFile() of the trace, when known (batch hashes each trace once)
    // A batch cell's key: the run is begun only if no complete run has the cell and no live run computes
    // it (ResultsDb::claimCell); otherwise the job does nothing and says who has it.
    std::string batchCell;
    // Look-aside filling where the request left it to the trace: on, in batches of `fillBatch`, when the trace
    // turns out to be of reads only (oracleGeneral, read without the importer's own fills).
    bool fillReadOnlyTraces = false;
    std::uint32_t fillBatch = 1;
    // GETs whose lookups the server overlaps (LoadLatencies::overlappedLookups), for the stall prediction.
    std::uint32_t overlappedLookups = 1;
};

struct SimulationJobOutcome {
    SimulationResult result;
    std::int64_t runId = 0; // 0 when no database was given, or the batch cell was taken
    std::int64_t takenBy = 0; // the run that has the batch cell (then nothing was computed)
    std::uint64_t rejectedLines = 0; // input lines the importer skipped (--on-error=skip)
    // A capture simulated as it was imported: what it holds that the simulator leaves out or assumes
    // (renderCaptureNotes); empty for a layoutlab trace, or when there is nothing to say.
    std::string captureNotes;
};

// Runs `job`, storing it in `db` when not null. A stop request ends it with ErrorCode::Cancelled, and
// the stored run is marked 'interrupted', never complete. Results the database will not take are kept
// in a JSON file beside it (the error and the run, marked failed, say where).
Expected<SimulationJobOutcome> runSimulationJob(
    const SimulationJob& job, ResultsDb* db, ProgressSink* progress = nullptr, std::stop_token stop = {});

} // namespace layoutlab
