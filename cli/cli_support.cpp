// SPDX-License-Identifier: MIT
// What every command does with its result: errors in the CLI's words, outputs through OutputFile.
#include "commands.h"
#include "interrupts.h"

#include "layoutlab/collect/memory_latency.h"
#include "layoutlab/output_file.h"
#include "layoutlab/store/batch_job.h"
#include "layoutlab/store/jobs.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace layoutlab::cli {

namespace {
// The flag this command line gives for each of the core's request fields (Error::field).
const char* flagFor(const std::string& field) {
    static const std::pair<const char*, const char*> kFlags[] = {
        { field::kThreshold, "--threshold" },
        { field::kThresholds, "--thresholds" },
        { field::kCacheGeometry, "--cache-geometry" },
        { field::kStartRegions, "--start-regions" },
        { field::kTimeline, "--timeline" },
        { field::kPageMoverWindow, "--automove-window" },
        { field::kGetPipeline, "--get-pipeline" },
        { field::kPrefetchBatch, "--prefetch-batch" },
        { field::kFormat, "--format" },
        { field::kKeys, "--keys" },
        { field::kOps, "--ops" },
        { field::kKeySize, "--key-size" },
        { field::kOnError, "--on-error" },
        { field::kShard, "--shard" },
        { field::kPlan, "PLAN" },
        { field::kValueSize, "--value-size" },
        { field::kHashFields, "--hash-fields" },
        { field::kFieldSize, "--field-size" },
        { field::kSetMembers, "--set-members" },
        { field::kMemberSize, "--member-size" },
        { field::kZsetMembers, "--zset-members" },
        { field::kListElements, "--list-elements" },
        { field::kElementSize, "--element-size" },
        { field::kTtlFraction, "--ttl-fraction" },
        { field::kIntValues, "--int-values" },
        { field::kGetFraction, "--get-fraction" },
        { field::kDeleteFraction, "--delete-fraction" },
        { field::kPopularity, "--popularity" },
        { field::kWeights, "--weight-memory" },
        { field::kMissLevel, "--miss-level" },
        { field::kAllocator, "--alloc" },
        { field::kCounters, "--counters" },
        { field::kKeysAt, "--keys-at" },
        { field::kEngine, "--engine" },
        { field::kConnect, "--connect" },
        { field::kFraming, "--framing" },
        { field::kMemoryLimit, "--memory-limit" },
        { field::kSampleRate, "--sample-rate" },
        { field::kPipeline, "--pipeline" },
        { field::kConnections, "--connections" },
        { field::kRunPipeline, "--run-pipeline" },
        { field::kRunSeconds, "--run-seconds" },
        { field::kExpireWait, "--expire-wait" },
        { field::kEngineSource, "--source" },
        { field::kBuildThresholds, "--at-thresholds" },
        { field::kEngineBuilds, "--builds" },
        { field::kServerSettings, "--slab-settings" },
        { field::kMaxmemory, "--maxmemory" },
        { field::kEvictionPolicy, "--policy" },
        { field::kEvictionSamples, "--maxmemory-samples" },
        { field::kFillOnMiss, "--fill-on-miss" },
        { field::kLimitSweep, "--param" },
    };
    for (const auto& [name, flag] : kFlags)
        if (field == name)
            return flag;
    return nullptr;
}
} // namespace

Error inCliWords(Error error) {
    if (const char* flag = flagFor(error.field))
        error.field = flag;
    if (error.tag == kTagNoThreshold)
        error.message += "; use `sim`";
    if (const auto at = error.message.find("; name it ("); error.tag == kTagFormatUnknown && at != std::string::npos)
        error.message.insert(at + 9, " with --format");
    if (error.tag == kTagRemoteHost)
        error.message += " with --allow-remote";
    if (error.tag == kTagSkippableInput && error.message.ends_with(" input)"))
        error.message.insert(error.message.size() - 1, "; --on-error=skip counts and skips such lines");
    return error;
}

int reportError(const Error& coreError) {
    const Error error = inCliWords(coreError);
    if (error.code == ErrorCode::Cancelled && interruptSignal() != 0) {
        // One line: what stopped it, and what was done about its run and output (the job's message).
        fmt::print(stderr, "{}layoutlab: interrupted by {}: {}\n", ::isatty(STDERR_FILENO) ? "\r\033[K" : "",
            interruptSignalName(), error.message == "cancelled" ? "stopped; partial output removed" : error.message);
        return 128 + interruptSignal();
    }
    fmt::print(stderr, "layoutlab: error: {}\n", error.describe());
    return error.code == ErrorCode::Usage ? kExitUsage : kExitData;
}

Status writeOutput(const std::string& text, const std::string& path) {
    return writeWholeFile(path.empty() ? "-" : path, text);
}

int printOutput(const std::string& text, const std::string& path) {
    if (auto ok = writeOutput(text, path); !ok)
        return reportError(ok.error());
    return kExitOk;
}

void StallOptions::addTo(CLI::App& cmd, const std::string& latencyHelp) {
    auto* flag = cmd.add_flag("--latency", latency, latencyHelp);
    cmd.add_option("--get-pipeline", getPipeline,
           "With --latency: GETs each client sends per round trip (redis-benchmark -P). A server that looks up a "
           "pipeline's keys together (Valkey 9.0 and later) overlaps their misses")
        ->capture_default_str()
        ->needs(flag);
    cmd.add_option("--prefetch-batch", prefetchBatch,
           "With --latency: the server's prefetch-batch-max-size, the most keys of a pipeline it looks up together "
           "(default: the layout's engine's, 16 on Valkey 9.0 and later, none before; 0: none)")
        ->needs(flag);
}

