// SPDX-License-Identifier: MIT
// A drive's report as JSON, as a table and as stored measurements: one rendering for every engine, with
// the lines only one engine has (Valkey/Redis: the layout choice, used_memory and sampled keys;
// memcached: the framing and the slab classes) added where the report has them.

#include "drive_steps.h"

#include "layoutlab/sim/limit_sweep.h"

#include "layoutlab/printable.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace layoutlab {

namespace {

// The client's CPU time as a share of the machine's cores over the run.
double clientCpuShare(const RunPhaseResult& r) {
    const double cores = std::max(1u, std::thread::hardware_concurrency());
    return r.seconds > 0 ? r.clientCpuSeconds / (r.seconds * cores) : 0;
}

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
        return "\nrun phase  skipped (no reads in the trace, or no run phase asked for)\n";
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

std::string indented(const std::string& text, std::string_view prefix) {
    std::string out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        out += std::string(prefix) + line + "\n";
    return out;
}

double commandsPerSecond(const LoadReport& load) {
    return load.seconds > 0 ? static_cast<double>(load.commands) / load.seconds : 0.0;
}

// memcached's slab classes, measured beside predicted: items, chunks, pages and (a cache drive) evictions.
std::string slabClassRows(const DriveReport& r) {
    std::string out;
    const bool evictions = r.budget.has_value();
    out += fmt::format("\nper slab class:\n  {:>11} {:>12} {:>12} {:>12} {:>8} {:>10}{}\n", "chunk", "items", "chunks",
        "predicted", "pages", "predicted", evictions ? fmt::format(" {:>10} {:>10}", "evicted", "predicted") : "");
    for (const auto& c : r.classes) {
        const bool pagesCompared = r.allocator.predicted || evictions;
        const bool same
            = c.measuredChunks == c.predictedChunks && (!pagesCompared || c.measuredPages == c.predictedPages);
        out += fmt::format("  {:>9} B {:>12} {:>12} {:>12} {:>8} {:>10}{}{}\n", c.chunkBytes, c.measuredItems,
            c.measuredChunks, c.predictedChunks, c.measuredPages, c.predictedPages,
            evictions ? fmt::format(" {:>10} {:>10}", c.measuredEvictions, c.predictedEvictions) : "",
            same ? "" : "   differs");
    }
    return out;
}

// The allocator's growth over the load beside the slab model's, as rows of the measured/predicted table.
std::string allocatorRows(const DriveReport& r) {
    const auto& a = r.allocator;
    if (!a.measured)
        return {};
    const bool mc = r.isMemcached();
    auto row
        = [&](const char* name, std::int64_t measured, bool withPrediction, std::uint64_t predicted, bool withError) {
              std::string line = fmt::format("{:<26}{:>14}", name, measured);
              if (withPrediction)
                  line += fmt::format("{:>14}", predicted);
              if (withError)
                  line += fmt::format("   error {:+.2f}%", 100 * a.activeRelativeError());
              return line + "\n";
          };
    std::string out = row(mc ? "slab chunk bytes" : "allocator_allocated, +", a.measuredAllocated(), a.predicted,
        a.predictedAllocated, false);
    out += row(mc ? "total_malloced" : "allocator_active, +", a.measuredActive(), a.predicted, a.predictedActive,
        a.comparable());
    return out;
}

} // namespace

nlohmann::json layoutChoiceJson(const DriveReport& r) {
    nlohmann::json out { { "layout", r.chosenLayout }, { "reason", r.layoutReason }, { "calibration", nullptr } };
    if (const auto& c = r.calibration) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& row : c->rows)
            rows.push_back({ { "key_bytes", row.shape.shape.keyBytes }, { "value_bytes", row.shape.shape.valueBytes },
                { "ttl", row.shape.shape.hasTtl }, { "kind", static_cast<int>(row.shape.shape.kind) },
                { "keys", row.shape.keys }, { "measured_bytes_per_key", row.measuredBytesPerKey },
                { "encoding", row.encoding } });
        nlohmann::json matching = nlohmann::json::array();
        for (const auto& fit : c->fits)
            if (fit.matches)
                matching.push_back(fit.layout);
        out["calibration"] = { { "shapes", rows }, { "matching", matching },
            { "chosen", c->chosen ? nlohmann::json(*c->chosen) : nlohmann::json(nullptr) },
            { "summary", c->summary() } };
    }
    return out;
}

