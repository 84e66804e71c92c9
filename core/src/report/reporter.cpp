// SPDX-License-Identifier: MIT
#include "layoutlab/report/reporter.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab {

namespace {
// Metric columns shared by JSON and CSV, in order: name and value getter.
struct Metric {
    const char* name;
    double (*get)(const ThresholdPoint&);
    bool integral;
};
constexpr Metric kMetrics[] = {
    { "keys", [](const ThresholdPoint& p) { return static_cast<double>(p.keys); }, true },
    { "payload_bytes", [](const ThresholdPoint& p) { return static_cast<double>(p.payloadBytes); }, true },
    { "requested_bytes", [](const ThresholdPoint& p) { return static_cast<double>(p.requestedBytes); }, true },
    { "usable_bytes", [](const ThresholdPoint& p) { return static_cast<double>(p.usableBytes); }, true },
    { "internal_fragmentation_bytes",
        [](const ThresholdPoint& p) { return static_cast<double>(p.internalFragmentationBytes); }, true },
    { "index_bytes", [](const ThresholdPoint& p) { return static_cast<double>(p.indexBytes); }, true },
    { "usable_bytes_per_key", [](const ThresholdPoint& p) { return p.usableBytesPerKey; }, false },
    { "overhead_bytes_per_key", [](const ThresholdPoint& p) { return p.overheadBytesPerKey; }, false },
    { "allocations_per_key", [](const ThresholdPoint& p) { return p.allocationsPerKey; }, false },
    { "pointer_bytes_per_key", [](const ThresholdPoint& p) { return p.pointerBytesPerKey; }, false },
    { "embedded_fraction", [](const ThresholdPoint& p) { return p.embeddedFraction; }, false },
    { "lines_touched_per_get", [](const ThresholdPoint& p) { return p.linesTouchedPerGet; }, false },
    { "dependent_loads_per_get", [](const ThresholdPoint& p) { return p.dependentLoadsPerGet; }, false },
    { "unstorable_keys", [](const ThresholdPoint& p) { return static_cast<double>(p.unstorableKeys); }, true },
};

// Rounded to 4 decimals so output is stable across compilers and easy to diff.
double rounded(double v) {
    return std::round(v * 10000.0) / 10000.0;
}

// The cache-model metric names of a point: l1, l2 (with three levels), llc (the last level).
std::vector<std::string> missNames(std::size_t levels) {
    if (levels == 2)
        return { "l1_misses_per_get", "llc_misses_per_get" };
    if (levels == 3)
        return { "l1_misses_per_get", "l2_misses_per_get", "llc_misses_per_get" };
    return {};
}

std::string humanBytes(std::uint64_t bytes) {
    const char* units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}
} // namespace

std::vector<std::pair<std::string, double>> pointMetrics(const ThresholdPoint& point) {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& m : kMetrics)
        out.emplace_back(m.name, m.get(point));
    const auto names = missNames(point.missesPerGet.size());
    for (std::size_t i = 0; i < names.size(); ++i)
        out.emplace_back(names[i], point.missesPerGet[i]);
    return out;
}

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
    t["get_hits"] = r.trace.getHits;
    t["get_misses"] = r.trace.getMisses;
    t["expired_keys"] = r.trace.expiredKeys;
    t["distinct_keys"] = r.trace.distinctKeys;
    t["live_keys"] = r.trace.liveKeys;
    t["max_live_keys"] = r.trace.maxLiveKeys;
    t["ttl_keys"] = r.trace.ttlKeys;
    t["distinct_shapes"] = r.trace.distinctShapes;
    j["index"] = { { "buckets", r.indexBuckets }, { "child_buckets", rounded(r.indexChildBuckets) },
        { "rehashing", r.indexRehashing } };
    auto& points = j["points"] = nlohmann::json::array();
    for (const auto& p : r.points) {
        nlohmann::json point;
        point["threshold"] = r.thresholdName.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.threshold);
        for (const auto& m : kMetrics) {
            if (m.integral)
                point[m.name] = static_cast<std::uint64_t>(m.get(p));
            else
                point[m.name] = rounded(m.get(p));
        }
        const auto names = missNames(p.missesPerGet.size());
        for (std::size_t i = 0; i < names.size(); ++i)
            point[names[i]] = rounded(p.missesPerGet[i]);
        auto& classes = point["size_classes"] = nlohmann::json::array();
        for (const auto& c : p.sizeClasses)
            classes.push_back({ { "class_bytes", c.classBytes }, { "allocations", c.allocations },
                { "requested_bytes", c.requestedBytes }, { "payload_bytes", c.payloadBytes },
                { "usable_bytes", c.usableBytes }, { "regions_per_slab", c.regionsPerSlab }, { "slabs", c.slabs } });
        points.push_back(std::move(point));
    }
    const auto verdict = sweepVerdict(r);
    if (verdict.best && r.points.size() > 1)
        j["best_threshold"] = verdict.best->threshold;
    if (!r.cacheGeometry.empty())
        j["cache"] = { { "geometry", r.cacheGeometry }, { "sampled_gets", r.cacheSampledGets } };
    return j;
}