void CacheSettingsOptions::addTo(
    CLI::Option_group& group, const std::string& maxmemoryHelp, const std::string& memoryLimitHelp) {
    auto* budget = group.add_option("--maxmemory", maxmemory, maxmemoryHelp);
    group.add_option("--memory-limit", memoryLimit, memoryLimitHelp)->excludes(budget);
    group.add_option("--policy", policy, fmt::format("maxmemory-policy: {}", evictionPolicyList()))
        ->capture_default_str();
    group.add_option("--maxmemory-samples", samples, "Keys sampled per eviction (maxmemory-samples, 1..64)")
        ->capture_default_str();
    group.add_option("--lfu-log-factor", lfuLogFactor, "LFU policies: lfu-log-factor")->capture_default_str();
    group.add_option("--lfu-decay-time", lfuDecayTime, "LFU policies: lfu-decay-time, in minutes")
        ->capture_default_str();
}

void BudgetOptions::addTo(CLI::App& cmd) {
    auto* group = cmd.add_option_group("memory budget",
        "A cache under maxmemory (Valkey, Redis) or -m (memcached): each threshold keeps its keyspace within the "
        "budget as the server does (evict.c, items.c), and reports its hit ratio and evictions");
    // Each setting needs --maxmemory or --memory-limit: the request says so when neither is given.
    server.addTo(*group, "The server's maxmemory, as it reads it: 100mb (MiB), 1gb, 100m (10^6 bytes), bytes",
        "memcached layouts: the server's -m, as a size (64mb): pages go to slab classes until it, then each class "
        "evicts its own LRU's tail (items.c)");
    group->add_option("--base-memory", baseMemory,
        "used_memory of the server before the trace, counted against maxmemory with the keys (a `drive` "
        "measures it; default: none)");
    group->add_option("--eviction-seed", seed, "Seed of the sampling's and the LFU counter's random numbers")
        ->capture_default_str();
    group->add_flag("--raw-sizes", rawSizes,
        "Count each key as its key and value bytes only, as a cache simulator given object sizes does (with "
        "--policy exact-lru: libCacheSim's LRU), to see what the layout costs the hit ratio");
    group
        ->add_option("--sample-rate", sampleRate,
            "Replay this share of the keys (0.01: 1%) under the same share of each budget, as SHARDS samples a "
            "keyspace, two samples per point: a miss-ratio curve of many budgets at a fraction of the cost, with the "
            "sampling error stated (valkey and redis layouts)")
        ->capture_default_str();
    auto* fill = group->add_flag("--fill-on-miss", fillOnMiss,
        "Look-aside cache: a GET that misses is followed by a SET of the key (the GET's value size when the trace "
        "gives one, else the key's last). On by default for traces of reads only (oracleGeneral)");
    group
        ->add_flag("--no-fill-on-miss", noFillOnMiss,
            "Read a trace of reads only as imported: each object set before its first read, none filled")
        ->excludes(fill);
    group
        ->add_option("--fill-batch", fillBatch,
            "Fill the misses of each N requests after them, as a client pipelining N GETs does")
        ->capture_default_str();
}

void BudgetOptions::fill(SimulationRequest& request) const {
    request.maxmemory = server.maxmemory;
    request.memoryLimit = server.memoryLimit;
    request.evictionPolicy = server.policy;
    request.maxmemorySamples = server.samples;
    request.lfuLogFactor = server.lfuLogFactor;
    request.lfuDecayTime = server.lfuDecayTime;
    request.baseMemory = baseMemory;
    request.evictionSeed = seed;
    request.rawSizes = rawSizes;
    request.budgetSampleRate = sampleRate;
    if (fillOnMiss || noFillOnMiss) // neither: the trace decides (on for reads only)
        request.fillOnMiss = fillOnMiss;
    request.fillBatch = fillBatch;
}

// This host's load latencies for the cache geometry the run used (`layoutlab latency`), as the stall
// prediction takes them.
Expected<std::optional<LoadLatencies>> latenciesIfAsked(bool asked, SimulationJob& job) {
    if (!asked)
        return std::optional<LoadLatencies>();
    auto measured = keepLatenciesWith(job);
    if (!measured)
        return measured.error();
    return std::optional<LoadLatencies>(*measured);
}

Expected<LoadLatencies> keepLatenciesWith(SimulationJob& job) {
    fmt::print(stderr, "measuring this host's load latencies (pointer chase, a few seconds)\n");
    return measureAndKeepLoadLatencies(job, interruptToken());
}

// The JSON output with each point's predicted stall and the latencies it came from.
std::string withStall(const std::string& json, const SimulationResult& result, const LoadLatencies& l) {
    auto j = nlohmann::json::parse(json);
    for (std::size_t i = 0; i < result.points.size() && i < j["points"].size(); ++i)
        if (const auto e = predictStall(result.points[i], l))
            j["points"][i]["stall"] = { { "ns_per_get", e->ns }, { "uncertainty_ns", e->uncertaintyNs },
                { "overlapped_ns", e->overlappedNs }, { "serialized_ns", e->serializedNs } };
    if (const auto span = stallChangeToLeanest(result, l)) // as renderStallTable states it
        j["stall_change"] = { { "from_threshold", span->from->threshold }, { "to_threshold", span->to->threshold },
            { "ns_per_get", span->change.ns }, { "uncertainty_ns", span->change.uncertaintyNs } };
    j["load_latencies"] = toJson(l);
    return j.dump(2) + "\n";
}

} // namespace layoutlab::cli
