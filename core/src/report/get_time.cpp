// SPDX-License-Identifier: MIT
#include "layoutlab/report/get_time.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab {

namespace {

// The serialized stall of `misses` (per level), and its uncertainty from the latencies alone.
struct Serialized {
    double ns = 0;
    double latencyUncertaintyNs = 0;
};
Serialized serialized(const std::vector<double>& misses, const LoadLatencies& l) {
    Serialized s;
    const std::size_t n = misses.size();
    for (std::size_t i = 0; i + 1 < n; ++i) {
        const double hitsNext = std::max(0.0, misses[i] - misses[i + 1]); // missed level i, hit level i+1
        s.ns += hitsNext * l.levelNs[i + 1];
        s.latencyUncertaintyNs += hitsNext * l.levelUncertaintyNs[i + 1];
    }
    s.ns += misses.back() * l.memoryNs;
    s.latencyUncertaintyNs += misses.back() * l.memoryUncertaintyNs;
    return s;
}

// The share of a GET's lines that start a step of its pointer chase.
double stepShare(const ThresholdPoint& p) {
    const double lines = p.linesTouchedPerGet;
    return lines > 0 ? std::min(1.0, (1.0 + p.dependentLoadsPerGet) / lines) : 1.0;
}

// The shares of a GET's serialized stall it pays when `lookups` GETs overlap their step-starting misses:
// those misses, shared by the batch (the overlapped end), and all it pays (with every other miss its own).
struct PaidShares {
    double starting = 0;
    double all = 0;
};
PaidShares paidShares(const ThresholdPoint& p, std::uint32_t lookups) {
    const double step = stepShare(p);
    const double starting = step / std::max<std::uint32_t>(lookups, 1);
    return { starting, starting + (1 - step) };
}

bool usable(const ThresholdPoint& p, const LoadLatencies& l) {
    return !p.missesPerGet.empty() && l.levelNs.size() == p.missesPerGet.size()
        && l.levelUncertaintyNs.size() == l.levelNs.size();
}

} // namespace

std::uint32_t overlappedLookups(std::uint32_t pipeline, std::uint32_t prefetchBatch) {
    return pipeline < 2 || prefetchBatch < 2 ? 1 : std::min(pipeline, prefetchBatch);
}

std::optional<StallEstimate> predictStall(const ThresholdPoint& point, const LoadLatencies& latencies) {
    if (!usable(point, latencies))
        return std::nullopt;
    const auto s = serialized(point.missesPerGet, latencies);
    const PaidShares paid = paidShares(point, latencies.overlappedLookups);
    StallEstimate e;
    e.serializedNs = s.ns * paid.all;
    e.overlappedNs = s.ns * paid.starting;
    e.ns = (e.serializedNs + e.overlappedNs) / 2;
    e.uncertaintyNs
        = (e.serializedNs - e.overlappedNs) / 2 + s.latencyUncertaintyNs * paid.all + kMissesPerGetUncertainty * e.ns;
    return e;
}

std::optional<StallEstimate> predictStallChange(
    const ThresholdPoint& from, const ThresholdPoint& to, const LoadLatencies& latencies) {
    const auto a = predictStall(from, latencies);
    const auto b = predictStall(to, latencies);
    if (!a || !b)
        return std::nullopt;
    StallEstimate d;
    d.serializedNs = b->serializedNs - a->serializedNs;
    d.overlappedNs = b->overlappedNs - a->overlappedNs;
    d.ns = (d.serializedNs + d.overlappedNs) / 2;
    // Where the change lies between its two ends, and what the latencies and the misses add to it. The
    // latencies' error moves both points alike, so only the changed misses carry it.
    std::vector<double> changed(from.missesPerGet.size());
    for (std::size_t i = 0; i < changed.size(); ++i)
        changed[i] = std::abs(to.missesPerGet[i] - from.missesPerGet[i]);
    const auto latencyPart = serialized(changed, latencies).latencyUncertaintyNs
        * std::max(paidShares(from, latencies.overlappedLookups).all, paidShares(to, latencies.overlappedLookups).all);
    d.uncertaintyNs = std::abs(d.serializedNs - d.overlappedNs) / 2 + latencyPart
        + kMissesPerGetUncertainty * std::max(std::abs(a->ns), std::abs(b->ns));
    return d;
}

