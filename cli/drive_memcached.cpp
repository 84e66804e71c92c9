// SPDX-License-Identifier: MIT
// `layoutlab drive --engine memcached`: load a trace into a real memcached through a value framing and
// put its slab classes beside the prediction: chunks per class, and slab-chunk bytes per item.

#include "drive_command.h"
#include "interrupts.h"
#include "progress_bar.h"

#include "layoutlab/collect/memcached_driver.h"
#include "layoutlab/layout/layout_registry.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

namespace layoutlab::cli {

namespace {

class MemcachedGets final : public GetConnection {
public:
    MemcachedGets(MemcachedClient client, Framing framing)
        : m_client(std::move(client))
        , m_framing(framing) { }
    Status send(std::span<const KeyRequest> requests) override { return m_client.sendRequests(requests, m_framing); }
    Expected<std::uint64_t> receive(std::span<const KeyRequest> requests) override {
        return m_client.receiveRequests(requests);
    }

private:
    MemcachedClient m_client;
    Framing m_framing;
};

struct MemcachedDriveResult {
    MemcachedServerInfo server;
    std::string endpoint;
    bool started = false;
    std::string framing;
    MemcachedLoadReport load;
    MemcachedSlabs slabs;
    std::optional<RunPhaseResult> run;
    SimulationResult prediction;

