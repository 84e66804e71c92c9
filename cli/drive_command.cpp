// SPDX-License-Identifier: MIT
// `layoutlab drive`: load a trace into a real Valkey or Redis server (started here, or attached with
// --connect) and put the server's memory per key beside the simulator's prediction for the same trace,
// the layout and allocator detected from the server itself.

#include "drive_command.h"
#include "interrupts.h"
#include "progress_bar.h"

#include "layoutlab/collect/engine_server.h"
#include "layoutlab/collect/layout_calibration.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace layoutlab::cli {

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

struct KeySample {
    std::string key;
    std::string encoding;
    std::uint64_t memoryUsage = 0;
};

// The layout the prediction uses, and why that one.
struct LayoutChoice {
    std::string layout;
    std::string reason;
    std::optional<Calibration> calibration;
};

struct DriveResult {
    RespServerInfo server;
    LayoutChoice choice;
    SettleReport settledBefore;
    SettleReport settledAfter;
    std::string endpoint;
    bool started = false;
    std::uint64_t usedBefore = 0;
    std::uint64_t usedAfter = 0;
    std::uint64_t serverKeys = 0;
    LoadReport load;
    std::vector<KeySample> samples;
    std::optional<RunPhaseResult> run;
    SimulationResult prediction;

    double measuredBytesPerKey() const {
        return serverKeys
            ? (static_cast<double>(usedAfter) - static_cast<double>(usedBefore)) / static_cast<double>(serverKeys)
            : 0;
    }
    double predictedBytesPerKey() const { return prediction.points.at(0).usableBytesPerKey; }
    // The prediction's error relative to what the server measured.
    double relativeError() const {
        const double m = measuredBytesPerKey();
        return m != 0 ? (predictedBytesPerKey() - m) / m : 0;
    }
};

Expected<std::vector<KeySample>> sampleKeys(RespClient& client, std::uint32_t count) {
    std::vector<KeySample> out;
    for (std::uint32_t i = 0; i < count; ++i) {
        auto key = client.command({ "RANDOMKEY" });
        if (!key)
            return key.error();
        if (key->empty())
            break; // no keys
        KeySample s;
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

std::string printable(const std::string& key) {
    std::string out;
    for (const unsigned char c : key)
        out += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
    return out;
}

nlohmann::json choiceJson(const LayoutChoice& c) {
    nlohmann::json out { { "layout", c.layout }, { "reason", c.reason }, { "calibration", nullptr } };
    if (c.calibration) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& row : c.calibration->rows)
            rows.push_back({ { "key_bytes", row.shape.shape.keyBytes }, { "value_bytes", row.shape.shape.valueBytes },
                { "ttl", row.shape.shape.hasTtl }, { "kind", static_cast<int>(row.shape.shape.kind) },
                { "keys", row.shape.keys }, { "measured_bytes_per_key", row.measuredBytesPerKey },
                { "encoding", row.encoding } });
        nlohmann::json matching = nlohmann::json::array();
        for (const auto& fit : c.calibration->fits)
            if (fit.matches)
                matching.push_back(fit.layout);
        out["calibration"] = { { "shapes", rows }, { "matching", matching },
            { "chosen", c.calibration->chosen ? nlohmann::json(*c.calibration->chosen) : nlohmann::json(nullptr) },
            { "summary", c.calibration->summary() } };
    }
    return out;
}

nlohmann::json settleJson(const SettleReport& s) {
    return { { "settled", s.settled }, { "seconds", s.seconds }, { "rehash_known", s.rehashKnown },
        { "still_rehashing", s.stillRehashing } };
}

