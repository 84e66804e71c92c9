// SPDX-License-Identifier: MIT
#include "layoutlab/report/reporter.h"

#include "layoutlab/report/limit_advice.h"

#include "layoutlab/sim/point_metrics.h"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace layoutlab {

namespace {
// Below this many sampled keys a budget's miss-ratio curve strays from the full replay by more than its
// stated error at small budgets (978 keys of a 100,000-key Zipf trace: 4.7 points; 4,868: 0.5).
constexpr std::uint64_t kFewSampledKeys = 5000;
} // namespace

namespace {

// Rounded to 4 decimals so output is stable across compilers and easy to diff.
double rounded(double v) {
    return std::round(v * 10000.0) / 10000.0;
}

// A point of memcached under a memory limit: its budget's model gave each class its pages and evictions.
bool evictsByClass(const ThresholdPoint& p) {
    return p.budget && std::any_of(p.sizeClasses.begin(), p.sizeClasses.end(), [](const SizeClassUsage& c) {
        return c.heldSlabs != 0;
    });
}

nlohmann::json outputValue(const PointMetric& m, double v) {
    return m.integral ? nlohmann::json(static_cast<std::uint64_t>(v)) : nlohmann::json(rounded(v));
}

// The timeline as a table: per sample the requests, the trace's time and the live keys, then allocated and
// active bytes at a few of the run's thresholds (all of them up to three; else the first, the layout's own
// and the last).
std::string renderTimeline(const SimulationResult& r) {
    std::vector<std::size_t> shown;
    for (std::size_t i = 0; i < r.points.size(); ++i) {
        const bool own = !r.thresholdName.empty() && r.points[i].threshold == r.configuredThreshold;
        if (r.points.size() <= 3 || i == 0 || i + 1 == r.points.size() || own)
            shown.push_back(i);
    }
    std::string out
        = fmt::format("\ntimeline: {} samples; allocated / active bytes per threshold\n", r.timeline.size());
    out += fmt::format("{:>12} {:>10} {:>10}", "requests", "time s", "live keys");
    for (std::size_t i : shown)
        out += fmt::format(" {:>21}",
            r.thresholdName.empty() ? std::string("allocated / active")
                                    : fmt::format("{} = {}", r.thresholdName, r.points[i].threshold));
    out += "\n";
    for (const auto& s : r.timeline) {
        out += fmt::format("{:>12} {:>10.1f} {:>10}", s.requests, static_cast<double>(s.timeMs) / 1000.0, s.liveKeys);
        for (std::size_t i : shown)
            out += fmt::format(" {:>21}",
                fmt::format("{} / {}", bytesText(static_cast<double>(s.allocatedBytes[i])),
                    bytesText(static_cast<double>(s.activeBytes[i]))));
        out += "\n";
    }
    return out;
}

} // namespace

SweepVerdict sweepVerdict(const SimulationResult& result) {
    SweepVerdict v;
    for (const auto& p : result.points) {
        if (p.threshold == 64)
            v.at64 = &p;
        if (p.threshold == 128)
            v.at128 = &p;
    }
    if (!result.points.empty())
        v.best = &result.points[leanestPoint(result.points)];
    return v;
}

