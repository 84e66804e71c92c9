// SPDX-License-Identifier: MIT
#include "layoutlab/sim/point_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace layoutlab {

namespace {

using Value = std::optional<double>;

double perKey(std::uint64_t total, const ThresholdPoint& p) {
    return p.keys ? static_cast<double>(total) / static_cast<double>(p.keys) : 0.0;
}

// ThresholdPoint keeps the misses as one vector from L1 outward: L2 exists with three levels only, and
// the last level is the vector's last element.
Value missAt(const ThresholdPoint& p, int level) {
    const auto& m = p.missesPerGet;
    if (m.size() != 2 && m.size() != 3)
        return std::nullopt;
    if (level == 0)
        return m.front();
    if (level == 2)
        return m.back();
    return m.size() == 3 ? Value(m[1]) : std::nullopt;
}

// A slab-model figure of the point, and one stored figure read back (the point has the slab model's
// figures from then on).
template <std::uint64_t ArenaUsage::*Field> Value arenaGet(const ThresholdPoint& p) {
    return p.arena ? Value(static_cast<double>((*p.arena).*Field)) : std::nullopt;
}
template <std::uint64_t ArenaUsage::*Field> void arenaSet(ThresholdPoint& p, double v) {
    if (!p.arena)
        p.arena.emplace();
    (*p.arena).*Field = static_cast<std::uint64_t>(v);
}

// A memory budget's figure of the point, and one stored figure read back.
template <std::uint64_t BudgetUsage::*Field> Value budgetGet(const ThresholdPoint& p) {
    return p.budget ? Value(static_cast<double>((*p.budget).*Field)) : std::nullopt;
}
template <std::uint64_t BudgetUsage::*Field> void budgetSet(ThresholdPoint& p, double v) {
    if (!p.budget)
        p.budget.emplace();
    (*p.budget).*Field = static_cast<std::uint64_t>(v);
}

constexpr unsigned kOut = kMetricOutput;
constexpr unsigned kDb = kMetricStored;
constexpr unsigned kGui = kMetricShown;

// This array's order is the --json/--csv order; the human table's columns are ordered by tableColumn.
const PointMetric kTable[] = {
    { "keys", "Keys", "count", 0, true, kOut | kDb,
        "live keys at the end of the trace (keys the engine would refuse are in unstorable_keys)", "keys", 10, 1,
        MetricStyle::Count, [](const ThresholdPoint& p) -> Value { return double(p.keys); },
        [](ThresholdPoint& p, double v) { p.keys = static_cast<std::uint64_t>(v); } },
    { "payload_bytes", "Payload", "bytes", 0, true, kOut | kDb, "sum of key and value lengths", "", 0, 0,
        MetricStyle::Count, [](const ThresholdPoint& p) -> Value { return double(p.payloadBytes); },
        [](ThresholdPoint& p, double v) { p.payloadBytes = static_cast<std::uint64_t>(v); } },
    { "requested_bytes", "Requested", "bytes", 0, true, kOut | kDb,
        "bytes the store asks the allocator for, index tables included", "", 0, 0, MetricStyle::Count,
        [](const ThresholdPoint& p) -> Value { return double(p.requestedBytes); },
        [](ThresholdPoint& p, double v) { p.requestedBytes = static_cast<std::uint64_t>(v); } },
    { "usable_bytes", "Usable", "bytes", 0, true, kOut | kDb,
        "bytes the allocator hands out (its size classes); this is what Valkey and Redis count in used_memory", "total",
        9, 10, MetricStyle::Bytes, [](const ThresholdPoint& p) -> Value { return double(p.usableBytes); },
        [](ThresholdPoint& p, double v) { p.usableBytes = static_cast<std::uint64_t>(v); } },
    { "internal_fragmentation_bytes", "Internal fragmentation", "bytes", 0, true, kOut | kDb, "usable - requested", "",
        0, 0, MetricStyle::Count, [](const ThresholdPoint& p) -> Value { return double(p.internalFragmentationBytes); },
        [](ThresholdPoint& p, double v) { p.internalFragmentationBytes = static_cast<std::uint64_t>(v); } },
    { "index_bytes", "Index tables", "bytes", 0, true, kOut | kDb,
        "usable bytes of the hash tables (Valkey buckets and child buckets, Redis bucket arrays, memcached's "
        "table)",
        "", 0, 0, MetricStyle::Count, [](const ThresholdPoint& p) -> Value { return double(p.indexBytes); },
        [](ThresholdPoint& p, double v) { p.indexBytes = static_cast<std::uint64_t>(v); } },
    { "usable_bytes_per_key", "Bytes per key", "bytes/key", 2, false, kOut | kDb | kGui, "usable / keys", "bytes/key",
        10, 2, MetricStyle::Fixed, [](const ThresholdPoint& p) -> Value { return p.usableBytesPerKey; },
        [](ThresholdPoint& p, double v) { p.usableBytesPerKey = v; } },
    { "overhead_bytes_per_key", "Overhead per key", "bytes/key", 2, false, kOut | kDb | kGui,
        "(usable - payload) / keys", "overhd/key", 10, 3, MetricStyle::Fixed,
        [](const ThresholdPoint& p) -> Value { return p.overheadBytesPerKey; },
        [](ThresholdPoint& p, double v) { p.overheadBytesPerKey = v; } },
    { "internal_fragmentation_bytes_per_key", "Internal fragmentation per key", "bytes/key", 2, false, kGui,
        "internal_fragmentation_bytes / keys: what the allocator's size classes round away", "waste/key", 10, 4,
        MetricStyle::Fixed, [](const ThresholdPoint& p) -> Value { return perKey(p.internalFragmentationBytes, p); },
        nullptr },
    { "allocations_per_key", "Allocations per key", "allocations/key", 3, false, kOut | kDb | kGui,
        "allocations / keys, index allocations included", "allocs/k", 9, 5, MetricStyle::Fixed,
        [](const ThresholdPoint& p) -> Value { return p.allocationsPerKey; },
        [](ThresholdPoint& p, double v) { p.allocationsPerKey = v; } },
    { "pointer_bytes_per_key", "Pointer bytes per key", "bytes/key", 2, false, kOut | kDb,
        "pointer fields of the key's structures and its index slot(s)", "ptr B/k", 8, 6, MetricStyle::Fixed,
        [](const ThresholdPoint& p) -> Value { return p.pointerBytesPerKey; },
        [](ThresholdPoint& p, double v) { p.pointerBytesPerKey = v; } },
    { "embedded_fraction", "Embedded keys", "fraction", 1, false, kOut | kDb | kGui,
        "share of keys whose value is inside the key's main allocation", "embedded", 8, 7, MetricStyle::Percent,
        [](const ThresholdPoint& p) -> Value { return p.embeddedFraction; },
        [](ThresholdPoint& p, double v) { p.embeddedFraction = v; } },
    { "lines_touched_per_get", "Lines touched per GET", "lines/GET", 3, false, kOut | kDb | kGui,
        "expected distinct 64-byte cache lines a GET hit reads: the index line(s) plus the bytes it reads of each "
        "allocation, averaged over where a region of that class sits in its slab",
        "lines/GET", 9, 8, MetricStyle::Fixed, [](const ThresholdPoint& p) -> Value { return p.linesTouchedPerGet; },
        [](ThresholdPoint& p, double v) { p.linesTouchedPerGet = v; } },
    { "dependent_loads_per_get", "Dependent loads per GET", "loads/GET", 3, false, kOut | kDb | kGui,
        "loads whose address was read from memory by an earlier load (pointer chases)", "deps/GET", 8, 9,
        MetricStyle::Fixed, [](const ThresholdPoint& p) -> Value { return p.dependentLoadsPerGet; },
        [](ThresholdPoint& p, double v) { p.dependentLoadsPerGet = v; } },
    { "unstorable_keys", "Unstorable keys", "count", 0, true, kOut | kDb,
        "keys the engine would refuse (memcached: an item larger than -I)", "", 0, 0, MetricStyle::Count,
        [](const ThresholdPoint& p) -> Value { return double(p.unstorableKeys); },
        [](ThresholdPoint& p, double v) { p.unstorableKeys = static_cast<std::uint64_t>(v); } },
    { "allocations", "Allocations", "count", 0, true, kDb, "allocations, index allocations included", "", 0, 0,
        MetricStyle::Count, [](const ThresholdPoint& p) -> Value { return double(p.allocations); },
        [](ThresholdPoint& p, double v) { p.allocations = static_cast<std::uint64_t>(v); } },
    { "pointer_bytes", "Pointer bytes", "bytes", 0, true, kDb,
        "pointer fields of every key's structures and index slots", "", 0, 0, MetricStyle::Count,
        [](const ThresholdPoint& p) -> Value { return double(p.pointerBytes); },
        [](ThresholdPoint& p, double v) { p.pointerBytes = static_cast<std::uint64_t>(v); } },
    { "embedded_keys", "Embedded keys", "count", 0, true, kDb, "keys whose value is inside the key's main allocation",
        "", 0, 0, MetricStyle::Count, [](const ThresholdPoint& p) -> Value { return double(p.embeddedKeys); },
        [](ThresholdPoint& p, double v) { p.embeddedKeys = static_cast<std::uint64_t>(v); } },
    { "l1_misses_per_get", "L1 misses per GET", "misses/GET", 3, false, kOut | kDb | kGui,
        "cache-model L1 misses per sampled GET hit (with the cache model)", "L1 miss", 8, 11, MetricStyle::Fixed,
        [](const ThresholdPoint& p) { return missAt(p, 0); }, nullptr, 0 },
    { "l2_misses_per_get", "L2 misses per GET", "misses/GET", 3, false, kOut | kDb | kGui,
        "cache-model L2 misses per sampled GET hit (with a three-level cache model)", "", 0, 0, MetricStyle::Fixed,
        [](const ThresholdPoint& p) { return missAt(p, 1); }, nullptr, 1 },
    { "llc_misses_per_get", "LLC misses per GET", "misses/GET", 3, false, kOut | kDb | kGui,
        "cache-model last-level misses per sampled GET hit (with the cache model)", "LLC miss", 8, 12,
        MetricStyle::Fixed, [](const ThresholdPoint& p) { return missAt(p, 2); }, nullptr, 2 },
    // The slab model's (sim --slabs): what jemalloc's stats (memcached's `stats slabs`) would say.
    { "allocated_bytes", "Allocated", "bytes", 0, true, kOut | kDb,
        "jemalloc stats.allocated (INFO allocator_allocated) at the end of the trace: usable bytes handed out, "
        "regions in the thread cache included; memcached: its used chunks' bytes (with the slab model)",
        "", 0, 0, MetricStyle::Count, &arenaGet<&ArenaUsage::allocatedBytes>, &arenaSet<&ArenaUsage::allocatedBytes>,
        -1, true },
    { "active_bytes", "Active", "bytes", 0, true, kOut | kDb,
        "jemalloc stats.active (INFO allocator_active) at the end of the trace: pages of slabs holding a live "
        "region and of large extents; memcached: total_malloced, its slab pages (with the slab model)",
        "active", 9, 13, MetricStyle::Bytes, &arenaGet<&ArenaUsage::activeBytes>, &arenaSet<&ArenaUsage::activeBytes>,
        -1, true },
    { "frag_ratio", "Active / allocated", "ratio", 3, false, kOut | kDb | kGui,
        "active_bytes / allocated_bytes: 1 when every held page is full of live regions (with the slab model)", "frag",
        6, 15, MetricStyle::Fixed,
        [](const ThresholdPoint& p) -> Value { return p.arena ? Value(p.arena->fragRatio()) : std::nullopt; }, nullptr,
        -1, true },
    { "active_bytes_per_key", "Active bytes per key", "bytes/key", 2, false, kOut | kDb | kGui,
        "active_bytes / keys: the pages the allocator holds, per live key (with the slab model)", "active/key", 10, 14,
        MetricStyle::Fixed,
        [](const ThresholdPoint& p) -> Value {
            return p.arena ? Value(perKey(p.arena->activeBytes, p)) : std::nullopt;
        },
        nullptr, -1, true },
    { "peak_allocated_bytes", "Peak allocated", "bytes", 0, true, kOut | kDb,
        "the most allocated_bytes reached during the trace (with the slab model)", "", 0, 0, MetricStyle::Count,
        &arenaGet<&ArenaUsage::peakAllocatedBytes>, &arenaSet<&ArenaUsage::peakAllocatedBytes>, -1, true },
    { "peak_active_bytes", "Peak active", "bytes", 0, true, kOut | kDb,
        "the most active_bytes reached during the trace (with the slab model)", "", 0, 0, MetricStyle::Count,
        &arenaGet<&ArenaUsage::peakActiveBytes>, &arenaSet<&ArenaUsage::peakActiveBytes>, -1, true },
    // A memory budget's (sim --maxmemory): the cache the server would be at that threshold.
    { "maxmemory_bytes", "maxmemory", "bytes", 0, true, kOut | kDb, "the memory budget (with --maxmemory)", "maxmemory",
        10, 16, MetricStyle::Bytes, &budgetGet<&BudgetUsage::maxmemoryBytes>, &budgetSet<&BudgetUsage::maxmemoryBytes>,
        -1, false, true },
    { "hit_ratio", "Hit ratio", "fraction", 2, false, kOut | kDb | kGui,
        "GET hits / GETs over the trace under the memory budget (with --maxmemory)", "hit ratio", 9, 17,
        MetricStyle::Percent,
        [](const ThresholdPoint& p) -> Value { return p.budget ? Value(p.budget->hitRatio()) : std::nullopt; }, nullptr,
        -1, false, true },
    { "get_hits", "GET hits", "count", 0, true, kOut | kDb, "GETs that found their key (with --maxmemory)", "", 0, 0,
        MetricStyle::Count, &budgetGet<&BudgetUsage::getHits>, &budgetSet<&BudgetUsage::getHits>, -1, false, true },
    { "get_misses", "GET misses", "count", 0, true, kOut | kDb, "GETs that did not (with --maxmemory)", "", 0, 0,
        MetricStyle::Count, &budgetGet<&BudgetUsage::getMisses>, &budgetSet<&BudgetUsage::getMisses>, -1, false, true },
    { "fills", "Fills", "count", 0, true, kOut | kDb, "SETs sent after GET misses (with --fill-on-miss)", "", 0, 0,
        MetricStyle::Count, &budgetGet<&BudgetUsage::fills>, &budgetSet<&BudgetUsage::fills>, -1, false, true },
    { "evicted_keys", "Evicted keys", "count", 0, true, kOut | kDb | kGui,
        "keys the server evicted to stay within maxmemory (INFO evicted_keys; with --maxmemory)", "evicted", 10, 18,
        MetricStyle::Count, &budgetGet<&BudgetUsage::evictedKeys>, &budgetSet<&BudgetUsage::evictedKeys>, -1, false,
        true },
    { "refused_writes", "Refused writes", "count", 0, true, kOut | kDb,
        "write commands answered OOM: noeviction, or nothing left to evict (with --maxmemory)", "", 0, 0,
        MetricStyle::Count, &budgetGet<&BudgetUsage::refusedWrites>, &budgetSet<&BudgetUsage::refusedWrites>, -1, false,
        true },
    { "used_memory_bytes", "used_memory", "bytes", 0, true, kOut | kDb,
        "used_memory at the end of the trace, the server's own memory before the trace included (with --maxmemory)", "",
        0, 0, MetricStyle::Count, &budgetGet<&BudgetUsage::usedBytes>, &budgetSet<&BudgetUsage::usedBytes>, -1, false,
        true },
};

bool arenaCarries(const PointMetric& m, std::optional<bool> withArena) {
    return !withArena || !m.fromArena || *withArena;
}
bool budgetCarries(const PointMetric& m, std::optional<bool> withBudget) {
    return !withBudget || !m.fromBudget || *withBudget;
}

bool levelCarries(int missLevel, std::size_t levels) {
    if (missLevel < 0)
        return true;
    if (levels != 2 && levels != 3)
        return false;
    return missLevel != 1 || levels == 3;
}

} // namespace