namespace {
// The collection limits that differ from config.c's defaults, as "hash-max-listpack-entries 64, ...".
std::string changedLimits(const CollectionLimits& limits) {
    std::string out;
    for (const auto& [name, value] : changedCollectionLimits(limits))
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, value);
    return out;
}
} // namespace

nlohmann::json toJson(const DriveReport& r) {
    nlohmann::json out { { "trace", r.trace }, { "engine", r.engine }, { "version", r.version },
        { "endpoint", r.endpoint }, { "started", r.started }, { "layout", r.prediction.layoutSpec },
        { "allocator", r.prediction.allocatorSpec }, { "server_keys", r.serverKeys },
        { "predicted_keys", r.prediction.trace.liveKeys }, { "measured_bytes_per_key", r.measuredBytesPerKey },
        { "predicted_bytes_per_key", r.predictedBytesPerKey }, { "relative_error", r.relativeError() },
        { "load",
            { { "requests", r.load.requests }, { "commands", r.load.commands }, { "reads_skipped", r.load.reads },
                { "seconds", r.load.seconds }, { "commands_per_sec", commandsPerSecond(r.load) },
                { "key_names_repeat", r.load.namesRepeat }, { "element_requests", r.load.elements },
                { "elements_approximated", r.load.elementsApproximated },
                { "elements_unmatched", r.load.elementsUnmatched }, { "snapshot_bytes", r.load.snapshotBytes },
                { "refused_replies", r.load.refusedReplies },
                { "hyperloglog_changes_not_sent", r.load.hyperLogLogStepsNotSent },
                { "captured_commands_not_sent", r.capturedSkips.byReason } } },
        { "run", runJson(r.run) },
        { "ops_per_sec", r.run ? nlohmann::json(r.run->requestsPerSecond) : nlohmann::json(nullptr) } };
    // The allocator's figures: null where the server does not report them or the slab model does not cover it.
    const auto& a = r.allocator;
    auto orNull = [](bool known, auto value) { return known ? nlohmann::json(value) : nlohmann::json(nullptr); };
    out.update({ { "measured_allocated_bytes", orNull(a.measured, a.measuredAllocated()) },
        { "measured_active_bytes", orNull(a.measured, a.measuredActive()) },
        { "predicted_allocated_bytes", orNull(a.predicted, a.predictedAllocated) },
        { "predicted_active_bytes", orNull(a.predicted, a.predictedActive) },
        { "active_relative_error", orNull(a.comparable(), a.activeRelativeError()) } });
    if (r.isMemcached()) {
        out["framing"] = r.framing;
        nlohmann::json classes = nlohmann::json::array();
        for (const auto& c : r.classes) {
            nlohmann::json row { { "chunk_bytes", c.chunkBytes }, { "measured_chunks", c.measuredChunks },
                { "predicted_chunks", c.predictedChunks }, { "measured_items", c.measuredItems },
                { "measured_pages", c.measuredPages }, { "predicted_pages", c.predictedPages } };
            if (r.budget) {
                row["measured_evictions"] = c.measuredEvictions;
                row["predicted_evictions"] = c.predictedEvictions;
            }
            classes.push_back(std::move(row));
        }
        out["classes"] = classes;
    } else {
        nlohmann::json samples = nlohmann::json::array();
        for (const auto& s : r.samples)
            samples.push_back(
                { { "key", printable(s.key) }, { "encoding", s.encoding }, { "memory_usage", s.memoryUsage } });
        out.update({ { "mem_allocator", r.memAllocator }, { "layout_choice", layoutChoiceJson(r) },
            { "settled",
                { { "settled", r.settled.settled }, { "seconds", r.settled.seconds },
                    { "rehash_known", r.settled.rehashKnown }, { "still_rehashing", r.settled.stillRehashing } } },
            { "threshold", r.prediction.points.empty() ? 0u : r.prediction.points.front().threshold },
            { "used_memory_before", r.usedBefore }, { "used_memory_after", r.usedAfter },
            { "clients_memory_before", r.clientsBefore }, { "clients_memory_after", r.clientsAfter },
            { "samples", samples } });
        auto& limits = out["collection_limits"] = nlohmann::json::object();
        for (std::string_view name : allCollectionLimitNames())
            limits[std::string(name)] = collectionLimit(r.collectionLimits, name);
    }
    if (const auto& b = r.budget) {
        const auto& point = r.prediction.points.empty() ? ThresholdPoint {} : r.prediction.points.front();
        const BudgetUsage predicted = point.budget.value_or(BudgetUsage {});
        out.update({ { "maxmemory_bytes", b->maxmemoryBytes }, { "policy", b->policy }, { "base_bytes", b->baseBytes },
            { "measured_hit_ratio", b->measuredHitRatio() }, { "predicted_hit_ratio", r.predictedHitRatio() },
            { "hit_ratio_error_points", 100 * (r.predictedHitRatio() - b->measuredHitRatio()) },
            { "evictions", { { "measured", b->evictedKeys }, { "predicted", predicted.evictedKeys } } },
            { "look_aside",
                { { "requests", b->sent.requests }, { "gets", b->sent.gets }, { "hits", b->sent.hits },
                    { "sets", b->sent.sets }, { "deletes", b->sent.deletes }, { "fills", b->sent.fills },
                    { "refused_writes", b->sent.refusedWrites }, { "seconds", b->sent.seconds },
                    { "predicted_fills", predicted.fills }, { "predicted_refused_writes", predicted.refusedWrites } } },
            { "keyspace_hits", b->keyspaceHits }, { "keyspace_misses", b->keyspaceMisses },
            { "clients_memory", { { "before", b->clientsBefore }, { "after", b->clientsAfter } } },
            { "predicted_used_memory", predicted.usedBytes },
            // used_memory after the drive (memcached: total_malloced, the pages -m counts)
            { "measured_used_memory", r.usedAfter } });
        if (r.isMemcached())
            out["pages_moved"] = b->pagesMoved;
    }
    if (r.predictionRun || r.measuredRun)
        out["runs"] = { { "prediction", r.predictionRun }, { "measured", r.measuredRun } };
    return out;
}