nlohmann::json toJson(const SimulationResult& r) {
    nlohmann::json j;
    j["trace"] = r.traceName;
    j["layout"] = r.layoutSpec;
    j["allocator"] = r.allocatorSpec;
    j["threshold_parameter"] = r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.thresholdName);
    j["get_weights"] = r.getWeightsFromTrace ? "trace-gets" : "every-key-once";
    auto& t = j["replay"];
    t["requests"] = r.trace.requests;
    for (int op = 0; op < kOpCount; ++op)
        if (r.trace.requestsByOp[static_cast<std::size_t>(op)])
            t["requests_by_op"][std::string(opName(static_cast<Op>(op)))]
                = r.trace.requestsByOp[static_cast<std::size_t>(op)];
    t.update({ { "get_hits", r.trace.getHits }, { "get_misses", r.trace.getMisses },
        { "expired_keys", r.trace.expiredKeys }, { "distinct_keys", r.trace.distinctKeys },
        { "live_keys", r.trace.liveKeys }, { "max_live_keys", r.trace.maxLiveKeys }, { "ttl_keys", r.trace.ttlKeys },
        { "distinct_shapes", r.trace.distinctShapes } });
    if (r.trace.unwrittenKeyDeletes)
        t["unwritten_key_deletes"] = r.trace.unwrittenKeyDeletes;
    if (r.trace.unmatchedRenames)
        t["unmatched_renames"] = r.trace.unmatchedRenames;
    if (r.trace.wrongTypeRequests)
        t["wrong_type_requests"] = r.trace.wrongTypeRequests;
    if (!r.collections.empty()) {
        auto& rows = j["collections"] = nlohmann::json::array();
        for (const CollectionUsage& c : r.collections)
            rows.push_back(
                { { "type", c.type }, { "encoding", c.encoding }, { "keys", c.keys }, { "entries", c.entries },
                    { "payload_bytes", c.payloadBytes }, { "allocations", rounded(c.allocations) },
                    { "requested_bytes", rounded(c.requestedBytes) }, { "usable_bytes", rounded(c.usableBytes) },
                    { "lookup_lines_per_element", rounded(c.lookupLinesPerElement()) },
                    { "bucket_array_bytes", rounded(c.bucketArrayBytes) },
                    { "usable_bytes_sd", rounded(std::sqrt(c.usableBytesVariance)) } });
    }
    if (r.limitSweep) {
        auto& sweep = j["limit_sweep"];
        sweep = { { "name", r.limitSweep->name }, { "run_value", r.limitSweep->runValue },
            { "threshold",
                r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.limitSweep->threshold) } };
        auto& points = sweep["points"] = nlohmann::json::array();
        for (const LimitPoint& p : r.limitSweep->points) {
            auto encodings = nlohmann::json::array();
            for (const CollectionUsage& c : p.collections)
                encodings.push_back({ { "type", c.type }, { "encoding", c.encoding }, { "keys", c.keys },
                    { "entries", c.entries }, { "usable_bytes", rounded(c.usableBytes) },
                    { "lookup_lines_per_element", rounded(c.lookupLinesPerElement()) } });
            points.push_back({ { "value", p.value }, { "keys", p.point.keys }, { "usable_bytes", p.point.usableBytes },
                { "usable_bytes_per_key", p.point.usableBytesPerKey }, { "collections", encodings } });
        }
    }
    if (r.trace.fills || r.trace.unfillableMisses)
        t.update({ { "fills", r.trace.fills }, { "unfillable_misses", r.trace.unfillableMisses } });
    if (!r.budgetPolicy.empty())
        j["budget"] = { { "policy", r.budgetPolicy }, { "base_bytes", r.budgetBaseBytes },
            { "sample_rate", r.budgetSampleRate }, { "sampled_keys", r.budgetSampledKeys },
            { "sampling_error", r.budgetSamplingError }, { "method", r.budgetMethod } };
    if (r.fillBatch)
        j["fill_batch"] = r.fillBatch;
    j["index"] = { { "buckets", r.indexBuckets }, { "child_buckets", rounded(r.indexChildBuckets) },
        { "rehashing", r.indexRehashing }, { "databases", r.indexDatabases } };
    auto& points = j["points"] = nlohmann::json::array();
    for (const auto& p : r.points) {
        nlohmann::json point;
        point["threshold"] = r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.threshold);
        for (const auto* m : metricsOf(kMetricOutput, p))
            if (const auto v = m->get(p))
                point[std::string(m->name)] = outputValue(*m, *v);
        auto& classes = point["size_classes"] = nlohmann::json::array();
        const bool perClassBudget = evictsByClass(p);
        for (const auto& c : p.sizeClasses) {
            nlohmann::json row { { "class_bytes", c.classBytes }, { "allocations", c.allocations },
                { "requested_bytes", c.requestedBytes }, { "payload_bytes", c.payloadBytes },
                { "usable_bytes", c.usableBytes }, { "regions_per_slab", c.regionsPerSlab }, { "slabs", c.slabs } };
            if (p.arena || perClassBudget)
                row["held_slabs"] = c.heldSlabs;
            if (perClassBudget)
                row["evictions"] = c.evictions;
            classes.push_back(std::move(row));
        }
        points.push_back(std::move(point));
    }
    const auto verdict = sweepVerdict(r);
    if (verdict.best && r.points.size() > 1)
        j["best_threshold"] = verdict.best->threshold;
    if (!r.cacheGeometry.empty())
        j["cache"] = { { "geometry", r.cacheGeometry }, { "sampled_gets", r.cacheSampledGets } };
    if (!r.cacheStartRegions.empty())
        j["cache"]["start_regions"] = r.cacheStartRegions;
    if (!r.slabTable.empty())
        j["slab_model"] = { { "size_classes", r.slabTable }, { "thread_cache", r.slabThreadCache } };
    if (!r.timeline.empty()) {
        auto& timeline = j["timeline"];
        timeline["thresholds"] = nlohmann::json::array();
        for (const auto& p : r.points)
            timeline["thresholds"].push_back(
                r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.threshold));
        auto& samples = timeline["samples"] = nlohmann::json::array();
        for (const auto& s : r.timeline)
            samples.push_back({ { "requests", s.requests }, { "time_ms", s.timeMs }, { "live_keys", s.liveKeys },
                { "allocated_bytes", s.allocatedBytes }, { "active_bytes", s.activeBytes } });
    }
    return j;
}