std::string bytesText(double bytes, int decimalsBelowTen) {
    const char* const units[] { "B", "KiB", "MiB", "GiB", "TiB" };
    int unit = 0;
    double value = std::abs(bytes);
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    return fmt::format("{}{:.{}f} {}", bytes < 0 ? "-" : "", value,
        unit == 0        ? 0
            : value < 10 ? decimalsBelowTen
                         : 1,
        units[unit]);
}

std::span<const PointMetric> pointMetricTable() {
    return kTable;
}

std::vector<const PointMetric*> metricsWith(unsigned use, std::optional<std::size_t> cacheLevels,
    std::optional<bool> withArena, std::optional<bool> withBudget) {
    std::vector<const PointMetric*> out;
    for (const auto& m : kTable)
        if ((m.uses & use) == use && (!cacheLevels || levelCarries(m.missLevel, *cacheLevels))
            && arenaCarries(m, withArena) && budgetCarries(m, withBudget))
            out.push_back(&m);
    return out;
}

std::vector<const PointMetric*> metricsOf(unsigned use, const ThresholdPoint& point) {
    return metricsWith(use, point.missesPerGet.size(), point.arena.has_value(), point.budget.has_value());
}

std::vector<const PointMetric*> tableColumns(std::size_t cacheLevels, bool withArena, bool withBudget) {
    std::vector<const PointMetric*> out;
    for (const auto& m : kTable)
        if (m.tableColumn > 0 && levelCarries(m.missLevel, cacheLevels) && arenaCarries(m, withArena)
            && budgetCarries(m, withBudget))
            out.push_back(&m);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->tableColumn < b->tableColumn; });
    return out;
}