nlohmann::json renderJson(
    const DriveResult& r, const std::string& trace, std::int64_t predictionRun, std::int64_t measuredRun) {
    nlohmann::json samples = nlohmann::json::array();
    for (const auto& s : r.samples)
        samples.push_back(
            { { "key", printable(s.key) }, { "encoding", s.encoding }, { "memory_usage", s.memoryUsage } });
    const auto& p = r.prediction.points.at(0);
    nlohmann::json out { { "trace", trace }, { "engine", r.server.engine }, { "version", r.server.version },
        { "endpoint", r.endpoint }, { "started", r.started }, { "mem_allocator", r.server.memAllocator },
        { "layout", r.prediction.layoutSpec }, { "allocator", r.prediction.allocatorSpec },
        { "layout_choice", choiceJson(r.choice) }, { "settled", settleJson(r.settledAfter) },
        { "threshold", p.threshold }, { "used_memory_before", r.usedBefore }, { "used_memory_after", r.usedAfter },
        { "server_keys", r.serverKeys }, { "predicted_keys", r.prediction.trace.liveKeys },
        { "measured_bytes_per_key", r.measuredBytesPerKey() }, { "predicted_bytes_per_key", r.predictedBytesPerKey() },
        { "relative_error", r.relativeError() },
        { "load",
            { { "requests", r.load.requests }, { "commands", r.load.commands }, { "reads_skipped", r.load.reads },
                { "seconds", r.load.seconds },
                { "commands_per_sec", r.load.seconds > 0 ? static_cast<double>(r.load.commands) / r.load.seconds : 0 },
                { "key_names_repeat", r.load.namesRepeat } } },
        { "samples", samples }, { "run", runJson(r.run) },
        { "ops_per_sec", r.run ? nlohmann::json(r.run->requestsPerSecond) : nlohmann::json(nullptr) } };
    if (predictionRun || measuredRun)
        out["runs"] = { { "prediction", predictionRun }, { "measured", measuredRun } };
    return out;
}

std::string indented(const std::string& text, std::string_view prefix) {
    std::string out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        out += std::string(prefix) + line + "\n";
    return out;
}

std::string renderTable(const DriveResult& r, const std::string& trace) {
    std::string out = fmt::format("trace      {}\nserver     {} {} at {} ({}), {}\nmodel      {} under {}\n"
                                  "           chosen because: {}\n",
        trace, r.server.engine, r.server.version, r.endpoint, r.started ? "started for this run" : "attached",
        r.server.memAllocator, r.prediction.layoutSpec, r.prediction.allocatorSpec, r.choice.reason);
    if (r.choice.calibration)
        out += indented(r.choice.calibration->table(), "           ");
    out += fmt::format("measured   {}\n", r.settledAfter.describe());
    out += fmt::format("load       {} requests: {} commands in {:.2f} s ({:.0f} commands/s); {} GETs left for a run "
                       "phase\n\n",
        r.load.requests, r.load.commands, r.load.seconds,
        r.load.seconds > 0 ? static_cast<double>(r.load.commands) / r.load.seconds : 0.0, r.load.reads);
    out += fmt::format("{:<26}{:>14}{:>14}\n", "", "measured", "predicted");
    out += fmt::format("{:<26}{:>14}{:>14}\n", "live keys", r.serverKeys, r.prediction.trace.liveKeys);
    out += fmt::format("{:<26}{:>14.2f}{:>14.2f}   error {:+.2f}%\n", "bytes per key", r.measuredBytesPerKey(),
        r.predictedBytesPerKey(), 100 * r.relativeError());
    out += fmt::format("{:<26}{:>14}\n", "used_memory before", r.usedBefore);
    out += fmt::format("{:<26}{:>14}\n", "used_memory after", r.usedAfter);
    if (!r.samples.empty()) {
        out += "\nsampled keys (OBJECT ENCODING, MEMORY USAGE):\n";
        for (const auto& s : r.samples)
            out += fmt::format("  {:<40} {:<8} {:>8} B\n", printable(s.key), s.encoding, s.memoryUsage);
    }
    out += runTable(r.run);
    if (r.serverKeys != r.prediction.trace.liveKeys)
        out += "\nnote: the server holds a different number of keys than the replay predicts (TTLs that passed "
               "in wall-clock time during the load expire on the server, not in the trace's time)\n";
    if (r.load.namesRepeat)
        out += "\nnote: some key sizes are too small to give every key its own name: keys of those sizes share "
               "names on the server\n";
    return out;
}

