// SPDX-License-Identifier: MIT
#include "layoutlab/store/simulation_request.h"

#include "layoutlab/alloc/memcached_page_model.h"
#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/get_time.h"
#include "layoutlab/sim/arena_replay.h"
#include "layoutlab/sim/limit_sweep.h"
#include "layoutlab/spec.h"

#include <fmt/format.h>

#include <algorithm>

namespace layoutlab {

namespace {

// The request's memory budget and look-aside filling into the job's configuration.
Status addBudget(const SimulationRequest& request, SimulationJob& job) {
    if (request.fillBatch == 0)
        return usageError("a fill batch holds at least one request", field::kFillOnMiss);
    if (request.fillOnMiss.value_or(false))
        job.config.fillOnMiss = request.fillBatch;
    job.fillReadOnlyTraces = !request.fillOnMiss.has_value();
    job.fillBatch = request.fillBatch;
    const bool budgetAsked = request.evictionPolicy != "noeviction" || request.maxmemorySamples != 5
        || request.lfuLogFactor != 10 || request.lfuDecayTime != 1 || !request.baseMemory.empty() || request.rawSizes;
    const bool memcached = job.config.layout->indexPolicy().kind == IndexKind::MemcachedAssoc;
    if (memcached && !request.maxmemory.empty())
        return usageError(fmt::format("--maxmemory is Valkey's and Redis's budget; layout '{}' is memcached's: give "
                                      "its -m as --memory-limit",
                              job.config.layout->spec()),
            field::kMaxmemory);
    if (!memcached && !request.memoryLimit.empty())
        return usageError(fmt::format("--memory-limit is memcached's -m; layout '{}' is a server's with maxmemory: "
                                      "give --maxmemory",
                              job.config.layout->spec()),
            field::kMemoryLimit);
    if (memcached && !request.memoryLimit.empty() && budgetAsked)
        return usageError("memcached has no eviction policy to choose: it evicts by its segmented LRU per slab class "
                          "(--policy, its settings, --base-memory and --raw-sizes are Valkey's and Redis's)",
            field::kEvictionPolicy);
    const std::string& limit = memcached ? request.memoryLimit : request.maxmemory;
    if (limit.empty()) {
        if (budgetAsked || request.budgetSampleRate != 1.0)
            return usageError(
                "an eviction policy, its settings, the base memory and a sample rate need a budget (--maxmemory)",
                field::kMaxmemory);
        return Ok {};
    }
    auto budgets = parseBudgets(limit);
    if (!budgets)
        return budgets.error();
    auto made = makeEvictionOptions(std::to_string(budgets->front()), request.evictionPolicy, request.maxmemorySamples,
        request.lfuLogFactor, request.lfuDecayTime);
    if (!made)
        return made.error();
    EvictionOptions budget = std::move(*made);
    budget.seed = request.evictionSeed;
    budget.rawSizes = request.rawSizes;
    budget.pageMoverWindow = request.pageMoverWindow;
    if (!request.baseMemory.empty()) {
        auto base = parseMemorySize(request.baseMemory, field::kMaxmemory);
        if (!base)
            return base.error();
        budget.baseBytes = *base;
    }
    if (budget.baseBytes >= budget.maxmemoryBytes)
        return usageError(fmt::format("maxmemory {} bytes leaves nothing for keys: the server holds {} bytes before "
                                      "the trace",
                              budget.maxmemoryBytes, budget.baseBytes),
            field::kMaxmemory);
    if (budgets->size() > 1)
        job.config.budgets = std::move(*budgets);
    job.config.eviction = std::move(budget);
    job.config.budgetSampleRate = request.budgetSampleRate;
    return Ok {};
}

// The collections' limits as given, each checked as the engines take it, and the one swept.
Status addCollectionLimits(const SimulationRequest& request, SimulationJob& job) {
    if (auto ok = checkCollectionLimits(request.collectionLimits); !ok)
        return ok;
    job.config.collectionLimits = request.collectionLimits;
    if (request.limitSweep.empty())
        return Ok {};
    if (job.config.eviction || job.config.slabs)
        return usageError("a limit sweep replays collection keys under every value at once, which the slab model "
                          "(its arenas follow the run's own limits) and a memory budget do not take yet: sweep it "
                          "without --slabs, --timeline or a budget",
            field::kLimitSweep);
    auto sweep = parseLimitSweep(request.limitSweep);
    if (!sweep)
        return sweep.error();
    job.config.limitSweep = std::move(*sweep);
    return Ok {};
}

} // namespace

Expected<SimulationJob> buildSimulationJob(const SimulationRequest& request) {
    auto models = parseLayoutAndAllocator(request.layout, request.allocator);
    if (!models)
        return models.error();
    // An RDB file is a keyspace as a server loads it: keys as the loader makes them, which some layouts
    // hold differently from a client's (layoutSpecForLoadedKeys). The run names the layout it used.
    if (auto format = traceFormat(request.tracePath, request.importOptions); format && *format == "rdb") {
        const std::string loaded = layoutSpecForLoadedKeys(models->layout->spec());
        if (loaded != models->layout->spec()) {
            auto asLoaded = parseLayoutAndAllocator(loaded, request.allocator);
            if (!asLoaded)
                return asLoaded.error();
            models->layout = asLoaded->layout;
        }
    }
    SimulationJob job;
    job.tracePath = request.tracePath;
    job.importOptions = request.importOptions;
    job.kind = request.kind;
    job.toolVersion = request.toolVersion;
    job.extraParametersJson = request.extraParametersJson;
    job.traceContentHash = request.traceContentHash;
    job.batchCell = request.batchCell;
    job.config.layout = models->layout;
    job.config.allocator = models->allocator;
    const auto param = models->layout->threshold();
    const bool asked = request.threshold || !request.thresholds.empty();
    if (asked && !param) {
        if (!request.layoutWithoutThresholdRunsOnce) {
            Error e = usageError(fmt::format("layout '{}' has no embed threshold (memcached stores every item whole "
                                             "in a slab chunk)",
                                     models->layout->spec()),
                request.threshold ? field::kThreshold : field::kThresholds);
            e.tag = kTagNoThreshold;
            return e;
        }
        job.kind = "sim"; // one point, no threshold
    } else if (request.threshold) {
        if (auto ok = checkThreshold(*request.threshold, *param, field::kThreshold); !ok)
            return ok.error();
        job.config.thresholds = { *request.threshold };
    } else if (!request.thresholds.empty()) {
        auto list = parseThresholds(request.thresholds, *param, field::kThresholds);
        if (!list)
            return list.error();
        job.config.thresholds = *list;
        auto& t = job.config.thresholds;
        const bool inRange = !t.empty() && param->value >= t.front() && param->value <= t.back();
        if (request.withShippedThreshold == SimulationRequest::Shipped::Always
            || (request.withShippedThreshold == SimulationRequest::Shipped::WithinRange && inRange)) {
            if (const auto at = std::lower_bound(t.begin(), t.end(), param->value);
                at == t.end() || *at != param->value)
                t.insert(at, param->value);
        }
    }
    if (request.cache || !request.cacheGeometry.empty()) {
        if (request.cacheGeometry.empty()) {
            job.config.cache = CacheGeometry::detect();
        } else {
            auto geometry = CacheGeometry::parse(request.cacheGeometry);
            if (!geometry)
                return geometry.error();
            job.config.cache = *geometry;
        }
    }
    if (request.timeline > kMaxTimelineSamples)
        return usageError(fmt::format("a timeline takes at most {} samples", kMaxTimelineSamples), field::kTimeline);
    if (auto ok = checkPageMoverWindow(request.pageMoverWindow); !ok)
        return ok.error();
    if (request.slabs || request.timeline > 0) {
        if (auto covered = slabModelCovers(*job.config.allocator); covered) {
            SlabModelOptions slabs;
            slabs.threadCache = request.slabThreadCache;
            // A server's main thread: its thread cache, and its cron's expire cycles.
            slabs.expireCycle = request.slabThreadCache;
            slabs.pageMoverWindow = request.pageMoverWindow;
            job.config.slabs = std::move(slabs);
            job.config.timelineSamples = request.timeline;
        } else if (!request.slabsWhereCovered) {
            Error e = covered.error();
            if (!request.slabs) // the timeline asked for the slab model
                e.field = field::kTimeline;
            return e;
        }
    }
    if (!request.startRegions.empty()) {
        auto regions = parseStartRegions(request.startRegions, field::kStartRegions);
        if (!regions)
            return regions.error();
        job.config.startRegions = *regions;
    }
    if (request.getPipeline == 0 || request.getPipeline > kMaxGetPipeline)
        return usageError(fmt::format("a pipeline holds 1 to {} GETs, got {}", kMaxGetPipeline, request.getPipeline),
            field::kGetPipeline);
    if (request.prefetchBatch && *request.prefetchBatch > kMaxPrefetchBatch)
        return usageError(fmt::format("a prefetch batch holds 0 to {} keys (prefetch-batch-max-size), got {}",
                              kMaxPrefetchBatch, *request.prefetchBatch),
            field::kPrefetchBatch);
    if (auto ok = addBudget(request, job); !ok)
        return ok.error();
    if (auto ok = addCollectionLimits(request, job); !ok)
        return ok.error();
    job.overlappedLookups = overlappedLookups(
        request.getPipeline, request.prefetchBatch.value_or(job.config.layout->queuedKeyPrefetchBatch()));
    return job;
}

} // namespace layoutlab
