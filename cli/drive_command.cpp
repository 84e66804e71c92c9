// SPDX-License-Identifier: MIT
// `layoutlab drive`: load a trace into a real Valkey or Redis server (started here, or attached with
// --connect) and put the server's memory per key beside the simulator's prediction for the same trace,
// the layout and allocator detected from the server itself.

#include "commands.h"
#include "progress_bar.h"
#include "run_store.h"

#include "layoutlab/collect/engine_server.h"
#include "layoutlab/collect/resp_driver.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/simulation.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab::cli {

namespace {

struct DriveOptions {
    std::string trace;
    std::string engine;
    std::string serverBinary;
    std::string connect;
    bool allowRemote = false;
    std::uint32_t pipeline = 256;
    std::uint32_t sampleKeys = 5;
    bool json = false;
    std::string output;
    TraceSourceOptions source;
    DbOptions db;
};

struct KeySample {
    std::string key;
    std::string encoding;
    std::uint64_t memoryUsage = 0;
};

struct DriveResult {
    RespServerInfo server;
    std::string endpoint;
    bool started = false;
    std::uint64_t usedBefore = 0;
    std::uint64_t usedAfter = 0;
    std::uint64_t serverKeys = 0;
    LoadReport load;
    std::vector<KeySample> samples;
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
        { "threshold", p.threshold }, { "used_memory_before", r.usedBefore }, { "used_memory_after", r.usedAfter },
        { "server_keys", r.serverKeys }, { "predicted_keys", r.prediction.trace.liveKeys },
        { "measured_bytes_per_key", r.measuredBytesPerKey() }, { "predicted_bytes_per_key", r.predictedBytesPerKey() },
        { "relative_error", r.relativeError() },
        { "load",
            { { "requests", r.load.requests }, { "commands", r.load.commands }, { "reads_skipped", r.load.reads },
                { "seconds", r.load.seconds },
                { "commands_per_sec", r.load.seconds > 0 ? static_cast<double>(r.load.commands) / r.load.seconds : 0 },
                { "key_names_repeat", r.load.namesRepeat } } },
        { "samples", samples } };
    if (predictionRun || measuredRun)
        out["runs"] = { { "prediction", predictionRun }, { "measured", measuredRun } };
    return out;
}

std::string renderTable(const DriveResult& r, const std::string& trace) {
    std::string out = fmt::format("trace      {}\nserver     {} {} at {} ({}), {}\nmodel      {} under {}\n", trace,
        r.server.engine, r.server.version, r.endpoint, r.started ? "started for this run" : "attached",
        r.server.memAllocator, r.prediction.layoutSpec, r.prediction.allocatorSpec);
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
    return out;
}