std::vector<Measurement> measurementsOf(const DriveResult& r) {
    const std::string engine = r.server.engine + "-server";
    std::vector<Measurement> out;
    auto add = [&](const std::string& metric, double value, const std::string& unit) {
        Measurement m;
        m.engine = engine;
        m.engineVersion = r.server.version;
        m.metric = metric;
        m.value = value;
        m.unit = unit;
        out.push_back(std::move(m));
    };
    add("bytes_per_key", r.measuredBytesPerKey(), "bytes");
    add("used_memory_before", static_cast<double>(r.usedBefore), "bytes");
    add("used_memory_after", static_cast<double>(r.usedAfter), "bytes");
    add("keys", static_cast<double>(r.serverKeys), "keys");
    add("load_seconds", r.load.seconds, "s");
    add("load_commands", static_cast<double>(r.load.commands), "commands");
    addRunMeasurements(r.run, engine, r.server.version, out);
    return out;
}

// The layout to predict with: --layout as given; else the one the server's version decides; else (a
// development build, a fork, or --calibrate) the candidate that reproduces calibration keys loaded into
// the empty server. When none does, the closest is used and the reason says so: the run still measures.
Expected<LayoutChoice> chooseLayout(const DriveOptions& o, const RespServerInfo& server, RespClient& client) {
    if (!o.layout.empty())
        return LayoutChoice { o.layout, "given with --layout", std::nullopt };
    if (!server.layout.empty() && !o.calibrate)
        return LayoutChoice { server.layout,
            fmt::format("{} {} is a release with this layout", server.engine, server.version), std::nullopt };
    auto candidates = candidateLayouts(server.engine);
    if (!server.layout.empty())
        candidates.insert(candidates.begin(), server.layout);
    fmt::print(stderr, "calibrating: {} {} {}; loading {} shapes of calibration keys\n", server.engine, server.version,
        server.layout.empty() ? "does not tell its layout by its version" : "(--calibrate)",
        calibrationShapes().size());
    auto calibration = calibrateLayout(client, candidates, server.allocator);
    if (!calibration)
        return calibration.error();
    LayoutChoice choice;
    if (calibration->chosen) {
        choice.layout = *calibration->chosen;
        choice.reason = fmt::format("calibrated: {}", calibration->summary());
        if (!server.layout.empty() && choice.layout != server.layout)
            choice.reason += fmt::format(" (its version suggests {})", server.layout);
    } else {
        const CandidateFit* closest = nullptr;
        for (const auto& fit : calibration->fits)
            if (!closest || fit.worstErrorBytesPerKey < closest->worstErrorBytesPerKey)
                closest = &fit;
        choice.layout = !server.layout.empty() ? server.layout : closest ? closest->layout : candidates.front();
        choice.reason = fmt::format("{}; predicting with {} anyway", calibration->summary(), choice.layout);
        fmt::print(stderr, "warning: {}\n", choice.reason);
    }
    choice.calibration = std::move(*calibration);
    return choice;
}