std::string renderJson(const SimulationResult& result) {
    return toJson(result).dump(2) + "\n";
}

std::string renderCsv(const SimulationResult& r) {
    std::string out = "threshold";
    const auto columns
        = r.points.empty() ? metricsWith(kMetricOutput, 0, false, false) : metricsOf(kMetricOutput, r.points.front());
    for (const auto* m : columns)
        out += fmt::format(",{}", m->name);
    out += "\n";
    for (const auto& p : r.points) {
        out += r.thresholdName.empty() ? std::string() : std::to_string(p.threshold);
        for (const auto* m : columns)
            if (const auto v = m->get(p))
                out += m->integral ? fmt::format(",{}", static_cast<std::uint64_t>(*v))
                                   : fmt::format(",{}", rounded(*v));
        out += "\n";
    }
    return out;
}

namespace {
// The collection keys, by type and encoding, the same at every threshold (counted in each point).
std::string collectionLines(const SimulationResult& r) {
    std::string out;
    for (std::size_t i = 0; i < r.collections.size(); ++i) {
        const CollectionUsage& c = r.collections[i];
        const auto keys = static_cast<double>(c.keys);
        // A skiplist's node levels are drawn at random: its bytes are an expectation, give or take this.
        const std::string drawn = c.usableBytesVariance > 0
            ? fmt::format(" (± {} over the node levels' draw)", bytesText(std::sqrt(c.usableBytesVariance)))
            : std::string();
        out += fmt::format("{} {} {} keys as {}: {:.1f} entries and {} usable per key (its own allocations "
                           "included), {} in all{}; {:.2f} lines per {}\n",
            i == 0 ? "collection" : "          ", c.keys, c.type, c.encoding, static_cast<double>(c.entries) / keys,
            bytesText(c.usableBytes / keys), bytesText(c.usableBytes), drawn, c.lookupLinesPerElement(),
            lookupCommand(c.type));
    }
    if (!r.collections.empty())
        out += "           the same at every threshold; counted in every row's keys and bytes, not in its size "
               "classes\n";
    if (r.trace.wrongTypeRequests)
        out += fmt::format("           {} {} the server answers WRONGTYPE (a string command on a collection, or "
                           "the other way round): no effect\n",
            r.trace.wrongTypeRequests, r.trace.wrongTypeRequests == 1 ? "request" : "requests");
    return out;
}
} // namespace