namespace {

// A cache drive's table: what was sent, and the cache's figures measured beside predicted.
std::string budgetTable(const DriveReport& r) {
    const auto& b = *r.budget;
    const BudgetUsage predicted = r.prediction.points.empty() || !r.prediction.points.front().budget
        ? BudgetUsage {}
        : *r.prediction.points.front().budget;
    const bool mc = r.isMemcached();
    std::string out = mc ? fmt::format("budget     -m {} bytes, {}\n", b.maxmemoryBytes, b.policy)
                         : fmt::format("budget     maxmemory {} bytes, {}; the empty server used {} bytes\n",
                             b.maxmemoryBytes, b.policy, b.baseBytes);
    out += fmt::format("look-aside {} requests ({} GETs, {} SETs, {} DELs) and {} fills in {:.2f} s, batches of {}\n\n",
        b.sent.requests, b.sent.gets, b.sent.sets, b.sent.deletes, b.sent.fills, b.sent.seconds,
        r.prediction.fillBatch);
    out += fmt::format("{:<26}{:>14}{:>14}\n", "", "measured", "predicted");
    out += fmt::format("{:<26}{:>13.2f}%{:>13.2f}%   error {:+.2f} points\n", "hit ratio", 100 * b.measuredHitRatio(),
        100 * r.predictedHitRatio(), 100 * (r.predictedHitRatio() - b.measuredHitRatio()));
    out += fmt::format("{:<26}{:>14}{:>14}\n", "GET hits", b.keyspaceHits, predicted.getHits);
    out += fmt::format("{:<26}{:>14}{:>14}\n", "evicted keys", b.evictedKeys, predicted.evictedKeys);
    out += fmt::format("{:<26}{:>14}{:>14}\n", "writes refused (OOM)", b.sent.refusedWrites, predicted.refusedWrites);
    out += fmt::format("{:<26}{:>14}{:>14}\n", "keys held", r.serverKeys,
        r.prediction.points.empty() ? 0 : r.prediction.points.front().keys);
    out += fmt::format("{:<26}{:>14}{:>14}\n", mc ? "total_malloced at the end" : "used_memory at the end", r.usedAfter,
        predicted.usedBytes);
    if (!mc)
        out += fmt::format("{:<26}{:>14}\n", "  clients' buffers", b.clientsAfter);
    else
        out += fmt::format("{:<26}{:>14}\n", "pages moved (slabs_moved)", b.pagesMoved) + slabClassRows(r);
    return out;
}

} // namespace