int runDriveResp(const DriveOptions& o, Engine engine, const ImportOptions& importOptions) {
    auto trace = openTrace(o.trace, importOptions);
    if (!trace)
        return reportError(trace.error());
    auto target = driveTarget(o, engine);
    if (!target)
        return reportError(target.error());
    DriveResult result;
    result.started = target->server != nullptr;
    result.endpoint = target->describe();
    auto client = RespClient::connect(target->endpoint.host, target->endpoint.port);
    if (!client)
        return reportError(client.error());
    auto info = describeRespServer(*client);
    if (!info)
        return reportError(info.error());
    result.server = *info;
    if (result.server.engine != engineName(engine))
        fmt::print(stderr, "note: --engine {} but the server is {} {}; modelling what it is\n", o.engine,
            result.server.engine, result.server.version);
    if (result.server.allocator.empty())
        return reportError(
            dataError(fmt::format("the server's allocator '{}' has no model (jemalloc and libc builds are modelled)",
                result.server.memAllocator)));
    auto keys = keyCount(*client);
    if (!keys)
        return reportError(keys.error());
    if (*keys != 0)
        return reportError(dataError(fmt::format("{} holds {} keys: layoutlab measures what a trace adds to an empty "
                                                 "server (empty it yourself, or let layoutlab start one)",
            result.endpoint, *keys)));
    auto choice = chooseLayout(o, result.server, *client);
    if (!choice) {
        DriveRuns none; // nothing is stored before the layout is known
        return none.fail(choice.error(), *target);
    }
    result.choice = std::move(*choice);
    fmt::print(stderr, "model: {} ({})\n", result.choice.layout, result.choice.reason);
    auto models = parseLayoutAndAllocator(result.choice.layout, result.server.allocator);
    if (!models)
        return reportError(models.error());

    DriveRuns runs;
    if (auto ok = runs.begin(o, importOptions, models->layout->spec(), models->allocator->spec(),
            { { "engine", result.server.engine }, { "engine_version", result.server.version },
                { "endpoint", result.endpoint }, { "started", result.started },
                { "server_binary", target->server ? target->server->binary() : std::string() },
                { "mem_allocator", result.server.memAllocator }, { "layout_choice", choiceJson(result.choice) } });
        !ok)
        return reportError(ok.error());
    if (auto warm = warmUpCommands(*client); !warm)
        return runs.fail(warm.error(), *target);
    auto before = waitUntilSettled(*client, SettleOptions { .stop = interruptToken() });
    if (!before)
        return runs.fail(before.error(), *target);
    result.settledBefore = *before;
    result.usedBefore = before->usedMemory;
    auto load = [&] {
        ProgressBar bar("load");
        const std::uint64_t total = (*trace)->totalRequests();
        return loadTrace(*client, **trace, o.pipeline, kMaxRunKeys, loadProgress(bar, total), interruptToken());
    }();
    if (!load)
        return runs.fail(load.error(), *target);
    result.load = *load;
    // Measured once the server has finished rehashing and its memory holds still: a keyspace that just
    // crossed a power of two keeps two tables until the cron has moved every entry.
    auto after = waitUntilSettled(*client, SettleOptions { .stop = interruptToken() });
    if (!after)
        return runs.fail(after.error(), *target);
    if (interruptToken().stop_requested())
        return runs.fail(cancelledError(), *target);
    if (!after->settled)
        fmt::print(stderr, "warning: the server did not settle: {}\n", after->describe());
    result.settledAfter = *after;
    result.usedAfter = after->usedMemory;
    auto count = keyCount(*client);
    if (!count)
        return runs.fail(count.error(), *target);
    result.serverKeys = *count;
    auto samples = sampleKeys(*client, o.sampleKeys);
    if (!samples)
        return runs.fail(samples.error(), *target);
    result.samples = *samples;
    auto run = runPhase(o, result.load.readKeys, [&]() -> Expected<std::unique_ptr<GetConnection>> {
        auto c = RespClient::connect(target->endpoint.host, target->endpoint.port);
        if (!c)
            return c.error();
        return std::unique_ptr<GetConnection>(new RespGets(std::move(*c)));
    });
    if (!run)
        return runs.fail(run.error(), *target);
    result.run = *run;
    return finishDrive(
        o, importOptions, *models, result, runs, *target,
        [&o](const auto& r, std::int64_t prediction, std::int64_t measured) {
            return renderJson(r, o.trace, prediction, measured);
        },
        [&o](const auto& r) { return renderTable(r, o.trace); }, [](const auto& r) { return measurementsOf(r); });
}