int runDrive(const DriveOptions& o) {
    const auto engine = parseEngine(o.engine);
    if (!engine)
        return reportError(
            usageError(fmt::format("--engine must be valkey, redis or memcached, got '{}'", o.engine), "--engine"));
    if (*engine == Engine::Memcached)
        return reportError(usageError("driving memcached is not in this build yet: --engine valkey or redis "
                                      "(memcached's slab classes are validated by the test suite meanwhile)",
            "--engine"));
    if (!o.connect.empty() && !o.serverBinary.empty())
        return reportError(usageError("give --server-binary or --connect, not both", "--connect"));
    if (o.pipeline == 0)
        return reportError(usageError("--pipeline must be at least 1", "--pipeline"));
    auto importOptions = o.source.toImportOptions();
    if (!importOptions)
        return reportError(importOptions.error());
    auto trace = openTrace(o.trace, *importOptions);
    if (!trace)
        return reportError(trace.error());

    DriveResult result;
    std::unique_ptr<EngineServer> server;
    Endpoint endpoint;
    if (o.connect.empty()) {
        auto started = EngineServer::start(*engine, o.serverBinary);
        if (!started)
            return reportError(started.error());
        server = std::move(*started);
        endpoint = server->endpoint();
        result.started = true;
    } else {
        auto parsed = parseEndpoint(o.connect, o.allowRemote);
        if (!parsed)
            return reportError(parsed.error());
        endpoint = *parsed;
    }
    result.endpoint = fmt::format("{}:{}", endpoint.host, endpoint.port);
    auto client = RespClient::connect(endpoint.host, endpoint.port);
    if (!client)
        return reportError(client.error());
    auto info = describeRespServer(*client);
    if (!info)
        return reportError(info.error());
    result.server = *info;
    if (result.server.engine != engineName(*engine))
        fmt::print(stderr, "note: --engine {} but the server is {} {}; modelling what it is\n", o.engine,
            result.server.engine, result.server.version);
    if (result.server.layout.empty())
        return reportError(dataError(fmt::format("no layout model for {} {} (models: Redis 7, Valkey 8 and 9)",
            result.server.engine, result.server.version)));
    if (result.server.allocator.empty())
        return reportError(
            dataError(fmt::format("the server's allocator '{}' has no model (jemalloc and libc builds are modelled)",
                result.server.memAllocator)));
    auto models = parseLayoutAndAllocator(result.server.layout, result.server.allocator);
    if (!models)
        return reportError(models.error());
    auto keys = keyCount(*client);
    if (!keys)
        return reportError(keys.error());
    if (*keys != 0)
        return reportError(dataError(fmt::format("{} holds {} keys: layoutlab measures what a trace adds to an empty "
                                                 "server (empty it yourself, or let layoutlab start one)",
            result.endpoint, *keys)));

    auto db = o.db.open();
    if (!db)
        return reportError(db.error());
    std::int64_t predictionRun = 0, measuredRun = 0;
    if (*db) {
        const nlohmann::json parameters { { "trace", o.trace }, { "engine", result.server.engine },
            { "engine_version", result.server.version }, { "endpoint", result.endpoint }, { "started", result.started },
            { "server_binary", server ? server->binary() : std::string() },
            { "mem_allocator", result.server.memAllocator }, { "pipeline", o.pipeline }, { "format", o.source.format },
            { "on_error", o.source.onError }, { "key_size", o.source.keyBytes } };
        auto runs = beginMeasuredRuns(**db, o.trace, *importOptions, "sim", "drive", models->layout->spec(),
            models->allocator->spec(), parameters);
        if (!runs)
            return reportError(runs.error());
        predictionRun = runs->prediction;
        measuredRun = runs->measured;
    }
    auto fail = [&](const Error& e) {
        if (*db) {
            (void)(*db)->failRun(predictionRun, e.describe());
            (void)(*db)->failRun(measuredRun, e.describe());
        }
        Error shown = e;
        if (server && !server->running())
            shown.message += "\nthe server exited; its log ends:\n" + server->logTail();
        return reportError(shown);
    };

    auto before = usedMemory(*client);
    if (!before)
        return fail(before.error());
    result.usedBefore = *before;
    auto load = [&] {
        ProgressBar bar("load");
        const std::uint64_t total = (*trace)->totalRequests();
        return loadTrace(*client, **trace, o.pipeline, [&](std::uint64_t done) {
            bar.progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
        });
    }();
    if (!load)
        return fail(load.error());
    result.load = *load;
    auto after = usedMemory(*client);
    if (!after)
        return fail(after.error());
    result.usedAfter = *after;
    auto count = keyCount(*client);
    if (!count)
        return fail(count.error());
    result.serverKeys = *count;
    auto samples = sampleKeys(*client, o.sampleKeys);
    if (!samples)
        return fail(samples.error());
    result.samples = *samples;

    auto again = openTrace(o.trace, *importOptions);
    if (!again)
        return fail(again.error());
    auto prediction = [&] {
        ProgressBar bar("predict");
        return simulate({ models->layout, models->allocator, {}, std::nullopt }, **again, &bar);
    }();
    if (!prediction)
        return fail(prediction.error());
    result.prediction = std::move(*prediction);

    if (*db) {
        if (auto ok = (*db)->completeRun(predictionRun, result.prediction); !ok)
            return fail(ok.error());
        if (auto ok
            = (*db)->completeMeasuredRun(measuredRun, measurementsOf(result), renderJson(result, o.trace, 0, 0).dump());
            !ok)
            return fail(ok.error());
        fmt::print(stderr, "stored as runs {} (prediction) and {} (measured) in {}\n", predictionRun, measuredRun,
            o.db.resolvedPath());
    }
    const std::string text = o.json ? renderJson(result, o.trace, predictionRun, measuredRun).dump(2) + "\n"
                                    : renderTable(result, o.trace);
    if (auto ok = writeOutput(text, o.output); !ok)
        return reportError(ok.error());
    return kExitOk;
}

} // namespace

void addDriveCommand(CLI::App& app, int& status) {
    auto o = std::make_shared<DriveOptions>();
    auto* cmd = app.add_subcommand("drive",
        "Load a trace into a real Valkey or Redis server and put its memory per key beside the simulator's "
        "prediction");
    cmd->add_option("trace", o->trace, "Trace: a layoutlab trace, or any importable format (see `import`)")->required();
    cmd->add_option("--engine", o->engine, "valkey or redis (memcached: not yet)")->required();
    cmd->add_option("--server-binary", o->serverBinary,
        "Server to start (default: the engine's binary on PATH), on 127.0.0.1, a free port, persistence off");
    cmd->add_option("--connect", o->connect, "Attach to a running, empty server at HOST:PORT instead of starting one");
    cmd->add_flag("--allow-remote", o->allowRemote, "Allow --connect to a host other than loopback");
    cmd->add_option("--pipeline", o->pipeline, "Commands per pipelined batch in the load phase")->capture_default_str();
    cmd->add_option("--sample-keys", o->sampleKeys, "Keys sampled for OBJECT ENCODING and MEMORY USAGE")
        ->capture_default_str();
    o->source.addTo(*cmd);
    o->db.addTo(*cmd);
    cmd->add_flag("--json", o->json,
        "One JSON object (measured_bytes_per_key, predicted_bytes_per_key, relative_error, load, samples)");
    cmd->add_option("-o,--output", o->output, "Write the output to this file instead of stdout");
    cmd->callback([o, &status] { status = runDrive(*o); });
}

} // namespace layoutlab::cli