std::string renderDriveTable(const DriveReport& r) {
    std::string out = fmt::format("trace      {}\nserver     {} {} at {} ({}){}\nmodel      {} under {}\n", r.trace,
        r.engine, r.version, r.endpoint, r.started ? "started for this run" : "attached",
        r.isMemcached() ? std::string() : ", " + r.memAllocator, r.prediction.layoutSpec, r.prediction.allocatorSpec);
    if (r.budget)
        return out
            + (r.layoutReason.empty() ? std::string() : fmt::format("           chosen because: {}\n", r.layoutReason))
            + budgetTable(r);
    if (!r.isMemcached()) {
        out += fmt::format("           chosen because: {}\n", r.layoutReason);
        if (const std::string limits = changedLimits(r.collectionLimits); !limits.empty())
            out += fmt::format("limits     {} (the rest config.c's defaults)\n", limits);
        if (r.calibration)
            out += indented(r.calibration->table(), "           ");
        out += fmt::format("measured   {}\n", r.settled.describe());
    }
    if (r.load.snapshotBytes)
        out += fmt::format("load       the RDB file ({:.1f} MiB), loaded by the server itself (DEBUG RELOAD) in "
                           "{:.2f} s\n\n",
            static_cast<double>(r.load.snapshotBytes) / (1 << 20), r.load.seconds);
    else
        out += fmt::format("load       {} requests{}: {} commands in {:.2f} s ({:.0f} commands/s); {} GETs left for "
                           "a run phase\n\n",
            r.load.requests,
            r.load.elements ? fmt::format(" ({} of collection elements)", r.load.elements) : std::string(),
            r.load.commands, r.load.seconds, commandsPerSecond(r.load), r.load.reads);
    const char* keys = r.isMemcached() ? "items" : "live keys";
    out += fmt::format("{:<26}{:>14}{:>14}\n", "", "measured", "predicted");
    out += fmt::format("{:<26}{:>14}{:>14}\n", keys, r.serverKeys, r.prediction.trace.liveKeys);
    out += fmt::format("{:<26}{:>14.2f}{:>14.2f}   error {:+.2f}%\n",
        r.isMemcached() ? "chunk bytes per item" : "bytes per key", r.measuredBytesPerKey, r.predictedBytesPerKey,
        100 * r.relativeError());
    out += allocatorRows(r);
    if (r.isMemcached()) {
        out += slabClassRows(r);
    } else {
        out += fmt::format("{:<26}{:>14}\n", "used_memory before", r.usedBefore);
        out += fmt::format("{:<26}{:>14}\n", "used_memory after", r.usedAfter);
        if (r.clientsBefore != r.clientsAfter) // left out of the bytes per key
            out += fmt::format("{:<26}{:>14}   before {} (the clients' buffers, no key's)\n", "mem_clients_normal",
                r.clientsAfter, r.clientsBefore);
        if (!r.samples.empty()) {
            out += "\nsampled keys (OBJECT ENCODING, MEMORY USAGE):\n";
            for (const auto& s : r.samples)
                out += fmt::format("  {:<40} {:<8} {:>8} B\n", printable(s.key), s.encoding, s.memoryUsage);
        }
    }
    out += runTable(r.run);
    if (r.serverKeys != r.prediction.trace.liveKeys)
        out += fmt::format("\nnote: the server holds a different number of {} than the replay predicts (TTLs that "
                           "passed in wall-clock time during the load expire on the server, not in the trace's time)\n",
            r.isMemcached() ? "items" : "keys");
    if (r.load.namesRepeat)
        out += "\nnote: some key sizes are too small to give every key its own name: keys of those sizes share "
               "names on the server\n";
    if (r.load.elementsApproximated)
        out += fmt::format("\nnote: {} collection elements could not be given a text of the trace's length and "
                           "integer class, or a name of their own within their key (more of one short length than "
                           "it has names): the server holds them otherwise than the replay\n",
            r.load.elementsApproximated);
    if (r.load.elementsUnmatched)
        out += fmt::format("\nnote: {} removes or updates named an element of a shape its key did not hold (a trace "
                           "cut out of a longer one): they were not sent\n",
            r.load.elementsUnmatched);
    if (r.load.hyperLogLogStepsNotSent)
        out += fmt::format("\nnote: {} changes of HyperLogLogs' sparse forms were not sent: what they grow by depends "
                           "on the registers their elements set, which the trace does not hold (drive the MONITOR "
                           "capture with --as-captured)\n",
            r.load.hyperLogLogStepsNotSent);
    if (r.load.refusedReplies)
        out += fmt::format("\nnote: the server refused {} of the capture's commands (as it may have when it was "
                           "captured)\n",
            r.load.refusedReplies);
    if (r.capturedSkips.total)
        out += fmt::format("\nnote: {} of the capture's commands were not sent (blocking pops, the connection's own, "
                           "scripts' calls whose commands were sent: --json lists them)\n",
            r.capturedSkips.total);
    return out;
}

