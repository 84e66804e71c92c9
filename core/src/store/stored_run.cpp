// SPDX-License-Identifier: MIT
#include "layoutlab/store/stored_run.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/sim/limit_sweep.h"
#include "layoutlab/store/run_parameters.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab {

Expected<StoredRun> loadStoredRun(ResultsDb& db, std::int64_t runId) {
    auto run = db.run(runId);
    if (!run)
        return run.error();
    auto points = db.points(runId);
    if (!points)
        return points.error();
    auto measurements = db.measurements(runId);
    if (!measurements)
        return measurements.error();
    auto timeline = db.timeline(runId);
    if (!timeline)
        return timeline.error();
    auto collections = db.collections(runId);
    if (!collections)
        return collections.error();
    auto limitValues = db.limitValues(runId);
    if (!limitValues)
        return limitValues.error();
    SimulationResult r;
    r.traceName = run->traceSource;
    r.layoutSpec = run->layout;
    r.allocatorSpec = run->allocator;
    auto params = RunParameters::fromJson(run->parametersJson);
    if (!params) {
        Error e = params.error();
        e.message = fmt::format("run {}: {}", runId, e.message);
        return e;
    }
    r.thresholdName = params->thresholdParameter;
    if (auto layout = parseLayout(run->layout); layout && (*layout)->threshold())
        r.configuredThreshold = (*layout)->threshold()->value; // the setting its engine ships with
    r.points = std::move(*points);
    r.timeline = std::move(*timeline);
    r.collections = std::move(*collections);
    // The replay summary, as the run reported it.
    const auto replay = nlohmann::json::parse(run->replayJson, nullptr, false);
    if (replay.is_object() && replay.contains("replay")) {
        const auto& t = replay["replay"];
        auto u = [&t](const char* k) { return t.contains(k) ? t[k].get<std::uint64_t>() : 0; };
        r.trace.requests = u("requests");
        r.trace.getHits = u("get_hits");
        r.trace.getMisses = u("get_misses");
        r.trace.expiredKeys = u("expired_keys");
        r.trace.distinctKeys = u("distinct_keys");
        r.trace.liveKeys = u("live_keys");
        r.trace.maxLiveKeys = u("max_live_keys");
        r.trace.ttlKeys = u("ttl_keys");
        r.trace.distinctShapes = u("distinct_shapes");
        r.trace.unwrittenKeyDeletes = u("unwritten_key_deletes");
        r.trace.unmatchedRenames = u("unmatched_renames");
        r.trace.fills = u("fills");
        r.trace.unfillableMisses = u("unfillable_misses");
        if (t.contains("requests_by_op"))
            for (int op = 0; op < kOpCount; ++op)
                if (t["requests_by_op"].contains(std::string(opName(static_cast<Op>(op)))))
                    r.trace.requestsByOp[static_cast<std::size_t>(op)]
                        = t["requests_by_op"][std::string(opName(static_cast<Op>(op)))].get<std::uint64_t>();
        const auto& index = replay["index"];
        r.indexBuckets = index.value("buckets", std::uint64_t { 0 });
        r.indexChildBuckets = index.value("child_buckets", 0.0);
        r.indexRehashing = index.value("rehashing", false);
        r.indexDatabases = index.value("databases", std::uint32_t { 1 });
        r.getWeightsFromTrace = replay.value("get_weights", std::string()) == "trace-gets";
        if (replay.contains("slab_model")) {
            r.slabTable = replay["slab_model"].value("size_classes", std::string());
            r.slabThreadCache = replay["slab_model"].value("thread_cache", false);
        }
        if (replay.contains("budget")) {
            r.budgetPolicy = replay["budget"].value("policy", std::string());
            r.budgetBaseBytes = replay["budget"].value("base_bytes", std::uint64_t { 0 });
            r.budgetSampleRate = replay["budget"].value("sample_rate", 1.0);
            r.budgetSampledKeys = replay["budget"].value("sampled_keys", std::uint64_t { 0 });
            r.budgetSamplingError = replay["budget"].value("sampling_error", 0.0);
            r.budgetMethod = replay["budget"].value("method", std::string());
        }
        r.fillBatch = replay.value("fill_batch", std::uint32_t { 0 });
        if (replay.contains("limit_sweep") && !limitValues->empty()) {
            const auto& header = replay["limit_sweep"];
            LimitSweep sweep { header.value("name", std::string()), {} };
            std::vector<std::vector<CollectionUsage>> usage;
            for (StoredLimitValue& v : *limitValues) {
                sweep.values.push_back(v.value);
                usage.push_back(std::move(v.collections));
            }
            r.limitSweep = limitSweepOfRun(sweep, header.value("run_value", std::int64_t { 0 }),
                header.value("threshold", std::uint32_t { 0 }), r, usage);
        }
        if (replay.contains("cache")) {
            r.cacheGeometry = replay["cache"].value("geometry", std::string());
            r.cacheStartRegions = replay["cache"].value("start_regions", std::string());
            r.cacheSampledGets = replay["cache"].value("sampled_gets", std::uint64_t { 0 });
        }
    }
    return StoredRun { std::move(*run), std::move(r), std::move(*measurements) };
}

} // namespace layoutlab