int runDrive(const DriveOptions& o) {
    const auto engine = parseEngine(o.engine);
    if (!engine)
        return reportError(
            usageError(fmt::format("--engine must be valkey, redis or memcached, got '{}'", o.engine), "--engine"));
    if (!o.connect.empty() && !o.serverBinary.empty())
        return reportError(usageError("give --server-binary or --connect, not both", "--connect"));
    if (o.pipeline == 0)
        return reportError(usageError("--pipeline must be at least 1", "--pipeline"));
    if (o.connections == 0 || o.connections > 256)
        return reportError(usageError("--connections must be between 1 and 256", "--connections"));
    if (o.runPipeline == 0)
        return reportError(usageError("--run-pipeline must be at least 1", "--run-pipeline"));
    if (o.runSeconds < 0)
        return reportError(usageError("--run-seconds cannot be negative", "--run-seconds"));
    if (*engine != Engine::Memcached && o.framing != "raw")
        return reportError(
            usageError("--framing applies to memcached (Dalli and Rails store framed values there)", "--framing"));
    if (*engine == Engine::Memcached && (!o.layout.empty() || o.calibrate))
        return reportError(usageError("--layout and --calibrate apply to valkey and redis", "--layout"));
    if (*engine == Engine::Memcached)
        return runDriveMemcached(o);
    auto importOptions = o.source.toImportOptions();
    if (!importOptions)
        return reportError(importOptions.error());
    return runDriveResp(o, *engine, *importOptions);
}

} // namespace

void addDriveCommand(CLI::App& app, int& status) {
    auto o = std::make_shared<DriveOptions>();
    auto* cmd = app.add_subcommand("drive",
        "Load a trace into a real Valkey, Redis or memcached server and put its memory per key beside the "
        "simulator's prediction");
    cmd->add_option("trace", o->trace, "Trace: a layoutlab trace, or any importable format (see `import`)")->required();
    cmd->add_option("--engine", o->engine, "valkey, redis or memcached")->required();
    cmd->add_option("--framing", o->framing,
           "memcached: how values are framed before storing: raw, marshal-utf8, marshal-binary, rails-7.1")
        ->capture_default_str();
    cmd->add_option("--layout", o->layout,
        "valkey, redis: predict with this layout (see `layouts`) instead of the one the server is detected to have");
    cmd->add_flag("--calibrate", o->calibrate,
        "valkey, redis: tell the server's layout from calibration keys even when its version names one");
    cmd->add_option("--server-binary", o->serverBinary,
        "Server to start (default: the engine's binary on PATH), on 127.0.0.1, a free port, persistence off");
    cmd->add_option("--connect", o->connect, "Attach to a running, empty server at HOST:PORT instead of starting one");
    cmd->add_flag("--allow-remote", o->allowRemote, "Allow --connect to a host other than loopback");
    cmd->add_option("--pipeline", o->pipeline, "Commands per pipelined batch in the load phase")->capture_default_str();
    cmd->add_option("--sample-keys", o->sampleKeys, "Keys sampled for OBJECT ENCODING and MEMORY USAGE")
        ->capture_default_str();
    cmd->add_option("--run-requests", o->runRequests,
           "Run phase: GETs to send, the trace's reads in order (0 with no --run-seconds: no run phase)")
        ->capture_default_str();
    cmd->add_option("--run-seconds", o->runSeconds, "Run phase: run for this long instead of a number of GETs");
    cmd->add_option("--run-set-fraction", o->runSetFraction,
           "Run phase: this share of the requests are SETs of the key's value size instead of GETs")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--connections", o->connections, "Run phase: client connections, one thread each")
        ->capture_default_str();
    cmd->add_option("--run-pipeline", o->runPipeline, "Run phase: GETs per round trip on each connection")
        ->capture_default_str();
    o->source.addTo(*cmd);
    o->db.addTo(*cmd);
    cmd->add_flag("--json", o->json,
        "One JSON object (measured_bytes_per_key, predicted_bytes_per_key, relative_error, load, samples)");
    cmd->add_option("-o,--output", o->output, "Write the output to this file instead of stdout");
    cmd->callback([o, &status] { status = runDrive(*o); });
}

} // namespace layoutlab::cli
