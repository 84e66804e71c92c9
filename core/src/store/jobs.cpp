// SPDX-License-Identifier: MIT
#include "layoutlab/store/jobs.h"

#include "layoutlab/import/import_stats.h"
#include "layoutlab/output_file.h"
#include "layoutlab/report/reporter.h"
#include "layoutlab/resources.h"
#include "layoutlab/store/measured_runs.h"
#include "layoutlab/trace/progress_reader.h"
#include "layoutlab/trace/trace_file.h"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sys/stat.h>

namespace layoutlab {

Expected<std::int64_t> recordTrace(ResultsDb& db, const std::string& path, const std::string& format,
    const std::string& statsJson, std::uint64_t requests, std::uint64_t distinctKeys, const std::string& contentHash) {
    TraceRecord t;
    t.source = path;
    t.format = format;
    struct stat st { };
    if (path == "-" || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))) {
        // A stream (pipe, FIFO, standard input) is read once, by the job: it has no content hash to find it
        // again by, so each run records it anew.
        t.contentHash = fmt::format("stream:{}:{}:{}", path, RunOwner::self().pid, utcNow());
    } else if (contentHash.empty()) {
        auto hash = hashFile(path, &t.sizeBytes);
        if (!hash)
            return hash.error();
        t.contentHash = *hash;
    } else {
        std::error_code ec;
        t.sizeBytes = std::filesystem::file_size(path, ec);
        if (ec)
            return ioError("cannot read the trace's size: " + ec.message(), path);
        t.contentHash = contentHash;
    }
    t.statsJson = statsJson;
    t.requests = requests;
    t.distinctKeys = distinctKeys;
    return db.upsertTrace(t);
}

Expected<std::int64_t> beginRun(ResultsDb& db, const std::string& kind, std::int64_t traceId, const std::string& layout,
    const std::string& allocator, const nlohmann::json& parameters, const std::string& toolVersion) {
    RunRecord record;
    record.kind = kind;
    record.traceId = traceId;
    record.layout = layout;
    record.allocator = allocator;
    record.parametersJson = parameters.dump();
    record.toolVersion = toolVersion;
    return db.beginRun(record);
}

namespace {
class NoProgress final : public ProgressSink {
public:
    void progress(double, std::uint64_t) override { }
};

// The statistics of a layoutlab trace, counted from its columns; nullopt when the source is not one (or is
// of version 1, which has none) and its requests must be read.
Expected<std::optional<TraceStats>> columnStatsOf(const ImportJob& job, ProgressSink* progress, std::stop_token stop) {
    auto file = openTraceFile(job.sourcePath, job.importOptions);
    if (!file)
        return file.error();
    if (!*file || (*file)->version() < 2)
        return std::optional<TraceStats>();
    auto stats = countTraceColumns(**file, readsOnTwoThreads(job.importOptions), progress, std::move(stop));
    if (!stats)
        return stats.error();
    return std::optional<TraceStats>(std::move(*stats));
}

// Records the imported trace's statistics in the DB, if any, and reports the import done.
Expected<TraceStats> finishImport(const ImportJob& job, TraceStats s, ResultsDb* db, ProgressSink* progress) {
    if (db)
        if (auto id = recordTrace(*db, job.sourcePath, s.format, toJson(s).dump(), s.requests, s.distinctKeys); !id)
            return id.error();
    if (progress)
        progress->progress(1.0, s.requests);
    return s;
}
} // namespace

Expected<TraceStats> runImportJob(const ImportJob& job, ResultsDb* db, ProgressSink* progress, std::stop_token stop) {
    if (job.outputPath.empty()) { // statistics only
        auto fromColumns = columnStatsOf(job, progress, stop);
        if (!fromColumns)
            return fromColumns.error();
        if (*fromColumns)
            return finishImport(job, std::move(**fromColumns), db, progress);
    }
    auto trace = openTrace(job.sourcePath, job.importOptions);
    if (!trace)
        return trace.error();
    const auto* importer = dynamic_cast<const Importer*>(trace->get());
    NoProgress silent;
    ProgressReader counted(
        **trace, progress ? *progress : silent,
        [importer](std::uint64_t) { return importer ? importer->progress() : -1.0; }, stop);
    StatsCollector stats(counted, importer);
    if (!job.outputPath.empty()) {
        if (auto ok = writeTrace(stats, job.outputPath); !ok)
            return ok.error(); // the writer removes its partial file; a previous trace stays
    } else if (auto ok = forEachBatch(stats, 4096, {}, [](std::span<const Request>) { return Status { Ok {} }; });
               !ok) { // counting only: the requests are borrowed, never copied (`counted` answers `stop`)
        return ok.error();
    }
    return finishImport(job, stats.stats(), db, progress);
}