namespace {
// A swept collection limit: each value's keys, bytes per key against the run's own value, and the collection
// keys by encoding.
std::string limitSweepLines(const SimulationResult& r) {
    if (!r.limitSweep)
        return {};
    const LimitSweepResult& s = *r.limitSweep;
    std::string out = fmt::format("\n{} swept in the same pass ({}, the run's own value {}){}:\n", s.name,
        r.thresholdName.empty() ? std::string("one point") : fmt::format("at {} = {}", r.thresholdName, s.threshold),
        s.runValue, r.collections.empty() ? "; the trace holds no collection keys" : "");
    const ThresholdPoint* own = nullptr;
    for (const auto& p : r.points)
        if (p.threshold == s.threshold)
            own = &p;
    const std::string type = limitType(s.name);
    out += fmt::format("{:>12} {:>10} {:>12} {:>10} {:>14}   {}\n", "value", "keys", "bytes/key",
        fmt::format("vs {}", s.runValue), fmt::format("lines/{}", lookupCommand(type)), "collection keys by encoding");
    const LimitPoint* leanest = nullptr;
    for (const LimitPoint& p : s.points) {
        std::string encodings;
        for (const CollectionUsage& c : p.collections)
            encodings += fmt::format("{}{} {} {}", encodings.empty() ? "" : ", ", c.keys, c.type, c.encoding);
        const double change
            = own && own->usableBytesPerKey > 0 ? 100 * (p.point.usableBytesPerKey / own->usableBytesPerKey - 1) : 0.0;
        out += fmt::format("{:>12} {:>10} {:>12.2f} {:>+9.2f}% {:>14.2f}   {}\n", p.value, p.point.keys,
            p.point.usableBytesPerKey, change, lookupLinesPerElement(p.collections, type), encodings);
        if (!leanest || p.point.usableBytesPerKey < leanest->point.usableBytesPerKey)
            leanest = &p;
    }
    if (leanest && own)
        out += fmt::format("fewest bytes per key: {} = {} ({:.2f} B/key, {:+.2f}% against {})\n", s.name,
            leanest->value, leanest->point.usableBytesPerKey,
            100 * (leanest->point.usableBytesPerKey / own->usableBytesPerKey - 1), s.runValue);
    return out;
}
} // namespace