std::vector<Measurement> driveMeasurements(const DriveReport& r) {
    const std::string engine = r.isMemcached() ? "memcached" : r.engine + "-server";
    std::vector<Measurement> out;
    auto add = [&](const std::string& metric, double value, const std::string& unit,
                   const nlohmann::json& details = nlohmann::json::object()) {
        out.push_back({ std::nullopt, engine, r.version, metric, value, unit, details.dump() });
    };
    if (r.isMemcached()) {
        add("bytes_per_key", r.measuredBytesPerKey, "bytes", { { "what", "slab chunk bytes per item" } });
        add("keys", static_cast<double>(r.serverKeys), "items");
        for (const auto& c : r.classes) {
            if (c.measuredChunks)
                add("used_chunks", static_cast<double>(c.measuredChunks), "chunks",
                    { { "chunk_bytes", c.chunkBytes } });
            if (c.measuredPages)
                add("total_pages", static_cast<double>(c.measuredPages), "pages", { { "chunk_bytes", c.chunkBytes } });
        }
    } else {
        add("bytes_per_key", r.measuredBytesPerKey, "bytes");
        add("used_memory_before", static_cast<double>(r.usedBefore), "bytes");
        add("used_memory_after", static_cast<double>(r.usedAfter), "bytes");
        add("keys", static_cast<double>(r.serverKeys), "keys");
    }
    if (r.allocator.measured) {
        // What the allocator holds for the trace: the growth over the load (memcached: from its empty start).
        add("allocated_bytes", static_cast<double>(r.allocator.measuredAllocated()), "bytes",
            { { "what", r.isMemcached() ? "slab chunk bytes" : "allocator_allocated after less before" } });
        add("active_bytes", static_cast<double>(r.allocator.measuredActive()), "bytes",
            { { "what", r.isMemcached() ? "total_malloced" : "allocator_active after less before" } });
    }
    if (const auto& b = r.budget) {
        const nlohmann::json details { { "maxmemory_bytes", b->maxmemoryBytes }, { "policy", b->policy },
            { "base_bytes", b->baseBytes }, { "fill_batch", r.prediction.fillBatch } };
        add("hit_ratio", b->measuredHitRatio(), "fraction", details);
        add("keyspace_hits", static_cast<double>(b->keyspaceHits), "count", details);
        add("keyspace_misses", static_cast<double>(b->keyspaceMisses), "count", details);
        add("evicted_keys", static_cast<double>(b->evictedKeys), "keys", details);
        add("refused_writes", static_cast<double>(b->sent.refusedWrites), "commands", details);
        return out;
    }
    add("load_seconds", r.load.seconds, "s");
    add("load_commands", static_cast<double>(r.load.commands), "commands");
    if (const auto& run = r.run) {
        const nlohmann::json details { { "connections", run->connections }, { "pipeline", run->pipeline },
            { "requests", run->requests }, { "hits", run->hits } };
        add("gets_per_sec", run->requestsPerSecond, "ops/s", details);
        add("get_latency_p50", static_cast<double>(run->p50Ns), "ns", details);
        add("get_latency_p99", static_cast<double>(run->p99Ns), "ns", details);
        add("get_latency_p999", static_cast<double>(run->p999Ns), "ns", details);
        add("client_cpu_seconds", run->clientCpuSeconds, "s", details);
    }
    return out;
}

} // namespace layoutlab
