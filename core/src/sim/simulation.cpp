// SPDX-License-Identifier: MIT
#include "layoutlab/sim/simulation.h"

#include "keyspace_replay.h"
#include "layoutlab/spec.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace layoutlab {

namespace {
    constexpr std::size_t kBatchRequests = 4096;
    constexpr std::size_t kMaxThresholds = 4096;

    struct ClassAccumulator {
        std::map<std::uint64_t, SizeClassUsage> byClass;
        void add(std::uint64_t requested, std::uint64_t usable, std::uint64_t count) {
            auto& row = byClass[usable];
            row.classBytes = usable;
            row.allocations += count;
            row.requestedBytes += requested * count;
            row.usableBytes += usable * count;
        }
    };

    ThresholdPoint evaluate(const SimulationConfig& config, std::uint32_t threshold,
        const std::vector<ShapeHistogram::Entry>& keyspace, const std::vector<ShapeHistogram::Entry>& gets,
        const std::vector<IndexFootprint>& indexes) {
        const auto& layout = *config.layout;
        const auto& alloc = *config.allocator;
        ThresholdPoint p;
        p.threshold = threshold;
        ClassAccumulator classes;
        for (const auto& [packed, count] : keyspace) {
            const KeyShape shape = unpackShape(packed);
            const KeyLayout kl = layout.describe(shape, threshold, alloc);
            if (!kl.stored) {
                p.unstorableKeys += count;
                continue;
            }
            p.keys += count;
            p.payloadBytes += (std::uint64_t { shape.keyBytes } + shape.valueBytes) * count;
            p.pointerBytes += std::uint64_t { kl.pointerBytes } * count;
            p.embeddedKeys += kl.embedded() ? count : 0;
            for (std::size_t i = 0; i < kl.allocationCount; ++i) {
                const auto& a = kl.allocations[i];
                const std::uint64_t usable = alloc.usableSize(a.requestedBytes);
                const std::uint64_t n = std::uint64_t { a.count } * count;
                p.requestedBytes += a.requestedBytes * n;
                p.usableBytes += usable * n;
                p.allocations += n;
                classes.add(a.requestedBytes, usable, n);
            }
        }
        for (const auto& index : indexes) {
            p.requestedBytes += index.requestedBytes;
            p.usableBytes += index.usableBytes;
            p.indexBytes += index.usableBytes;
            p.allocations += index.allocations;
            for (const auto& part : index.parts)
                if (part.fromAllocator)
                    classes.add(part.requestedBytes, part.usableBytes, part.count);
        }
        p.internalFragmentationBytes = p.usableBytes - p.requestedBytes;
        if (p.keys > 0) {
            const double keys = static_cast<double>(p.keys);
            p.usableBytesPerKey = static_cast<double>(p.usableBytes) / keys;
            p.overheadBytesPerKey = (static_cast<double>(p.usableBytes) - static_cast<double>(p.payloadBytes)) / keys;
            p.allocationsPerKey = static_cast<double>(p.allocations) / keys;
            p.pointerBytesPerKey = static_cast<double>(p.pointerBytes) / keys;
            p.embeddedFraction = static_cast<double>(p.embeddedKeys) / keys;
        }
        // Per GET: weighted by the shapes the trace's GETs hit.
        double lines = 0, loads = 0, weight = 0;
        for (const auto& [packed, count] : gets) {
            const ShapeCost cost = costOf(layout, alloc, unpackShape(packed), threshold);
            if (!cost.layout.stored)
                continue;
            const double w = static_cast<double>(count);
            lines += cost.linesTouched * w;
            loads += cost.layout.dependentLoads * w;
            weight += w;
        }
        if (weight > 0) {
            p.linesTouchedPerGet = lines / weight;
            p.dependentLoadsPerGet = loads / weight;
        }
        const auto allocatorClasses = alloc.classes();
        for (auto& [usable, row] : classes.byClass) {
            for (const auto& c : allocatorClasses)
                if (c.size == usable && c.regionsPerSlab > 0) {
                    row.regionsPerSlab = c.regionsPerSlab;
                    row.slabs = (row.allocations + c.regionsPerSlab - 1) / c.regionsPerSlab;
                }
            p.sizeClasses.push_back(row);
        }
        return p;
    }
} // namespace

ShapeCost costOf(const LayoutModel& layout, const AllocatorModel& allocator, const KeyShape& shape,
    std::uint32_t threshold) {
    ShapeCost cost;
    cost.layout = layout.describe(shape, threshold, allocator);
    cost.linesTouched = cost.layout.indexLinesPerGet;
    for (std::size_t i = 0; i < cost.layout.allocationCount; ++i) {
        const auto& a = cost.layout.allocations[i];
        const std::uint64_t usable = allocator.usableSize(a.requestedBytes);
        cost.requestedBytes += a.requestedBytes * a.count;
        cost.usableBytes += usable * a.count;
        if (a.readBytes > 0)
            cost.linesTouched += a.count * expectedLinesTouched(a.readBytes, allocator.alignment(usable));
    }
    return cost;
}