const PointMetric* findPointMetric(std::string_view name) {
    for (const auto& m : kTable)
        if (m.name == name)
            return &m;
    return nullptr;
}

void setMissesFromLevels(
    ThresholdPoint& point, std::optional<double> l1, std::optional<double> l2, std::optional<double> llc) {
    point.missesPerGet.clear();
    if (!l1 || !llc)
        return;
    point.missesPerGet.push_back(*l1);
    if (l2)
        point.missesPerGet.push_back(*l2);
    point.missesPerGet.push_back(*llc);
}

std::vector<std::pair<std::string, double>> pointMetrics(const ThresholdPoint& point) {
    std::vector<std::pair<std::string, double>> out;
    for (const auto* m : metricsWith(kMetricOutput, point.missesPerGet.size()))
        if (const auto v = m->get(point))
            out.emplace_back(std::string(m->name), *v);
    return out;
}

std::string formatForTable(const PointMetric& metric, double value) {
    const int w = metric.tableWidth;
    switch (metric.style) {
    case MetricStyle::Count:
        return fmt::format("{:>{}}", static_cast<std::uint64_t>(value), w);
    case MetricStyle::Fixed:
        return fmt::format("{:>{}.{}f}", value, w, metric.decimals);
    case MetricStyle::Percent:
        return fmt::format("{:>{}.{}f}%", 100.0 * value, w, metric.decimals);
    case MetricStyle::Bytes:
        return fmt::format("{:>{}}", bytesText(value), w);
    }
    return {};
}

std::string metricsMarkdown() {
    std::string out = "| JSON / CSV name | table column | unit | meaning |\n|---|---|---|---|\n";
    for (const auto& m : kTable) {
        if (m.uses & kMetricOutput)
            out += fmt::format("| `{}` | {} | {} | {} |\n", m.name, m.tableHeader, m.unit, m.description);
        else if (m.tableColumn > 0) // a column of the human table only
            out += fmt::format("| | {} | {} | {} |\n", m.tableHeader, m.unit, m.description);
    }
    return out;
}

} // namespace layoutlab