std::string renderStallTable(const SimulationResult& r, const LoadLatencies& l) {
    if (r.points.empty() || !predictStall(r.points.front(), l))
        return {};
    std::string out = "\npredicted memory stall per GET, from the misses above and this host's load latencies (";
    for (std::size_t i = 1; i < l.levelNs.size(); ++i)
        out += fmt::format(
            "{} {:.1f} ns, ", i + 1 == l.levelNs.size() ? std::string("LLC") : fmt::format("L{}", i + 1), l.levelNs[i]);
    out += fmt::format("memory {:.1f} ns){}\n\n{:>10} {:>14} {:>10} {:>22}\n", l.memoryNs,
        l.overlappedLookups > 1
            ? fmt::format(",\nwith the lookups of {} pipelined GETs overlapped (the server prefetches them together)",
                l.overlappedLookups)
            : std::string(),
        "threshold", "stall ns/GET", "±", "overlapped..serialized");
    for (const auto& p : r.points) {
        const auto e = predictStall(p, l);
        out += fmt::format("{:>10} {:>14.1f} {:>10.1f} {:>22}\n", p.threshold, e->ns, e->uncertaintyNs,
            fmt::format("{:.1f}..{:.1f}", e->overlappedNs, e->serializedNs));
    }
    if (const auto span = stallChangeToLeanest(r, l)) {
        const auto* d = &span->change;
        out += fmt::format("\nfrom {} to {}: {:+.1f} ± {:.1f} ns of memory stall per GET{}\n", span->from->threshold,
            span->to->threshold, d->ns, d->uncertaintyNs,
            std::abs(d->ns) <= d->uncertaintyNs ? " (within the uncertainty: no change the model can show)" : "");
    }
    out += "stall: the middle of its range, from only the misses that start a dependent step (overlapped) to "
           "every miss one after another (serialized); ± adds half that range, the latencies' spread and the "
           "cache model's 3%\n";
    return out;
}

std::optional<StallChangeSpan> stallChangeToLeanest(const SimulationResult& r, const LoadLatencies& l) {
    if (r.points.empty())
        return std::nullopt;
    const ThresholdPoint* own = shippedPoint(r);
    const ThresholdPoint* from = own ? own : &r.points.front();
    const ThresholdPoint* to = &r.points[leanestPoint(r.points)];
    if (from == to) {
        from = &r.points.front();
        to = own ? own : to;
    }
    const auto change = from != to ? predictStallChange(*from, *to, l) : std::nullopt;
    if (!change)
        return std::nullopt;
    return StallChangeSpan { from, to, *change };
}

nlohmann::json toJson(const LoadLatencies& l) {
    return { { "level_ns", l.levelNs }, { "level_uncertainty_ns", l.levelUncertaintyNs }, { "memory_ns", l.memoryNs },
        { "memory_uncertainty_ns", l.memoryUncertaintyNs }, { "overlapped_lookups", l.overlappedLookups } };
}

std::optional<LoadLatencies> loadLatenciesFromJson(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("level_ns") || !j.contains("memory_ns"))
        return std::nullopt;
    try {
        LoadLatencies l;
        l.levelNs = j.at("level_ns").get<std::vector<double>>();
        l.levelUncertaintyNs = j.value("level_uncertainty_ns", std::vector<double>(l.levelNs.size(), 0.0));
        l.memoryNs = j.at("memory_ns").get<double>();
        l.memoryUncertaintyNs = j.value("memory_uncertainty_ns", 0.0);
        l.overlappedLookups = std::max<std::uint32_t>(j.value("overlapped_lookups", 1u), 1);
        if (l.levelUncertaintyNs.size() != l.levelNs.size())
            return std::nullopt;
        return l;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

} // namespace layoutlab
