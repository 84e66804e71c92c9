// SPDX-License-Identifier: MIT
// The drive job's steps every engine shares: the server (started or attached), the two stored runs, the
// run phase, the prediction; and the Valkey/Redis drive. The memcached drive is in
// drive_memcached_job.cpp, the report's renderings in drive_report.cpp.

#include "drive_steps.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/arena_replay.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/restamped_trace.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <thread>

namespace layoutlab {

namespace drive {

Expected<DriveTarget> DriveTarget::open(const DriveRequest& r) {
    DriveTarget target;
    if (r.connect.empty()) {
        std::vector<std::string> args = r.serverArgs;
        if (r.budget && r.engine == Engine::Memcached) // the last -m wins over the default one
            args.insert(args.end(), { "-m", std::to_string(r.budget->maxmemoryBytes / (1024 * 1024)) });
        auto started = EngineServer::start(r.engine, r.serverBinary, args);
        if (!started)
            return started.error();
        target.server = std::move(*started);
        target.endpoint = target.server->endpoint();
        return target;
    }
    auto parsed = parseEndpoint(r.connect, r.allowRemote);
    if (!parsed)
        return parsed.error();
    target.endpoint = *parsed;
    return target;
}

std::string DriveTarget::describe() const {
    return fmt::format("{}:{}", endpoint.host, endpoint.port);
}

Error DriveTarget::failure(const Error& error) {
    if (error.code == ErrorCode::Cancelled) {
        Error stopped = error;
        stopped.message = server ? "stopped; the server was stopped and its directory removed" : "stopped";
        server.reset(); // stopped now, before the message: nothing is left behind when it shows
        return stopped;
    }
    Error shown = error;
    // A lost connection often means the server died: give its exit a moment to show before looking.
    for (int i = 0; i < 50 && error.code == ErrorCode::Io && server && server->running(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (server && !server->running())
        shown.message += "\nthe server exited; its log ends:\n" + server->logTail();
    return shown;
}

RunParameters driveParameters(
    const DriveRequest& r, const LayoutAndAllocator& models, const DriveReport& report, const DriveTarget& target) {
    RunParameters p = runParametersFor(r.tracePath, r.importOptions, *models.layout, *models.allocator, {});
    p.extra = { { "engine", report.engine }, { "engine_version", report.version }, { "endpoint", report.endpoint },
        { "started", report.started }, { "server_binary", target.server ? target.server->binary() : std::string() },
        { "pipeline", r.pipeline } };
    if (!r.serverArgs.empty())
        p.extra["server_args"] = r.serverArgs;
    if (report.isMemcached())
        p.extra["framing"] = report.framing;
    else
        p.extra["mem_allocator"] = report.memAllocator;
    return p;
}

Expected<std::optional<RunPhaseResult>> runPhase(const DriveRequest& r, const std::vector<RunKey>& readKeys,
    const std::function<Expected<std::unique_ptr<GetConnection>>()>& connect, std::stop_token stop) {
    if ((r.run.requests == 0 && r.run.seconds <= 0) || readKeys.empty())
        return std::optional<RunPhaseResult>();
    RunPhaseConfig config;
    config.connections = r.run.connections;
    config.pipeline = r.run.pipeline;
    config.maxRequests = r.run.seconds > 0 ? 0 : r.run.requests;
    config.maxSeconds = r.run.seconds;
    config.setFraction = r.run.setFraction;
    auto result = runGets(readKeys, config, connect, stop);
    if (!result)
        return result.error();
    return std::optional<RunPhaseResult>(*result);
}

Status countServerKeys(RespClient& client, DriveReport& report) {
    auto count = keyCountAllDatabases(client);
    if (!count)
        return count.error();
    report.serverKeys = *count;
    report.measuredBytesPerKey = report.serverKeys
        ? (static_cast<double>(report.usedAfter) - static_cast<double>(report.usedBefore)
              - (static_cast<double>(report.clientsAfter) - static_cast<double>(report.clientsBefore)))
            / static_cast<double>(report.serverKeys)
        : 0;
    return Ok {};
}

Status predictAndComplete(const DriveRequest& r, const SimulationConfig& config, DriveReport& report,
    MeasuredRuns& runs, ProgressSink* progress, std::stop_token stop, const std::vector<ClockPoint>* sentOn) {
    ImportOptions options = r.importOptions;
    if (report.load.snapshotBytes) // the keys the server dropped as expired when it loaded the file
        options.snapshotLoadedAt = report.load.snapshotLoadedAt;
    auto trace = openTrace(r.tracePath, options);
    if (!trace)
        return trace.error();
    if (progress)
        progress->phase("predict");
    std::optional<RestampedTrace> restamped;
    if (sentOn)
        restamped.emplace(**trace, *sentOn);
    auto prediction
        = restamped ? simulate(config, *restamped, progress, stop) : simulate(config, **trace, progress, stop);
    if (!prediction)
        return prediction.error();
    report.prediction = std::move(*prediction);
    completePrediction(report);
    if (auto ok = runs.complete(report.prediction, driveMeasurements(report), toJson(report)); !ok)
        return ok;
    report.predictionRun = runs.prediction();
    report.measuredRun = runs.measured();
    return Ok {};
}

Status finish(const DriveRequest& r, const LayoutAndAllocator& models, DriveReport& report, MeasuredRuns& runs,
    ProgressSink* progress, std::stop_token stop) {
    SimulationConfig predictionConfig;
    predictionConfig.layout = models.layout;
    predictionConfig.allocator = models.allocator;
    predictionConfig.cache = r.cache;
    predictionConfig.collectionLimits = report.collectionLimits;
    // The slab model as the server allocates: a thread cache in front of jemalloc's arena; memcached's page
    // mover off, since the load runs far faster than the trace's clock (the server's mover has not run by
    // the time its pages are read). Strings and collections alike, written by commands or loaded from a
    // snapshot by the server itself (rdb.c loads key by key, as the trace's Load requests replay it).
    if (slabModelCovers(*models.allocator))
        predictionConfig.slabs = SlabModelOptions { true, 0, report.startBins, true };
    // A drive that waits for the trace's TTLs to run out on the server replays the trace on the clock the
    // server read (Redis, Valkey: their TTLs are in milliseconds): each batch at the time it was sent, and the
    // end at the measurement, so that keys expire, and the expire cycles run, when they did there. memcached
    // keeps its own seconds (the trace's clock as before).
    if (!report.isMemcached() && r.expireWaitSeconds > 0 && !report.load.clock.empty()) {
        predictionConfig.endClockMs = report.measuredAtMs;
        return predictAndComplete(r, predictionConfig, report, runs, progress, stop, &report.load.clock);
    }
    // On the trace's own clock, whose pauses the load did not make: the cron's growth only at the end, as the
    // server's cron met the tables the load left.
    predictionConfig.cronOnTraceClock = false;
    return predictAndComplete(r, predictionConfig, report, runs, progress, stop);
}

Status waitForExpiry(const DriveRequest& r, ProgressSink* progress, std::stop_token stop) {
    if (r.expireWaitSeconds <= 0)
        return Ok {};
    if (progress)
        progress->phase("expire");
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(r.expireWaitSeconds);
    while (std::chrono::steady_clock::now() < until) {
        if (stop.stop_requested())
            return cancelledError();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Ok {};
}

void completePrediction(DriveReport& report) {
    const auto& point = report.prediction.points.at(0);
    if (point.arena) {
        report.allocator.predicted = true;
        report.allocator.predictedAllocated = point.arena->allocatedBytes;
        report.allocator.predictedActive = point.arena->activeBytes;
    }
    if (!report.isMemcached()) {
        report.predictedBytesPerKey = point.usableBytesPerKey;
        return;
    }
    // memcached: chunk bytes per item beside the measured slab chunks (the hash index is not in them).
    std::map<std::uint64_t, std::uint64_t> predicted;
    std::uint64_t bytes = 0;
    for (const auto& c : point.sizeClasses)
        if (c.allocations) {
            predicted[c.classBytes] += c.allocations;
            bytes += c.classBytes * c.allocations;
        }
    const auto keys = report.prediction.trace.liveKeys;
    report.predictedBytesPerKey = keys ? static_cast<double>(bytes) / static_cast<double>(keys) : 0;
    std::map<std::uint64_t, DriveSlabClass> classes;
    for (auto& c : report.classes)
        classes[c.chunkBytes] = c;
    for (const auto& [chunk, count] : predicted) {
        classes[chunk].chunkBytes = chunk;
        classes[chunk].predictedChunks = count;
    }
    for (const auto& c : point.sizeClasses)
        if (c.heldSlabs) {
            classes[c.classBytes].chunkBytes = c.classBytes;
            classes[c.classBytes].predictedPages = c.heldSlabs;
            classes[c.classBytes].predictedEvictions = c.evictions;
        }
    report.classes.clear();
    for (const auto& [chunk, c] : classes)
        report.classes.push_back(c);
}

} // namespace drive

namespace {

class RespGets final : public GetConnection {
public:
    explicit RespGets(RespClient client)
        : m_client(std::move(client)) { }
    Status send(std::span<const KeyRequest> requests) override { return m_client.sendRequests(requests); }
    Expected<std::uint64_t> receive(std::span<const KeyRequest> requests) override {
        return m_client.receiveRequests(requests);
    }

private:
    RespClient m_client;
};

Expected<std::vector<DriveKeySample>> sampleKeys(RespClient& client, std::uint32_t count) {
    std::vector<DriveKeySample> out;
    for (std::uint32_t i = 0; i < count; ++i) {
        auto key = client.command({ "RANDOMKEY" });
        if (!key)
            return key.error();
        if (key->empty())
            break; // no keys
        DriveKeySample s;
        s.key = *key;
        auto encoding = client.command({ "OBJECT", "ENCODING", s.key });
        auto usage = client.command({ "MEMORY", "USAGE", s.key, "SAMPLES", "0" });
        if (!encoding || !usage)
            continue; // expired meanwhile
        s.encoding = *encoding;
        s.memoryUsage = usage->empty() ? 0 : std::stoull(*usage);
        out.push_back(std::move(s));
    }
    return out;
}

// The layout to predict with: the request's, as given; else the one the server's version decides; else
// (a development build, a fork, or calibrate) the candidate that reproduces calibration keys loaded into
// the empty server. When none does, the closest is used and the reason says so: the job still measures.
Status chooseLayout(
    const DriveRequest& r, const RespServerInfo& server, RespClient& client, DriveReport& report, std::string& layout) {
    auto notice = [&r](const std::string& text) {
        if (r.notice)
            r.notice(text);
    };
    if (!r.layout.empty()) {
        layout = r.layout;
        report.layoutReason = "given with the request";
        return Ok {};
    }
    if (!server.layout.empty() && !r.calibrate) {
        layout = server.layout;
        report.layoutReason = fmt::format("{} {} is a release with this layout", server.engine, server.version);
        return Ok {};
    }
    auto candidates = candidateLayouts(server.engine);
    if (!server.layout.empty())
        candidates.insert(candidates.begin(), server.layout);
    notice(fmt::format("calibrating: {} {} {}; loading {} shapes of calibration keys", server.engine, server.version,
        server.layout.empty() ? "does not tell its layout by its version" : "(calibration asked for)",
        calibrationShapes().size()));
    auto calibration = calibrateLayout(client, candidates, server.allocator);
    if (!calibration)
        return calibration.error();
    if (calibration->chosen) {
        layout = *calibration->chosen;
        report.layoutReason = fmt::format("calibrated: {}", calibration->summary());
        if (!server.layout.empty() && layout != server.layout)
            report.layoutReason += fmt::format(" (its version suggests {})", server.layout);
    } else {
        const CandidateFit* closest = nullptr;
        for (const auto& fit : calibration->fits)
            if (!closest || fit.worstErrorBytesPerKey < closest->worstErrorBytesPerKey)
                closest = &fit;
        layout = !server.layout.empty() ? server.layout : closest ? closest->layout : candidates.front();
        report.layoutReason = fmt::format("{}; predicting with {} anyway", calibration->summary(), layout);
        notice("warning: " + report.layoutReason);
    }
    report.calibration = std::move(*calibration);
    return Ok {};
}

// The Valkey/Redis drive once the server is up: everything up to the runs' begin, then the load (the trace's
// writes as commands, or a snapshot: an RDB file the server loads itself), the settled measurement and the run
// phase. Errors after the runs began end them (the caller's `runs`).
Status driveResp(const DriveRequest& r, drive::DriveTarget& target, DriveReport& report, MeasuredRuns& runs,
    TraceReader& trace, bool snapshot, ProgressSink* progress, std::stop_token stop) {
    auto connected = RespClient::connect(target.endpoint.host, target.endpoint.port);
    if (!connected)
        return connected.error();
    std::optional<RespClient> client;
    client.emplace(std::move(*connected));
    auto info = describeRespServer(*client);
    if (!info)
        return info.error();
    report.engine = info->engine;
    report.version = info->version;
    report.memAllocator = info->memAllocator;
    if (info->engine != engineName(r.engine) && r.notice)
        r.notice(fmt::format("note: the engine asked for is {} but the server is {} {}; modelling what it is",
            engineName(r.engine), info->engine, info->version));
    if (info->allocator.empty())
        return dataError(fmt::format(
            "the server's allocator '{}' has no model (jemalloc and libc builds are modelled)", info->memAllocator));
    auto keys = keyCount(*client);
    if (!keys)
        return keys.error();
    if (*keys != 0)
        return dataError(fmt::format("{} holds {} keys: layoutlab measures what a trace adds to an empty server "
                                     "(empty it yourself, or let layoutlab start one)",
            report.endpoint, *keys));
    std::string layout;
    if (auto ok = chooseLayout(r, *info, *client, report, layout); !ok)
        return ok;
    if (report.calibration && target.server) {
        // The calibration keys came and went, but the slabs they used stay half full: the trace is measured
        // on a fresh server of the same build, so that its allocator starts as the slab model's does.
        auto fresh = EngineServer::start(r.engine, target.server->binary(), r.serverArgs);
        if (!fresh)
            return fresh.error();
        target.server = std::move(*fresh);
        target.endpoint = target.server->endpoint();
        report.endpoint = target.describe();
        auto reconnected = RespClient::connect(target.endpoint.host, target.endpoint.port);
        if (!reconnected)
            return reconnected.error();
        client.reset();
        client.emplace(std::move(*reconnected));
    } else if (report.calibration && r.notice) {
        r.notice("note: calibrated on the attached server: the slabs its calibration keys used stay partly "
                 "empty, so allocator_active grows less over the load than on a fresh server");
    }
    report.chosenLayout = layout;
    if (r.notice)
        r.notice(fmt::format("model: {} ({})", layout, report.layoutReason));
    auto models = parseLayoutAndAllocator(layout, info->allocator);
    if (!models)
        return models.error();
    // A snapshot's keys as the loader makes them, which some layouts hold differently from a client's.
    if (const std::string loaded = layoutSpecForLoadedKeys(models->layout->spec());
        snapshot && loaded != models->layout->spec()) {
        models = parseLayoutAndAllocator(loaded, info->allocator);
        if (!models)
            return models.error();
    }
    auto parameters = drive::driveParameters(r, *models, report, target);
    parameters.extra["layout_choice"] = layoutChoiceJson(report);
    if (r.budget) // begins the runs itself, once it knows the budget leaves room for keys
        return drive::driveBudget(r, *client, *models, parameters, report, runs, trace, progress, stop);
    if (auto ok = runs.begin(r.tracePath, r.importOptions, "sim", "drive", parameters, r.toolVersion); !ok)
        return ok;
    auto limits = applyCollectionLimits(*client, r.collectionLimits);
    if (!limits)
        return limits.error();
    report.collectionLimits = *limits;
    if (auto warm = warmUpCommands(*client); !warm)
        return warm;
    const bool jemalloc = info->memAllocator.rfind("jemalloc", 0) == 0;
    if (jemalloc)
        if (auto drained = drainThreadCache(*client); !drained)
            return drained;
    auto before = waitUntilSettled(*client, SettleOptions { .stop = stop });
    if (!before)
        return before.error();
    if (jemalloc) {
        auto bins = readStartBins(*client);
        if (!bins)
            return bins.error();
        report.startBins = std::move(*bins);
    }
    report.usedBefore = before->usedMemory;
    report.clientsBefore = before->memory.clientsNormal.value_or(0);
    report.allocator.measured = before->memory.allocatorActive.has_value();
    report.allocator.allocatedBefore = before->memory.allocatorAllocated.value_or(0);
    report.allocator.activeBefore = before->memory.allocatorActive.value_or(0);
    if (progress)
        progress->phase("load");
    auto load = snapshot ? loadSnapshotFile(*client, r.tracePath, target.server->workDir(), stop)
        : r.asCaptured   ? loadCapturedCommands(*client, r.tracePath, r.pipeline, report.capturedSkips, stop)
                         : loadTrace(*client, trace, r.pipeline, kMaxRunKeys, report.collectionLimits,
                             drive::loadProgress(progress, trace.totalRequests()), stop);
    if (!load && snapshot) { // the server says why in its log (an RDB version it does not read, a module type)
        Error e = load.error();
        e.message += "\nthe server's log ends:\n" + target.server->logTail(600);
        return e;
    }
    if (!load)
        return load.error();
    report.load = std::move(*load);
    if (auto ok = drive::waitForExpiry(r, progress, stop); !ok)
        return ok;
    // Measured once the server has finished rehashing and its memory holds still: a keyspace that just
    // crossed a power of two keeps two tables until the cron has moved every entry.
    if (progress)
        progress->phase("settle");
    auto after = waitUntilSettled(*client, SettleOptions { .stop = stop });
    if (!after)
        return after.error();
    if (stop.stop_requested())
        return cancelledError();
    if (!after->settled && r.notice)
        r.notice(fmt::format("warning: the server did not settle: {}", after->describe()));
    report.settled = *after;
    report.measuredAtMs = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - report.load.started)
            .count());
    report.usedAfter = after->usedMemory;
    report.clientsAfter = after->memory.clientsNormal.value_or(0);
    report.allocator.allocatedAfter = after->memory.allocatorAllocated.value_or(0);
    report.allocator.activeAfter = after->memory.allocatorActive.value_or(0);
    if (auto ok = drive::countServerKeys(*client, report); !ok)
        return ok;
    auto samples = sampleKeys(*client, r.sampleKeys);
    if (!samples)
        return samples.error();
    report.samples = std::move(*samples);
    if (progress)
        progress->phase("run");
    auto run = drive::runPhase(
        r, report.load.readKeys,
        [&]() -> Expected<std::unique_ptr<GetConnection>> {
            auto c = RespClient::connect(target.endpoint.host, target.endpoint.port);
            if (!c)
                return c.error();
            return std::unique_ptr<GetConnection>(new RespGets(std::move(*c)));
        },
        stop);
    if (!run)
        return run.error();
    report.run = *run;
    return drive::finish(r, *models, report, runs, progress, stop);
}

} // namespace

Expected<DriveReport> runDriveJob(const DriveRequest& r, ResultsDb* db, ProgressSink* progress, std::stop_token stop) {
    if (auto ok = checkDriveRequest(r); !ok)
        return ok.error();
    // The trace is opened before a server is started: a trace that cannot be read starts nothing.
    auto trace = openTrace(r.tracePath, r.importOptions);
    if (!trace)
        return trace.error();
    auto format = traceFormat(r.tracePath, r.importOptions);
    if (!format)
        return format.error();
    const bool snapshot = *format == "rdb";
    if (auto ok = drive::checkSnapshotDrive(r, snapshot); !ok)
        return ok.error();
    if (auto ok = drive::checkCapturedDrive(r, *format); !ok)
        return ok.error();
    auto target = drive::DriveTarget::open(r);
    if (!target)
        return target.error();
    DriveReport report;
    report.trace = r.tracePath;
    report.started = target->server != nullptr;
    report.endpoint = target->describe();
    MeasuredRuns runs(db);
    const Status done = r.engine == Engine::Memcached
        ? drive::driveMemcached(r, *target, report, runs, **trace, progress, stop)
        : driveResp(r, *target, report, runs, **trace, snapshot, progress, stop);
    if (!done)
        return runs.end(target->failure(done.error()));
    return report;
}

} // namespace layoutlab
