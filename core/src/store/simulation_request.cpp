// SPDX-License-Identifier: MIT
#include "layoutlab/store/simulation_request.h"

#include "layoutlab/layout/layout_registry.h"
#include "layoutlab/report/get_time.h"
#include "layoutlab/sim/arena_replay.h"

#include <fmt/format.h>

#include <algorithm>

namespace layoutlab {

Expected<SimulationJob> buildSimulationJob(const SimulationRequest& request) {
    auto models = parseLayoutAndAllocator(request.layout, request.allocator);
    if (!models)
        return models.error();
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
    if (request.slabs || request.timeline > 0) {
        if (auto covered = slabModelCovers(*job.config.allocator); covered) {
            SlabModelOptions slabs;
            slabs.threadCache = request.slabThreadCache;
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
    job.overlappedLookups = overlappedLookups(
        request.getPipeline, request.prefetchBatch.value_or(job.config.layout->queuedKeyPrefetchBatch()));
    return job;
}

} // namespace layoutlab