Expected<std::uint64_t> runGenerateJob(
    const GeneratorConfig& config, const std::string& outputPath, ProgressSink* progress, std::stop_token stop) {
    SyntheticTrace trace(config);
    // Each request takes at least its op byte, its key id and a byte of each size in the file: refused
    // before writing when even that does not fit.
    const std::uint64_t idBytes = config.keys > 0xffffff ? 4 : config.keys > 0xffff ? 3 : config.keys > 0xff ? 2 : 1;
    std::uint64_t leastBytes = 0;
    if (!multiplyChecked(trace.totalRequests(), 3 + idBytes, leastBytes))
        leastBytes = ~std::uint64_t { 0 };
    if (auto ok = checkFreeSpace(outputPath, leastBytes,
            fmt::format("a trace of {} requests (at least {} bytes each)", trace.totalRequests(), 3 + idBytes));
        !ok)
        return ok.error();
    NoProgress silent;
    ProgressReader counted(
        trace, progress ? *progress : silent,
        [total = trace.totalRequests()](
            std::uint64_t done) { return total ? static_cast<double>(done) / static_cast<double>(total) : -1.0; },
        stop);
    if (auto ok = writeTrace(counted, outputPath); !ok)
        return ok.error();
    if (progress)
        progress->progress(1.0, trace.totalRequests());
    return trace.totalRequests();
}

Error keepUnstoredResults(
    ResultsDb& db, const std::vector<std::int64_t>& runIds, const nlohmann::json& results, const Error& why) {
    std::string ids;
    for (const auto id : runIds)
        ids += (ids.empty() ? "" : "-") + std::to_string(id);
    const std::string name = fmt::format("{}.run-{}.json", std::filesystem::path(db.path()).filename().string(), ids);
    const std::vector<std::filesystem::path> places { std::filesystem::path(db.path()).parent_path() / name,
        std::filesystem::temp_directory_path() / name };
    const std::string runs = fmt::format("{} {}", runIds.size() == 1 ? "run" : "runs", fmt::join(runIds, " and "));
    for (const auto& place : places) {
        if (writeWholeFile(place.string(), results.dump(2) + "\n")) {
            const auto reason
                = fmt::format("the results could not be stored ({}); kept in {}", why.describe(), place.string());
            for (const auto id : runIds)
                (void)db.failRun(id, reason);
            Error e = why;
            e.message
                = fmt::format("{}; the results are kept in {} and {} marked failed", why.message, place.string(), runs);
            return e;
        }
    }
    for (const auto id : runIds)
        (void)db.failRun(id, "the results could not be stored: " + why.describe());
    return why;
}