    std::map<std::uint64_t, std::uint64_t> predictedChunks() const {
        std::map<std::uint64_t, std::uint64_t> out;
        for (const auto& c : prediction.points.at(0).sizeClasses)
            if (c.allocations)
                out[c.classBytes] += c.allocations;
        return out;
    }
    double measuredBytesPerKey() const {
        return slabs.items ? static_cast<double>(slabs.chunkBytes()) / static_cast<double>(slabs.items) : 0;
    }
    double predictedBytesPerKey() const {
        std::uint64_t bytes = 0;
        for (const auto& [chunk, count] : predictedChunks())
            bytes += chunk * count;
        const auto keys = prediction.trace.liveKeys;
        return keys ? static_cast<double>(bytes) / static_cast<double>(keys) : 0;
    }
    double relativeError() const {
        const double m = measuredBytesPerKey();
        return m != 0 ? (predictedBytesPerKey() - m) / m : 0;
    }
};

nlohmann::json renderJson(
    const MemcachedDriveResult& r, const std::string& trace, std::int64_t predictionRun, std::int64_t measuredRun) {
    const auto predicted = r.predictedChunks();
    std::set<std::uint64_t> sizes;
    for (const auto& [chunk, n] : predicted)
        sizes.insert(chunk);
    for (const auto& [chunk, n] : r.slabs.usedChunksByChunkBytes)
        sizes.insert(chunk);
    nlohmann::json classes = nlohmann::json::array();
    for (const auto size : sizes) {
        const auto m = r.slabs.usedChunksByChunkBytes.count(size) ? r.slabs.usedChunksByChunkBytes.at(size) : 0;
        const auto p = predicted.count(size) ? predicted.at(size) : 0;
        const auto items = r.slabs.itemsByChunkBytes.count(size) ? r.slabs.itemsByChunkBytes.at(size) : 0;
        classes.push_back({ { "chunk_bytes", size }, { "measured_chunks", m }, { "predicted_chunks", p },
            { "measured_items", items } });
    }
    nlohmann::json out { { "trace", trace }, { "engine", "memcached" }, { "version", r.server.version },
        { "endpoint", r.endpoint }, { "started", r.started }, { "framing", r.framing },
        { "layout", r.prediction.layoutSpec }, { "allocator", r.prediction.allocatorSpec },
        { "server_keys", r.slabs.items }, { "predicted_keys", r.prediction.trace.liveKeys },
        { "measured_bytes_per_key", r.measuredBytesPerKey() }, { "predicted_bytes_per_key", r.predictedBytesPerKey() },
        { "relative_error", r.relativeError() }, { "classes", classes },
        { "load",
            { { "requests", r.load.requests }, { "commands", r.load.commands }, { "reads_skipped", r.load.reads },
                { "seconds", r.load.seconds },
                { "commands_per_sec", r.load.seconds > 0 ? static_cast<double>(r.load.commands) / r.load.seconds : 0 },
                { "key_names_repeat", r.load.namesRepeat } } },
        { "run", runJson(r.run) },
        { "ops_per_sec", r.run ? nlohmann::json(r.run->requestsPerSecond) : nlohmann::json(nullptr) } };
    if (predictionRun || measuredRun)
        out["runs"] = { { "prediction", predictionRun }, { "measured", measuredRun } };
    return out;
}

std::string renderTable(const MemcachedDriveResult& r, const std::string& trace) {
    std::string out = fmt::format("trace      {}\nserver     memcached {} at {} ({})\nmodel      {} under {}\n", trace,
        r.server.version, r.endpoint, r.started ? "started for this run" : "attached", r.prediction.layoutSpec,
        r.prediction.allocatorSpec);
    out += fmt::format("load       {} requests: {} commands in {:.2f} s ({:.0f} commands/s); {} GETs left for a run "
                       "phase\n\n",
        r.load.requests, r.load.commands, r.load.seconds,
        r.load.seconds > 0 ? static_cast<double>(r.load.commands) / r.load.seconds : 0.0, r.load.reads);
    out += fmt::format("{:<26}{:>14}{:>14}\n", "", "measured", "predicted");
    out += fmt::format("{:<26}{:>14}{:>14}\n", "items", r.slabs.items, r.prediction.trace.liveKeys);
    out += fmt::format("{:<26}{:>14.2f}{:>14.2f}   error {:+.2f}%\n", "chunk bytes per item", r.measuredBytesPerKey(),
        r.predictedBytesPerKey(), 100 * r.relativeError());
    out += fmt::format("\nper slab class:\n  {:>11} {:>12} {:>12} {:>12}\n", "chunk", "items", "chunks", "predicted");
    const auto json = renderJson(r, trace, 0, 0); // a named object: the loop reads into it
    for (const auto& c : json["classes"]) {
        const auto m = c["measured_chunks"].get<std::uint64_t>();
        const auto p = c["predicted_chunks"].get<std::uint64_t>();
        out += fmt::format("  {:>9} B {:>12} {:>12} {:>12}{}\n", c["chunk_bytes"].get<std::uint64_t>(),
            c["measured_items"].get<std::uint64_t>(), m, p, m == p ? "" : "   differs");
    }
    out += runTable(r.run);
    if (r.slabs.items != r.prediction.trace.liveKeys)
        out += "\nnote: the server holds a different number of items than the replay predicts (TTLs that passed "
               "in wall-clock time during the load expire on the server, not in the trace's time)\n";
    if (r.load.namesRepeat)
        out += "\nnote: some key sizes are too small to give every key its own name: keys of those sizes share "
               "names on the server\n";
    return out;
}

std::vector<Measurement> measurementsOf(const MemcachedDriveResult& r) {
    std::vector<Measurement> out;
    auto add = [&](const std::string& metric, double value, const std::string& unit, nlohmann::json details = {}) {
        Measurement m;
        m.engine = "memcached";
        m.engineVersion = r.server.version;
        m.metric = metric;
        m.value = value;
        m.unit = unit;
        m.detailsJson = details.is_null() ? "{}" : details.dump();
        out.push_back(std::move(m));
    };
    add("bytes_per_key", r.measuredBytesPerKey(), "bytes", { { "what", "slab chunk bytes per item" } });
    add("keys", static_cast<double>(r.slabs.items), "items");
    for (const auto& [chunk, used] : r.slabs.usedChunksByChunkBytes)
        add("used_chunks", static_cast<double>(used), "chunks", { { "chunk_bytes", chunk } });
    add("load_seconds", r.load.seconds, "s");
    add("load_commands", static_cast<double>(r.load.commands), "commands");
    addRunMeasurements(r.run, "memcached", r.server.version, out);
    return out;
}

} // namespace

int runDriveMemcached(const DriveOptions& o) {
    auto framing = parseFraming(o.framing);
    if (!framing)
        return reportError(framing.error());
    auto importOptions = o.source.toImportOptions();
    if (!importOptions)
        return reportError(importOptions.error());
    auto trace = openTrace(o.trace, *importOptions);
    if (!trace)
        return reportError(trace.error());
    auto target = driveTarget(o, Engine::Memcached);
    if (!target)
        return reportError(target.error());
    MemcachedDriveResult result;
    result.started = target->server != nullptr;
    result.endpoint = target->describe();
    result.framing = o.framing;
    auto client = MemcachedClient::connect(target->endpoint.host, target->endpoint.port);
    if (!client)
        return reportError(client.error());
    auto info = describeMemcached(*client);
    if (!info)
        return reportError(info.error());
    result.server = *info;
    auto models = parseLayoutAndAllocator("memcached-1.6:framing=" + o.framing, result.server.allocator);
    if (!models)
        return reportError(models.error());
    auto empty = readSlabs(*client);
    if (!empty)
        return reportError(empty.error());
    if (empty->items != 0)
        return reportError(dataError(fmt::format("{} holds {} items: layoutlab measures what a trace adds to an empty "
                                                 "server (flush_all is not enough: memcached keeps its slab pages; "
                                                 "restart it, or let layoutlab start one)",
            result.endpoint, empty->items)));

    DriveRuns runs;
    if (auto ok = runs.begin(o, *importOptions, models->layout->spec(), models->allocator->spec(),
            { { "engine", "memcached" }, { "engine_version", result.server.version }, { "endpoint", result.endpoint },
                { "started", result.started },
                { "server_binary", target->server ? target->server->binary() : std::string() },
                { "framing", o.framing } });
        !ok)
        return reportError(ok.error());
    auto load = [&] {
        ProgressBar bar("load");
        const std::uint64_t total = (*trace)->totalRequests();
        return loadTraceMemcached(
            *client, **trace, *framing, o.pipeline, kMaxRunKeys, loadProgress(bar, total), interruptToken());
    }();
    if (!load)
        return runs.fail(load.error(), *target);
    result.load = *load;
    auto slabs = readSlabs(*client);
    if (!slabs)
        return runs.fail(slabs.error(), *target);
    result.slabs = *slabs;
    auto run = runPhase(o, result.load.readKeys, [&]() -> Expected<std::unique_ptr<GetConnection>> {
        auto c = MemcachedClient::connect(target->endpoint.host, target->endpoint.port);
        if (!c)
            return c.error();
        return std::unique_ptr<GetConnection>(new MemcachedGets(std::move(*c), *framing));
    });
    if (!run)
        return runs.fail(run.error(), *target);
    result.run = *run;
    return finishDrive(
        o, *importOptions, *models, result, runs, *target,
        [&o](const auto& r, std::int64_t prediction, std::int64_t measured) {
            return renderJson(r, o.trace, prediction, measured);
        },
        [&o](const auto& r) { return renderTable(r, o.trace); }, [](const auto& r) { return measurementsOf(r); });
}

} // namespace layoutlab::cli
