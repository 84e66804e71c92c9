// SPDX-License-Identifier: MIT
// A cache drive (DriveRequest::budget): a Valkey or Redis server under maxmemory, sent the trace as a
// look-aside cache's client sends it, its hit ratio and evictions beside the simulator's for the same
// budget, clock and fill order.

#include "drive_steps.h"

#include <cstdlib>
#include <fmt/format.h>
#include <map>

namespace layoutlab::drive {

namespace {

Expected<std::uint64_t> infoNumber(const std::map<std::string, std::string>& info, const std::string& field) {
    const auto it = info.find(field);
    if (it == info.end())
        return dataError(fmt::format("the server's INFO has no {}", field));
    return std::stoull(it->second);
}

// What a cache drive sends of `trace`: a trace of reads only (oracleGeneral) as its reads, the drive filling
// the misses, not the importer (`sent` then says so, for the prediction).
class SentTrace {
public:
    explicit SentTrace(TraceReader& trace)
        : m_trace(&trace) { }
    explicit SentTrace(std::unique_ptr<TraceReader> reopened)
        : m_owned(std::move(reopened))
        , m_trace(m_owned.get()) { }
    TraceReader& get() const { return *m_trace; }

private:
    std::unique_ptr<TraceReader> m_owned;
    TraceReader* m_trace;
};

Expected<SentTrace> tracePartToSend(TraceReader& trace, DriveRequest& sent) {
    const auto* importer = dynamic_cast<const Importer*>(&trace);
    if (!importer || importer->formatName() != "oracle")
        return SentTrace(trace);
    sent.importOptions.oracleFills = false;
    auto reopened = openTrace(sent.tracePath, sent.importOptions);
    if (!reopened)
        return reopened.error();
    return SentTrace(std::move(*reopened));
}

// The look-aside phase of a cache drive: the trace sent on `connection`, a trace of reads only as its reads
// (tracePartToSend); the request it was sent as, for the prediction.
Expected<std::pair<DriveRequest, LookAsideReport>> sendAsCache(const DriveRequest& r, LookAsideConnection& connection,
    TraceReader& trace, ProgressSink* progress, std::stop_token stop,
    std::chrono::nanoseconds secondPhase = std::chrono::nanoseconds::zero()) {
    if (progress)
        progress->phase("look-aside");
    DriveRequest sentRequest = r;
    auto toSend = tracePartToSend(trace, sentRequest);
    if (!toSend)
        return toSend.error();
    auto sent = driveLookAside(connection, toSend->get(), r.pipeline,
        loadProgress(progress, toSend->get().totalRequests()), stop, secondPhase);
    if (!sent)
        return sent.error();
    return std::pair { std::move(sentRequest), std::move(*sent) };
}

// The prediction of a cache drive: the same budget, filling as it did (predictAndComplete replays the trace on the
// clock the drive ran on).
SimulationConfig budgetPrediction(const DriveRequest& r, const LayoutAndAllocator& models, std::uint64_t baseBytes) {
    SimulationConfig config;
    config.layout = models.layout;
    config.allocator = models.allocator;
    config.eviction = *r.budget;
    config.eviction->baseBytes = baseBytes;
    config.fillOnMiss = r.pipeline;
    return config;
}

// The server's page mover as `stats settings` gives it: its window (0 when it has none) and age ratio.
Expected<std::pair<std::uint32_t, double>> memcachedPageMover(const std::map<std::string, std::string>& settings) {
    auto automove = memcachedStatsNumber(settings, "slab_automove");
    auto window = memcachedStatsNumber(settings, "slab_automove_window");
    const auto ratio = settings.find("slab_automove_ratio");
    if (!automove || !window || ratio == settings.end())
        return dataError("memcached's `stats settings` lacks slab_automove, slab_automove_window or "
                         "slab_automove_ratio (memcached 1.6 reports all three)");
    if (*automove == 2)
        return dataError("memcached runs with -o slab_automove=2 (a page moved at every eviction), which layoutlab "
                         "does not model: start it with the default (1) or 0");
    const bool reassigns = settings.count("slab_reassign") == 0 || settings.at("slab_reassign") == "yes";
    if (*automove == 0 || !reassigns)
        return std::pair<std::uint32_t, double> { 0, EvictionOptions {}.pageMoverAgeRatio };
    return std::pair { static_cast<std::uint32_t>(*window), std::strtod(ratio->second.c_str(), nullptr) };
}

} // namespace

Status driveMemcachedBudget(const DriveRequest& r, MemcachedClient& client, Framing framing,
    const LayoutAndAllocator& models, const RunParameters& parameters, DriveReport& report, MeasuredRuns& runs,
    TraceReader& trace, ProgressSink* progress, std::stop_token stop) {
    DriveBudgetFigures figures;
    figures.maxmemoryBytes = r.budget->maxmemoryBytes;
    figures.policy = "memcached segmented LRU";
    auto settings = client.stats("settings");
    if (!settings)
        return settings.error();
    auto maxbytes = memcachedStatsNumber(*settings, "maxbytes");
    if (!maxbytes)
        return maxbytes.error();
    if (*maxbytes != figures.maxmemoryBytes)
        return dataError(
            fmt::format("memcached runs with -m {} bytes, not the {} asked for", *maxbytes, figures.maxmemoryBytes));
    auto mover = memcachedPageMover(*settings);
    if (!mover)
        return mover.error();
    RunParameters withBudget = parameters;
    withBudget.extra["budget"] = { { "memory_limit_bytes", figures.maxmemoryBytes }, { "policy", figures.policy },
        { "slab_automove_window", mover->first }, { "slab_automove_ratio", mover->second } };
    withBudget.extra["fill_batch"] = r.pipeline;
    if (auto ok = runs.begin(r.tracePath, r.importOptions, "sim", "drive", withBudget, r.toolVersion); !ok)
        return ok;
    // The prediction replays the trace on memcached's own seconds (its TTLs, LRU ages and page mover).
    auto phase = memcachedSecondPhase(client);
    if (!phase)
        return phase.error();
    MemcachedConnection connection(client, framing);
    auto sent = sendAsCache(r, connection, trace, progress, stop, phase->phase);
    if (!sent)
        return sent.error();
    const DriveRequest& sentRequest = sent->first;
    figures.sent = std::move(sent->second);
    auto stats = client.stats();
    if (!stats)
        return stats.error();
    auto hits = memcachedStatsNumber(*stats, "get_hits");
    auto misses = memcachedStatsNumber(*stats, "get_misses");
    auto evicted = memcachedStatsNumber(*stats, "evictions");
    auto moved = memcachedStatsNumber(*stats, "slabs_moved");
    if (!hits || !misses || !evicted || !moved)
        return !hits ? hits.error() : !misses ? misses.error() : !evicted ? evicted.error() : moved.error();
    figures.keyspaceHits = *hits;
    figures.keyspaceMisses = *misses;
    figures.evictedKeys = *evicted;
    figures.pagesMoved = *moved;
    auto slabs = readSlabs(client);
    if (!slabs)
        return slabs.error();
    report.serverKeys = slabs->items;
    report.usedAfter = slabs->totalMalloced;
    report.classes = measuredSlabClasses(*slabs);
    report.budget = std::move(figures);
    SimulationConfig prediction = budgetPrediction(sentRequest, models, 0);
    prediction.eviction->pageMoverWindow = mover->first;
    prediction.eviction->pageMoverAgeRatio = mover->second;
    prediction.eviction->serverSecondsBefore = phase->secondsRunBefore(report.budget->sent.clockStartSecond());
    return predictAndComplete(sentRequest, prediction, report, runs, progress, stop, &report.budget->sent.clock);
}

Status driveBudget(const DriveRequest& r, RespClient& client, const LayoutAndAllocator& models,
    const RunParameters& parameters, DriveReport& report, MeasuredRuns& runs, TraceReader& trace,
    ProgressSink* progress, std::stop_token stop) {
    const EvictionOptions& budget = *r.budget;
    DriveBudgetFigures figures;
    figures.maxmemoryBytes = budget.maxmemoryBytes;
    figures.policy = std::string(evictionPolicyName(budget.policy));
    // The policy's settings first, then the empty server's memory (what the budget holds besides the keys),
    // then the limit, and the counters from zero.
    const std::vector<std::vector<std::string>> settings { { "CONFIG", "SET", "maxmemory-policy", figures.policy },
        { "CONFIG", "SET", "maxmemory-samples", std::to_string(budget.samples) },
        { "CONFIG", "SET", "lfu-log-factor", std::to_string(budget.lfuLogFactor) },
        { "CONFIG", "SET", "lfu-decay-time", std::to_string(budget.lfuDecayMinutes) } };
    if (auto warm = warmUpCommands(client); !warm)
        return warm;
    for (const auto& command : settings)
        if (auto ok = client.command(command); !ok)
            return ok.error();
    auto base = waitUntilSettled(client, SettleOptions { .stop = stop });
    if (!base)
        return base.error();
    figures.baseBytes = base->usedMemory;
    auto clients = memoryStatsField(client, "clients.normal");
    if (!clients)
        return clients.error();
    figures.clientsBefore = clients->value_or(0);
    report.usedBefore = base->usedMemory;
    if (figures.baseBytes >= budget.maxmemoryBytes)
        return usageError(fmt::format("maxmemory {} bytes is below what the empty server already uses ({} bytes)",
                              budget.maxmemoryBytes, figures.baseBytes),
            field::kMaxmemory);
    RunParameters withBudget = parameters;
    withBudget.extra["budget"] = { { "maxmemory_bytes", budget.maxmemoryBytes }, { "policy", figures.policy },
        { "maxmemory_samples", budget.samples }, { "lfu_log_factor", budget.lfuLogFactor },
        { "lfu_decay_time", budget.lfuDecayMinutes }, { "base_bytes", figures.baseBytes } };
    withBudget.extra["fill_batch"] = r.pipeline;
    if (auto ok = runs.begin(r.tracePath, r.importOptions, "sim", "drive", withBudget, r.toolVersion); !ok)
        return ok;
    for (const std::vector<std::string>& command :
        { std::vector<std::string> { "CONFIG", "SET", "maxmemory", std::to_string(budget.maxmemoryBytes) },
            std::vector<std::string> { "CONFIG", "RESETSTAT" } })
        if (auto ok = client.command(command); !ok)
            return ok.error();
    RespConnection connection(client);
    auto sent = sendAsCache(r, connection, trace, progress, stop);
    if (!sent)
        return sent.error();
    const DriveRequest& sentRequest = sent->first;
    figures.sent = std::move(sent->second);
    auto stats = client.info("stats");
    if (!stats)
        return stats.error();
    auto hits = infoNumber(*stats, "keyspace_hits");
    auto misses = infoNumber(*stats, "keyspace_misses");
    auto evicted = infoNumber(*stats, "evicted_keys");
    if (!hits || !misses || !evicted)
        return !hits ? hits.error() : !misses ? misses.error() : evicted.error();
    figures.keyspaceHits = *hits;
    figures.keyspaceMisses = *misses;
    figures.evictedKeys = *evicted;
    auto clientsAfter = memoryStatsField(client, "clients.normal");
    if (!clientsAfter)
        return clientsAfter.error();
    figures.clientsAfter = clientsAfter->value_or(0);
    // What the server held besides the keys while the trace ran: its memory before, and the growth of the
    // drive's client buffers over it (the query buffer a pipelined batch of fills needs stays allocated).
    const std::uint64_t clientsGrowth
        = figures.clientsAfter > figures.clientsBefore ? figures.clientsAfter - figures.clientsBefore : 0;
    auto used = usedMemory(client);
    if (!used)
        return used.error();
    report.usedAfter = *used;
    if (auto ok = countServerKeys(client, report); !ok)
        return ok;

    // The prediction: the same budget from the same base, on the clock the drive ran on (the trace restamped
    // with the seconds it was sent in), filling as it did.
    const SimulationConfig config = budgetPrediction(sentRequest, models, figures.baseBytes + clientsGrowth);
    report.budget = std::move(figures);
    return predictAndComplete(sentRequest, config, report, runs, progress, stop, &report.budget->sent.clock);
}

} // namespace layoutlab::drive