Expected<SimulationJobOutcome> runSimulationJob(
    const SimulationJob& job, ResultsDb* db, ProgressSink* progress, std::stop_token stop) {
    SimulationConfig config = job.config;
    if (!config.layout || !config.allocator)
        return usageError("a simulation needs a layout and an allocator");
    ImportOptions reading = job.importOptions; // how the trace is read, the first time and any other
    auto trace = openTrace(job.tracePath, reading);
    if (!trace)
        return trace.error();
    const auto* importer = dynamic_cast<const Importer*>(trace->get());
    if (job.fillReadOnlyTraces && importer && importer->formatName() == "oracle") {
        // A trace of reads only: a cache's misses are filled by its client, not ahead by the importer.
        reading.oracleFills = false;
        trace = openTrace(job.tracePath, reading);
        if (!trace)
            return trace.error();
        importer = dynamic_cast<const Importer*>(trace->get());
        config.fillOnMiss = job.fillBatch;
    }
    // A file can be read again from its start (a pipe cannot): a budgeted run that tries stack distances
    // and finds the trace breaks their conditions then replays its budgets from a second reading, read as
    // the first was.
    std::error_code notFile;
    if (std::filesystem::is_regular_file(job.tracePath, notFile))
        config.reopenTrace = [path = job.tracePath, reading] { return openTrace(path, reading); };
    SimulationJobOutcome outcome;
    if (db) {
        auto traceId = recordTrace(
            *db, job.tracePath, importer ? importer->formatName() : "layoutlab", "{}", 0, 0, job.traceContentHash);
        if (!traceId)
            return traceId.error();
        RunParameters parameters
            = runParametersFor(job.tracePath, job.importOptions, *config.layout, *config.allocator, config.thresholds);
        parameters.batchCell = job.batchCell;
        if (const auto extra = nlohmann::json::parse(job.extraParametersJson, nullptr, false); extra.is_object())
            parameters.extra = extra;
        if (config.cache) {
            parameters.cacheGeometry = config.cache->describe();
            parameters.cacheSampleGets = config.cacheSampleGets;
            if (!config.startRegions.empty())
                parameters.startRegions = startRegionsText(config.startRegions);
        }
        if (config.slabs) {
            parameters.slabModel = *config.slabs;
            parameters.timelineSamples = config.timelineSamples;
        }
        if (config.eviction) {
            const EvictionOptions& e = *config.eviction;
            parameters.extra["budget"]
                = { { "maxmemory_bytes", e.maxmemoryBytes }, { "policy", evictionPolicyName(e.policy) },
                      { "maxmemory_samples", e.samples }, { "lfu_log_factor", e.lfuLogFactor },
                      { "lfu_decay_time", e.lfuDecayMinutes }, { "base_bytes", e.baseBytes }, { "seed", e.seed } };
        }
        if (config.fillOnMiss)
            parameters.extra["fill_batch"] = config.fillOnMiss;
        // The collections' limits a run changed from the engines' defaults, and the one it swept.
        for (const auto& [name, value] : changedCollectionLimits(config.collectionLimits))
            parameters.extra["collection_limits"][std::string(name)] = value;
        if (config.limitSweep)
            parameters.extra["limit_sweep"]
                = { { "name", config.limitSweep->name }, { "values", config.limitSweep->values } };
        RunRecord record;
        record.kind = job.kind;
        record.traceId = *traceId;
        record.layout = config.layout->spec();
        record.allocator = config.allocator->spec();
        record.parametersJson = parameters.toJson().dump();
        record.toolVersion = job.toolVersion;
        record.batchCell = job.batchCell;
        std::int64_t takenBy = 0;
        auto id = job.batchCell.empty() ? db->beginRun(record) : db->claimCell(record, &takenBy);
        if (!id)
            return id.error();
        if (*id == 0) {
            outcome.takenBy = takenBy; // another batch has this cell
            return outcome;
        }
        outcome.runId = *id;
    }
    std::optional<RunHeartbeat> heartbeat;
    if (db)
        heartbeat.emplace(db->path(), std::vector<std::int64_t> { outcome.runId });
    auto result = simulate(config, **trace, progress, stop);
    heartbeat.reset();
    if (result && stop.stop_requested()) // stopped as the input ended (a pipe whose writer was interrupted too)
        result = cancelledError();
    if (!result) {
        if (!db)
            return result.error();
        if (result.error().code == ErrorCode::Cancelled) {
            (void)db->interruptRun(outcome.runId);
            Error e = result.error();
            e.message = fmt::format("stopped; run {} marked interrupted", outcome.runId);
            return e;
        }
        (void)db->failRun(outcome.runId, result.error().describe());
        return result.error();
    }
    if (db)
        if (auto ok = db->completeRun(outcome.runId, *result); !ok)
            return keepUnstoredResults(*db, { outcome.runId }, toJson(*result), ok.error());
    outcome.result = std::move(*result);
    if (importer) {
        outcome.rejectedLines = importer->rejects().total;
        outcome.captureNotes = renderCaptureNotes(importer->rejects());
    }
    return outcome;
}

} // namespace layoutlab