std::string renderTable(const SimulationResult& r, bool withClasses) {
    std::string out;
    out += fmt::format("trace      {}\n", r.traceName);
    out += fmt::format("layout     {}\n", r.layoutSpec);
    out += fmt::format("allocator  {}\n", r.allocatorSpec);
    out += fmt::format("replay     {} requests, {} live keys ({} with TTL), {} distinct shapes, {} GET hits / {} "
                       "misses{}\n",
        r.trace.requests, r.trace.liveKeys, r.trace.ttlKeys, r.trace.distinctShapes, r.trace.getHits, r.trace.getMisses,
        r.getWeightsFromTrace ? "" : " (no GETs: per-GET figures read every key once)");
    if (!r.cacheGeometry.empty()) {
        out += fmt::format("cache      {} (LRU, 64-byte lines), {} per threshold\n", r.cacheGeometry,
            r.getWeightsFromTrace ? fmt::format("the trace's last {} GET hits replayed", r.cacheSampledGets)
                                  : fmt::format("{} live keys read once (the trace has no GETs)", r.cacheSampledGets));
        if (!r.collections.empty())
            out += r.cacheSampledGets == 0
                ? "           no string key to read: the cache model places string keys only (no miss figures)\n"
                : "           string keys only: collection keys' allocations and lookups are not placed\n";
    }
    if (!r.cacheStartRegions.empty())
        out += fmt::format(
            "           size classes start after the server's own regions: {} (size:regions)\n", r.cacheStartRegions);
    if (r.slabTable == "memcached")
        out += "slab model memcached's slab pages per class: active is total_malloced\n";
    else if (!r.slabTable.empty())
        out += fmt::format("slab model one jemalloc arena per threshold, {} size classes, {}\n", r.slabTable,
            r.slabThreadCache ? "a thread cache in front" : "no thread cache");
    if (!r.budgetPolicy.empty()) {
        const std::string limit = r.points.empty() || !r.points.front().budget
            ? std::string("-")
            : bytesText(double(r.points.front().budget->maxmemoryBytes));
        if (r.layoutSpec.rfind("memcached", 0) == 0)
            out += fmt::format("budget     -m {} ({}): pages to classes until the limit, then each class evicts its "
                               "own LRU's tail\n",
                limit, r.budgetPolicy);
        else
            out += fmt::format("budget     maxmemory {} ({}), {} of it the server's own before the trace; {}\n", limit,
                r.budgetPolicy, bytesText(double(r.budgetBaseBytes)),
                r.budgetMethod == "stack distances"
                    ? "every budget from one pass of byte stack distances (exact LRU holds the most recent keys "
                      "that fit)"
                    : "each threshold and budget replayed on its own");
        if (r.budgetMethod.starts_with("a replay per budget ("))
            out += fmt::format("           {}\n", r.budgetMethod);
        if (r.budgetSampleRate < 1.0)
            out += fmt::format("           replayed over two samples of {:.3g}% of the keys each ({} keys in all), "
                               "under the same share of each budget: hit ratios within ±{:.2f} points (half the "
                               "largest difference between the samples)\n",
                100 * r.budgetSampleRate, r.budgetSampledKeys, 100 * r.budgetSamplingError);
        if (r.budgetSampleRate < 1.0 && r.budgetSampledKeys < kFewSampledKeys)
            out += fmt::format("           note: fewer than {} keys sampled; at the smallest budgets the error can be "
                               "several times the stated one (docs/performance.md): sample more keys\n",
                kFewSampledKeys);
    }
    if (r.fillBatch)
        out += fmt::format("fills      a GET miss is followed by a SET of the key{}: {} fills, {} misses of keys never "
                           "written\n",
            r.fillBatch > 1 ? fmt::format(" after each {} requests", r.fillBatch) : std::string(), r.trace.fills,
            r.trace.unfillableMisses);
    out += collectionLines(r);
    out += fmt::format("index      {} buckets{}{}{}\n\n", r.indexBuckets,
        r.indexChildBuckets > 0 ? fmt::format(" + {:.0f} child buckets", r.indexChildBuckets) : std::string(),
        r.indexDatabases > 1 ? fmt::format(", in the tables of {} databases", r.indexDatabases) : std::string(),
        r.indexRehashing ? " (rehashing: both tables held)" : "");
    const std::string thresholdHeader = r.thresholdName.empty() ? "-" : r.thresholdName;
    const auto columns = tableColumns(r.points.empty() ? 0 : r.points.front().missesPerGet.size(),
        !r.points.empty() && r.points.front().arena, !r.points.empty() && r.points.front().budget);
    out += fmt::format("{:>12}", thresholdHeader);
    for (const auto* m : columns) // a percentage's header covers its % sign too
        out += fmt::format(" {:>{}}", m->tableHeader, m->tableWidth + (m->style == MetricStyle::Percent ? 1 : 0));
    out += "\n";
    for (const auto& p : r.points) {
        out += fmt::format("{:>12}", r.thresholdName.empty() ? std::string("-") : std::to_string(p.threshold));
        for (const auto* m : columns)
            if (const auto v = m->get(p))
                out += " " + formatForTable(*m, *v);
        out += "\n";
    }
    if (!r.points.empty() && r.points.front().budget) {
        // Under a budget the question is the hit ratio: the best threshold at each budget.
        std::map<std::uint64_t, const ThresholdPoint*> best;
        for (const auto& p : r.points) {
            auto& b = best[p.budget->maxmemoryBytes];
            if (!b || p.budget->hitRatio() > b->budget->hitRatio())
                b = &p;
        }
        if (r.points.size() > best.size()) {
            out += "\nbest hit ratio at each budget:\n";
            for (const auto& [bytes, p] : best)
                out += fmt::format("  {:>10}: {} = {} ({:.2f}%, {} keys held)\n", bytesText(double(bytes)),
                    r.thresholdName.empty() ? std::string("-") : r.thresholdName, p->threshold,
                    100 * p->budget->hitRatio(), p->keys);
        }
    } else if (r.points.size() > 1) {
        const auto v = sweepVerdict(r);
        out += fmt::format("\nfewest bytes per key: {} = {} ({:.2f} B/key, {:.3f} lines/GET)\n", r.thresholdName,
            v.best->threshold, v.best->usableBytesPerKey, v.best->linesTouchedPerGet);
        for (const auto* at : { v.at64, v.at128 }) {
            if (!at)
                continue;
            const double extra = at->usableBytesPerKey - v.best->usableBytesPerKey;
            out += fmt::format("{:>3}: {:.2f} B/key ({:+.2f} B/key, {:+.2f} MiB per million keys vs best), {:.3f} "
                               "lines/GET ({:+.3f})\n",
                at->threshold, at->usableBytesPerKey, extra, extra * 1e6 / (1024.0 * 1024.0), at->linesTouchedPerGet,
                at->linesTouchedPerGet - v.best->linesTouchedPerGet);
        }
        if (v.at64 && v.at128) {
            const double saved = v.at64->usableBytesPerKey - v.at128->usableBytesPerKey;
            out += fmt::format("64 -> 128 saves {:.2f} B/key ({:.1f}%) and {:.3f} lines per GET on this keyspace\n",
                saved, 100.0 * saved / v.at64->usableBytesPerKey,
                v.at64->linesTouchedPerGet - v.at128->linesTouchedPerGet);
        }
    }
    out += limitSweepLines(r);
    if (withClasses) {
        for (const auto& p : r.points) {
            out += fmt::format("\nsize classes{}:\n",
                r.thresholdName.empty() ? std::string() : fmt::format(" at {} = {}", r.thresholdName, p.threshold));
            // Held slabs with the slab model; memcached under -m: its pages and each class's evictions.
            const bool perClassBudget = evictsByClass(p);
            const bool held = p.arena || perClassBudget;
            out += fmt::format("{:>10} {:>12} {:>14} {:>14} {:>14} {:>12} {:>10}{}{}\n", "class", "allocations",
                "requested", "payload", "usable", "waste", "slabs", held ? fmt::format(" {:>10}", "held") : "",
                perClassBudget ? fmt::format(" {:>10}", "evicted") : "");
            for (const auto& c : p.sizeClasses)
                out += fmt::format("{:>10} {:>12} {:>14} {:>14} {:>14} {:>12} {:>10}{}{}\n", c.classBytes,
                    c.allocations, c.requestedBytes, c.payloadBytes, c.usableBytes, c.usableBytes - c.requestedBytes,
                    c.regionsPerSlab ? std::to_string(c.slabs) : std::string("-"),
                    !held                  ? std::string()
                        : c.regionsPerSlab ? fmt::format(" {:>10}", c.heldSlabs)
                                           : fmt::format(" {:>10}", "-"),
                    perClassBudget ? fmt::format(" {:>10}", c.evictions) : std::string());
        }
    }
    if (!r.timeline.empty())
        out += renderTimeline(r);
    return out;
}

} // namespace layoutlab