std::string renderJson(const SimulationResult& result) {
    return toJson(result).dump(2) + "\n";
}

std::string renderCsv(const SimulationResult& r) {
    std::string out = "threshold";
    for (const auto& m : kMetrics)
        out += fmt::format(",{}", m.name);
    const auto names = missNames(r.points.empty() ? 0 : r.points.front().missesPerGet.size());
    for (const auto& name : names)
        out += "," + name;
    out += "\n";
    for (const auto& p : r.points) {
        out += r.thresholdName.empty() ? std::string() : std::to_string(p.threshold);
        for (const auto& m : kMetrics) {
            if (m.integral)
                out += fmt::format(",{}", static_cast<std::uint64_t>(m.get(p)));
            else
                out += fmt::format(",{}", rounded(m.get(p)));
        }
        for (std::size_t i = 0; i < names.size() && i < p.missesPerGet.size(); ++i)
            out += fmt::format(",{}", rounded(p.missesPerGet[i]));
        out += "\n";
    }
    return out;
}

std::string renderTable(const SimulationResult& r, bool withClasses) {
    std::string out;
    out += fmt::format("trace      {}\n", r.traceName);
    out += fmt::format("layout     {}\n", r.layoutSpec);
    out += fmt::format("allocator  {}\n", r.allocatorSpec);
    out += fmt::format("replay     {} requests, {} live keys ({} with TTL), {} distinct shapes, {} GET hits / {} "
                       "misses{}\n",
        r.trace.requests, r.trace.liveKeys, r.trace.ttlKeys, r.trace.distinctShapes, r.trace.getHits, r.trace.getMisses,
        r.getWeightsFromTrace ? "" : " (no GETs: per-GET figures read every key once)");
    if (!r.cacheGeometry.empty())
        out += fmt::format("cache      {} (LRU, 64-byte lines), {} per threshold\n", r.cacheGeometry,
            r.getWeightsFromTrace ? fmt::format("the trace's last {} GET hits replayed", r.cacheSampledGets)
                                  : fmt::format("{} live keys read once (the trace has no GETs)", r.cacheSampledGets));
    out += fmt::format("index      {} buckets{}{}\n\n", r.indexBuckets,
        r.indexChildBuckets > 0 ? fmt::format(" + {:.0f} child buckets", r.indexChildBuckets) : std::string(),
        r.indexRehashing ? " (rehashing: both tables held)" : "");
    const std::string thresholdHeader = r.thresholdName.empty() ? "-" : r.thresholdName;
    const bool withCache = !r.points.empty() && !r.points.front().missesPerGet.empty();
    out += fmt::format("{:>12} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8} {:>9} {:>9} {:>8} {:>9}{}\n", thresholdHeader,
        "keys", "bytes/key", "overhd/key", "waste/key", "allocs/k", "ptr B/k", "embedded", "lines/GET", "deps/GET",
        "total", withCache ? fmt::format(" {:>8} {:>8}", "L1 miss", "LLC miss") : std::string());
    for (const auto& p : r.points) {
        const double keys = p.keys ? static_cast<double>(p.keys) : 1.0;
        out += fmt::format("{:>12} {:>10} {:>10.2f} {:>10.2f} {:>10.2f} {:>9.3f} {:>8.2f} {:>8.1f}% {:>9.3f} {:>8.3f} "
                           "{:>9}\n",
            r.thresholdName.empty() ? std::string("-") : std::to_string(p.threshold), p.keys, p.usableBytesPerKey,
            p.overheadBytesPerKey, static_cast<double>(p.internalFragmentationBytes) / keys, p.allocationsPerKey,
            p.pointerBytesPerKey, 100.0 * p.embeddedFraction, p.linesTouchedPerGet, p.dependentLoadsPerGet,
            humanBytes(p.usableBytes));
        if (withCache && !p.missesPerGet.empty()) {
            out.pop_back(); // the newline
            out += fmt::format(" {:>8.3f} {:>8.3f}\n", p.missesPerGet.front(), p.missesPerGet.back());
        }
    }
    if (r.points.size() > 1) {
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
    if (withClasses) {
        for (const auto& p : r.points) {
            out += fmt::format("\nsize classes{}:\n",
                r.thresholdName.empty() ? std::string() : fmt::format(" at {} = {}", r.thresholdName, p.threshold));
            out += fmt::format("{:>10} {:>12} {:>14} {:>14} {:>14} {:>12} {:>10}\n", "class", "allocations",
                "requested", "payload", "usable", "waste", "slabs");
            for (const auto& c : p.sizeClasses)
                out += fmt::format("{:>10} {:>12} {:>14} {:>14} {:>14} {:>12} {:>10}\n", c.classBytes, c.allocations,
                    c.requestedBytes, c.payloadBytes, c.usableBytes, c.usableBytes - c.requestedBytes,
                    c.regionsPerSlab ? std::to_string(c.slabs) : std::string("-"));
        }
    }
    return out;
}

} // namespace layoutlab
