// SPDX-License-Identifier: MIT
#include "layoutlab/sim/limit_sweep.h"

#include "threshold_evaluation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <set>

namespace layoutlab {

namespace {

// quicklist.c: FILL_MAX, the most entries a node's count limit takes; optimization_level's five byte limits.
constexpr std::int64_t kListFillMax = (1 << 15) - 1;
constexpr std::int64_t kListSmallestSizeLevel = -5;

std::optional<std::int64_t> parseSigned(std::string_view text) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
        return std::nullopt;
    return v;
}

std::vector<std::string_view> split(std::string_view text, char by) {
    std::vector<std::string_view> out;
    for (std::size_t at = 0;;) {
        const auto next = text.find(by, at);
        out.push_back(text.substr(at, next == text.npos ? text.npos : next - at));
        if (next == text.npos)
            return out;
        at = next + 1;
    }
}

Expected<std::vector<std::int64_t>> parseValues(std::string_view name, std::string_view text) {
    std::vector<std::int64_t> values;
    const auto bad = [&](std::string_view why) {
        return usageError(fmt::format("'{}={}': {}", name, text, why), field::kLimitSweep);
    };
    if (text.find(':') != text.npos) {
        const auto parts = split(text, ':');
        const auto first = parts.size() == 3 ? parseSigned(parts[0]) : std::nullopt;
        const auto last = parts.size() == 3 ? parseSigned(parts[1]) : std::nullopt;
        const auto step = parts.size() == 3 ? parseSigned(parts[2]) : std::nullopt;
        if (!first || !last || !step || *step <= 0 || *first > *last)
            return bad("a range is FIRST:LAST:STEP, FIRST at most LAST and STEP above 0");
        if ((*last - *first) / *step + 1 > static_cast<std::int64_t>(kMaxLimitValues))
            return bad(fmt::format("more than {} values", kMaxLimitValues));
        for (std::int64_t v = *first; v <= *last; v += *step)
            values.push_back(v);
    } else {
        for (std::string_view part : split(text, ',')) {
            const auto v = parseSigned(part);
            if (!v)
                return bad("the values are integers, a list (64,128) or FIRST:LAST:STEP");
            values.push_back(*v);
        }
        if (values.size() > kMaxLimitValues)
            return bad(fmt::format("more than {} values", kMaxLimitValues));
    }
    std::set<std::int64_t> seen;
    for (std::int64_t v : values) {
        if (auto ok = checkCollectionLimit(name, v); !ok)
            return ok.error();
        if (!seen.insert(v).second)
            return bad(fmt::format("{} is given twice", v));
    }
    return values;
}

} // namespace

std::vector<std::string_view> allCollectionLimitNames() {
    std::vector<std::string_view> out;
    for (const CollectionType type :
        { CollectionType::Hash, CollectionType::Set, CollectionType::SortedSet, CollectionType::List })
        for (std::string_view name : collectionLimitNames(type))
            out.push_back(name);
    return out;
}

std::vector<std::pair<std::string_view, std::int64_t>> changedCollectionLimits(const CollectionLimits& limits) {
    std::vector<std::pair<std::string_view, std::int64_t>> out;
    for (std::string_view name : allCollectionLimitNames())
        if (const auto v = collectionLimit(limits, name); v != collectionLimit({}, name))
            out.emplace_back(name, v);
    return out;
}

Status checkCollectionLimits(const CollectionLimits& limits) {
    for (std::string_view name : allCollectionLimitNames())
        if (auto ok = checkCollectionLimit(name, collectionLimit(limits, name)); !ok)
            return ok;
    return Ok {};
}

Status checkCollectionLimit(std::string_view name, std::int64_t value) {
    CollectionLimits probe;
    if (!setCollectionLimit(probe, name, 0))
        return usageError(
            fmt::format("'{}' is not a collection limit (known: {})", name, fmt::join(allCollectionLimitNames(), ", ")),
            field::kLimitSweep);
    if (name == "list-max-listpack-size") {
        if (value < kListSmallestSizeLevel || value == 0 || value > kListFillMax)
            return usageError(fmt::format("list-max-listpack-size {} is none the engines take: -5 to -1 (a node's "
                                          "bytes, 4 to 64 KiB) or 1 to {} (its entries)",
                                  value, kListFillMax),
                field::kLimitSweep);
        return Ok {};
    }
    if (value < 0)
        return usageError(fmt::format("{} {} is below 0", name, value), field::kLimitSweep);
    return Ok {};
}

Expected<LimitSweep> parseLimitSweep(std::string_view text) {
    const auto equals = text.find('=');
    if (equals == text.npos)
        return usageError(fmt::format("'{}' is not NAME=VALUES (e.g. hash-max-listpack-entries=64:1024:64)", text),
            field::kLimitSweep);
    LimitSweep sweep;
    sweep.name = std::string(text.substr(0, equals));
    if (auto ok = checkCollectionLimit(sweep.name, 1); !ok)
        return ok.error();
    auto values = parseValues(sweep.name, text.substr(equals + 1));
    if (!values)
        return values.error();
    sweep.values = std::move(*values);
    return sweep;
}

std::vector<CollectionLimits> limitVariants(const CollectionLimits& base, const LimitSweep& sweep) {
    std::vector<CollectionLimits> out;
    for (const std::int64_t v : sweep.values) {
        CollectionLimits limits = base;
        setCollectionLimit(limits, sweep.name, v);
        out.push_back(limits);
    }
    return out;
}

LimitSweepResult limitSweepResult(const LimitSweep& sweep, const CollectionLimits& base,
    const ThresholdPoint& stringPoint, const std::vector<std::vector<CollectionUsage>>& usage) {
    LimitSweepResult out;
    out.name = sweep.name;
    out.runValue = collectionLimit(base, sweep.name);
    out.threshold = stringPoint.threshold;
    for (std::size_t i = 0; i < sweep.values.size() && i < usage.size(); ++i) {
        LimitPoint p { sweep.values[i], stringPoint, usage[i] };
        std::vector<ThresholdPoint> one { p.point };
        addCollections(one, p.collections);
        p.point = std::move(one.front());
        out.points.push_back(std::move(p));
    }
    return out;
}

LimitSweepResult limitSweepOfRun(const LimitSweep& sweep, std::int64_t runValue, std::uint32_t threshold,
    const SimulationResult& run, const std::vector<std::vector<CollectionUsage>>& usage) {
    LimitSweepResult out { sweep.name, runValue, threshold, {} };
    const auto own = std::find_if(
        run.points.begin(), run.points.end(), [&](const ThresholdPoint& p) { return p.threshold == threshold; });
    if (own == run.points.end())
        return out;
    // The run's point without its collections: what addCollections added, taken away row for row.
    ThresholdPoint strings = *own;
    for (const CollectionUsage& c : run.collections) {
        strings.keys -= c.keys;
        strings.payloadBytes -= c.payloadBytes;
        strings.requestedBytes -= static_cast<std::uint64_t>(std::llround(c.requestedBytes));
        strings.usableBytes -= static_cast<std::uint64_t>(std::llround(c.usableBytes));
        strings.allocations -= static_cast<std::uint64_t>(std::llround(c.allocations));
    }
    LimitSweepResult swept = limitSweepResult(sweep, CollectionLimits {}, strings, usage);
    out.points = std::move(swept.points);
    return out;
}

} // namespace layoutlab
