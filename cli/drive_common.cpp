// SPDX-License-Identifier: MIT
// What every engine's `drive` shares: the server (started or attached), the two stored runs, the
// prediction.

#include "drive_command.h"
#include "interrupts.h"
#include "progress_bar.h"

#include "layoutlab/report/reporter.h"
#include "layoutlab/sim/simulation.h"

#include <fmt/format.h>
#include <thread>

namespace layoutlab::cli {

Expected<DriveTarget> driveTarget(const DriveOptions& o, Engine engine) {
    DriveTarget target;
    if (o.connect.empty()) {
        auto started = EngineServer::start(engine, o.serverBinary);
        if (!started)
            return started.error();
        target.server = std::move(*started);
        target.endpoint = target.server->endpoint();
        return target;
    }
    auto parsed = parseEndpoint(o.connect, o.allowRemote);
    if (!parsed)
        return parsed.error();
    target.endpoint = *parsed;
    return target;
}

Status DriveRuns::begin(const DriveOptions& o, const ImportOptions& importOptions, const std::string& layout,
    const std::string& allocator, const nlohmann::json& parameters) {
    auto db = o.db.open();
    if (!db)
        return db.error();
    m_db = std::move(*db);
    m_path = o.db.resolvedPath();
    if (!m_db)
        return Ok {};
    nlohmann::json all = parameters;
    all.update({ { "trace", o.trace }, { "format", o.source.format }, { "on_error", o.source.onError },
        { "key_size", o.source.keyBytes }, { "pipeline", o.pipeline } });
    auto runs = beginMeasuredRuns(*m_db, o.trace, importOptions, "sim", "drive", layout, allocator, all);
    if (!runs)
        return runs.error();
    m_runs = *runs;
    m_heartbeat
        = std::make_unique<RunHeartbeat>(m_path, std::vector<std::int64_t> { m_runs.prediction, m_runs.measured });
    return Ok {};
}

Status DriveRuns::complete(
    const SimulationResult& prediction, const std::vector<Measurement>& measurements, const std::string& summaryJson) {
    if (!m_db)
        return Ok {};
    m_heartbeat.reset();
    // Results the database will not take are kept beside it, never dropped.
    auto keep = [&](const Error& why) {
        auto rows = nlohmann::json::array();
        for (const auto& m : measurements)
            rows.push_back({ { "threshold", m.threshold ? nlohmann::json(*m.threshold) : nlohmann::json(nullptr) },
                { "engine", m.engine }, { "engine_version", m.engineVersion }, { "metric", m.metric },
                { "value", m.value }, { "unit", m.unit } });
        return keepUnstoredResults(*m_db, { m_runs.prediction, m_runs.measured },
            { { "prediction", toJson(prediction) }, { "measurements", rows },
                { "summary", nlohmann::json::parse(summaryJson, nullptr, false) } },
            why);
    };
    if (auto ok = m_db->completeRun(m_runs.prediction, prediction); !ok)
        return keep(ok.error());
    if (auto ok = m_db->completeMeasuredRun(m_runs.measured, measurements, summaryJson); !ok)
        return keep(ok.error());
    fmt::print(
        stderr, "stored as runs {} (prediction) and {} (measured) in {}\n", m_runs.prediction, m_runs.measured, m_path);
    return Ok {};
}

int DriveRuns::fail(const Error& error, DriveTarget& target) {
    m_heartbeat.reset();
    if (error.code == ErrorCode::Cancelled) {
        Error stopped = error;
        stopped.message = "stopped; the server was stopped and its directory removed";
        if (m_db && m_runs.measured) {
            (void)m_db->interruptRun(m_runs.prediction);
            (void)m_db->interruptRun(m_runs.measured);
            stopped.message += fmt::format("; runs {} and {} marked interrupted", m_runs.prediction, m_runs.measured);
        }
        target.server.reset(); // stopped now, before the message: nothing is left behind when it shows
        return reportError(stopped);
    }
    if (m_db && m_runs.measured) {
        (void)m_db->failRun(m_runs.prediction, error.describe());
        (void)m_db->failRun(m_runs.measured, error.describe());
    }
    Error shown = error;
    // A lost connection often means the server died: give its exit a moment to show before looking.
    for (int i = 0; i < 50 && error.code == ErrorCode::Io && target.server && target.server->running(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (target.server && !target.server->running())
        shown.message += "\nthe server exited; its log ends:\n" + target.server->logTail();
    return reportError(shown);
}

Expected<SimulationResult> predictDrive(
    const DriveOptions& o, const ImportOptions& importOptions, const LayoutPtr& layout, const AllocatorPtr& alloc) {
    auto trace = openTrace(o.trace, importOptions);
    if (!trace)
        return trace.error();
    ProgressBar bar("predict");
    return simulate({ layout, alloc, {}, std::nullopt }, **trace, &bar, interruptToken());
}

Expected<std::optional<RunPhaseResult>> runPhase(const DriveOptions& o, const std::vector<RunKey>& readKeys,
    const std::function<Expected<std::unique_ptr<GetConnection>>()>& connect) {
    if ((o.runRequests == 0 && o.runSeconds <= 0) || readKeys.empty())
        return std::optional<RunPhaseResult>();
    RunPhaseConfig config;
    config.connections = o.connections;
    config.pipeline = o.runPipeline;
    config.maxRequests = o.runSeconds > 0 ? 0 : o.runRequests;
    config.maxSeconds = o.runSeconds;
    config.setFraction = o.runSetFraction;
    auto result = runGets(readKeys, config, connect, interruptToken());
    if (!result)
        return result.error();
    return std::optional<RunPhaseResult>(*result);
}

namespace {
// The client's CPU time as a share of the machine's cores over the run.
double clientCpuShare(const RunPhaseResult& r) {
    const double cores = std::max(1u, std::thread::hardware_concurrency());
    return r.seconds > 0 ? r.clientCpuSeconds / (r.seconds * cores) : 0;
}
} // namespace

nlohmann::json runJson(const std::optional<RunPhaseResult>& run) {
    if (!run)
        return nullptr;
    return { { "requests", run->requests }, { "sets", run->sets }, { "hits", run->hits }, { "seconds", run->seconds },
        { "ops_per_sec", run->requestsPerSecond }, { "connections", run->connections }, { "pipeline", run->pipeline },
        { "latency_us", { { "p50", run->p50Ns / 1e3 }, { "p99", run->p99Ns / 1e3 }, { "p99.9", run->p999Ns / 1e3 } } },
        { "client_cpu_seconds", run->clientCpuSeconds }, { "client_cpu_share", clientCpuShare(*run) } };
}

std::string runTable(const std::optional<RunPhaseResult>& run) {
    if (!run)
        return "\nrun phase  skipped (no reads in the trace, or --run-requests 0)\n";
    const std::uint64_t gets = run->requests - run->sets;
    std::string out = fmt::format(
        "\nrun phase  {} requests ({} GETs, {:.1f}% hits; {} SETs) from {} connections x pipeline {} in {:.2f} s\n",
        run->requests, gets, gets ? 100.0 * static_cast<double>(run->hits) / static_cast<double>(gets) : 0.0, run->sets,
        run->connections, run->pipeline, run->seconds);
    out += fmt::format(
        "           {:.0f} requests/s; latency per request p50 {:.1f} us, p99 {:.1f} us, p99.9 {:.1f} us\n",
        run->requestsPerSecond, run->p50Ns / 1e3, run->p99Ns / 1e3, run->p999Ns / 1e3);
    const double share = clientCpuShare(*run);
    out += fmt::format("           client CPU {:.2f} s, {:.0f}% of this machine{}\n", run->clientCpuSeconds,
        100 * share,
        share > 0.8 ? ": the client is saturated, so requests/s is the client's limit, not the server's" : "");
    return out;
}

void addRunMeasurements(const std::optional<RunPhaseResult>& run, const std::string& engine, const std::string& version,
    std::vector<Measurement>& out) {
    if (!run)
        return;
    const std::string details = nlohmann::json { { "connections", run->connections }, { "pipeline", run->pipeline },
        { "requests", run->requests },
        { "hits", run->hits } }.dump();
    auto add = [&](const char* metric, double value, const char* unit) {
        out.push_back({ std::nullopt, engine, version, metric, value, unit, details });
    };
    add("gets_per_sec", run->requestsPerSecond, "ops/s");
    add("get_latency_p50", static_cast<double>(run->p50Ns), "ns");
    add("get_latency_p99", static_cast<double>(run->p99Ns), "ns");
    add("get_latency_p999", static_cast<double>(run->p999Ns), "ns");
    add("client_cpu_seconds", run->clientCpuSeconds, "s");
}

} // namespace layoutlab::cli