Expected<std::vector<std::uint32_t>> parseThresholds(std::string_view text, const ThresholdParam& param) {
    std::vector<std::uint32_t> out;
    auto check = [&](std::uint64_t value) -> Status {
        if (value < param.min || value > param.max)
            return usageError(fmt::format("threshold {} is out of range [{}, {}] for {}", value, param.min, param.max,
                                  param.name),
                "--thresholds");
        return Ok {};
    };
    if (text.find(':') != std::string_view::npos) {
        const auto parts = splitString(text, ':');
        if (parts.size() != 3)
            return usageError(fmt::format("'{}' is not FIRST:LAST:STEP", text), "--thresholds");
        auto first = parseUnsigned(parts[0], "--thresholds");
        auto last = parseUnsigned(parts[1], "--thresholds");
        auto step = parseUnsigned(parts[2], "--thresholds");
        if (!first || !last || !step)
            return usageError(fmt::format("'{}' is not FIRST:LAST:STEP with whole numbers", text), "--thresholds");
        if (*step == 0 || *last < *first)
            return usageError(fmt::format("'{}' needs STEP > 0 and FIRST <= LAST", text), "--thresholds");
        if ((*last - *first) / *step + 1 > kMaxThresholds)
            return usageError(fmt::format("'{}' gives more than {} thresholds", text, kMaxThresholds), "--thresholds");
        for (std::uint64_t t = *first; t <= *last; t += *step) {
            if (auto ok = check(t); !ok)
                return ok.error();
            out.push_back(static_cast<std::uint32_t>(t));
        }
    } else {
        for (auto part : splitString(text, ',')) {
            auto value = parseUnsigned(part, "--thresholds");
            if (!value)
                return usageError(fmt::format("'{}' in --thresholds is not a whole number", part), "--thresholds");
            if (auto ok = check(*value); !ok)
                return ok.error();
            out.push_back(static_cast<std::uint32_t>(*value));
        }
    }
    if (out.empty() || out.size() > kMaxThresholds)
        return usageError("--thresholds needs between 1 and 4096 values", "--thresholds");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Expected<SimulationResult> simulate(const SimulationConfig& config, TraceReader& trace, ProgressSink* progress,
    std::stop_token stop) {
    if (!config.layout || !config.allocator)
        return usageError("simulate() needs a layout and an allocator");
    if (auto ok = config.layout->checkAllocator(*config.allocator); !ok)
        return ok.error();
    const auto thresholdParam = config.layout->threshold();
    std::vector<std::uint32_t> thresholds = config.thresholds;
    if (!thresholdParam && !thresholds.empty())
        return usageError(fmt::format("layout '{}' has no embed threshold to vary", config.layout->spec()),
            "--thresholds");
    if (thresholds.empty())
        thresholds.push_back(thresholdParam ? thresholdParam->value : 0);

    const IndexPolicy policy = config.layout->indexPolicy();
    KeyspaceReplay replay(policy, trace.keyIdLimit());
    std::vector<Request> batch(kBatchRequests);
    std::uint64_t done = 0;
    const std::uint64_t total = trace.totalRequests();
    while (true) {
        if (stop.stop_requested()) {
            Error e;
            e.code = ErrorCode::Cancelled;
            e.message = "cancelled";
            return e;
        }
        auto n = trace.read(batch);
        if (!n)
            return n.error();
        if (*n == 0)
            break;
        if (auto ok = replay.apply(std::span<const Request>(batch.data(), *n), done); !ok) {
            Error e = ok.error();
            e.file = trace.name();
            return e;
        }
        done += *n;
        if (progress && (done / kBatchRequests) % 64 == 0)
            progress->progress(total ? static_cast<double>(done) / static_cast<double>(total) : -1.0, done);
    }
    replay.finish();

    SimulationResult result;
    result.traceName = trace.name();
    result.layoutSpec = config.layout->spec();
    result.allocatorSpec = config.allocator->spec();
    if (thresholdParam) {
        result.thresholdName = thresholdParam->name;
        result.configuredThreshold = thresholdParam->value;
    }
    result.trace = replay.summary();
    const auto keyspace = replay.keyspaceShapes().sorted();
    auto gets = replay.getShapes().sorted();
    result.getWeightsFromTrace = !gets.empty();
    if (gets.empty())
        gets = keyspace; // no GETs in the trace: every live key read once
    result.trace.distinctShapes = keyspace.size();

    std::vector<IndexFootprint> indexes;
    indexes.push_back(replay.keyspaceTable().footprint(*config.allocator));
    if (const auto* expires = replay.expiresTable(); expires && expires->entries() > 0)
        indexes.push_back(expires->footprint(*config.allocator));
    for (const auto& index : indexes) {
        result.indexRehashing = result.indexRehashing || index.rehashing;
        result.indexBuckets += index.buckets;
        result.indexChildBuckets += static_cast<double>(index.childBuckets);
    }
    for (const auto threshold : thresholds) {
        if (stop.stop_requested()) {
            Error e;
            e.code = ErrorCode::Cancelled;
            e.message = "cancelled";
            return e;
        }
        result.points.push_back(evaluate(config, threshold, keyspace, gets, indexes));
    }
    if (progress)
        progress->progress(1.0, done);
    return result;
}

} // namespace layoutlab
