// SPDX-License-Identifier: MIT
#include "layoutlab/collect/memory_latency.h"

#include "layoutlab/alloc/allocator_model.h"
#include "layoutlab/resources.h"
#include "layoutlab/trace/random.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>

namespace layoutlab {

namespace {

constexpr std::uint64_t kLineBytes = kCacheLineBytes;
constexpr std::uint64_t kMinMemoryBuffer = std::uint64_t { 64 } << 20;

// One 64-byte line per node: the next node's address first, the rest padding.
struct alignas(64) Node {
    Node* next;
    char padding[kLineBytes - sizeof(Node*)];
};
static_assert(sizeof(Node) == kLineBytes);

// The nodes linked in one random cycle (Sattolo's algorithm), so that the chase visits every line once
// per lap in an order no prefetcher follows.
void linkRandomCycle(Node* nodes, std::size_t count, Random& random) {
    std::vector<std::uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    for (std::size_t i = count - 1; i > 0; --i)
        std::swap(order[i], order[random.below(i)]);
    for (std::size_t i = 0; i < count; ++i)
        nodes[order[i]].next = &nodes[order[(i + 1) % count]];
}

// ns per load over `loads` dependent loads from `start`.
double chase(Node* start, std::uint64_t loads) {
    Node* p = start;
    const auto begin = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < loads; ++i)
        p = p->next;
    const auto elapsed = std::chrono::steady_clock::now() - begin;
    // The last node reached keeps the loop from being optimised away.
    asm volatile("" : : "r"(p) : "memory");
    return std::chrono::duration<double, std::nano>(elapsed).count() / static_cast<double>(loads);
}

struct NodeBuffer {
    struct Free {
        void operator()(Node* p) const { ::operator delete[](p, std::align_val_t { kLineBytes }); }
    };
    std::unique_ptr<Node[], Free> nodes;
    std::size_t count = 0;
};

Expected<NodeBuffer> allocate(std::uint64_t bytes, const std::string& name) {
    if (auto ok = checkMemory(bytes, "the " + name + " latency buffer"); !ok)
        return ok.error();
    NodeBuffer b;
    b.count = static_cast<std::size_t>(std::max<std::uint64_t>(bytes / kLineBytes, 2));
    b.nodes.reset(static_cast<Node*>(::operator new[](b.count * sizeof(Node), std::align_val_t { kLineBytes })));
    return b;
}

Expected<LatencyPoint> measure(const std::string& name, std::uint64_t bytes, bool fitsCache,
    const LatencyCalibration& c, Random& random, std::stop_token stop) {
    auto buffer = allocate(bytes, name);
    if (!buffer)
        return buffer.error();
    linkRandomCycle(buffer->nodes.get(), buffer->count, random);
    // One lap first, so that a buffer that fits its level is in it. The memory buffer's pages are touched by
    // the linking already, and a lap of it (tens of millions of misses where the last level is large) would
    // take longer than every timed pass together.
    if (fitsCache)
        (void)chase(&buffer->nodes[0], buffer->count);
    std::vector<double> passes;
    for (std::uint32_t i = 0; i < c.passes; ++i) {
        if (stop.stop_requested())
            return cancelledError();
        passes.push_back(chase(&buffer->nodes[0], c.loadsPerPass));
    }
    std::sort(passes.begin(), passes.end());
    LatencyPoint p;
    p.name = name;
    p.bufferBytes = buffer->count * kLineBytes;
    p.nanosecondsPerLoad = passes[passes.size() / 2];
    p.uncertainty = (passes.back() - passes.front()) / 2;
    return p;
}

std::string levelName(std::size_t level, std::size_t levels) {
    return level + 1 == levels ? std::string("LLC") : fmt::format("L{}", level + 1);
}

} // namespace

const LatencyPoint* MemoryLatency::find(std::string_view name) const {
    for (const auto& p : points)
        if (p.name == name)
            return &p;
    return nullptr;
}

Expected<MemoryLatency> measureMemoryLatency(const LatencyCalibration& c, std::stop_token stop) {
    if (c.geometry.levels.empty() || c.passes == 0 || c.loadsPerPass == 0)
        return usageError("the latency calibration needs a cache geometry, passes and loads");
    MemoryLatency out;
    out.geometry = c.geometry.describe();
    out.passes = c.passes;
    Random random(0x1a7e5c);
    const auto& levels = c.geometry.levels;
    for (std::size_t i = 0; i < levels.size(); ++i) {
        auto p = measure(levelName(i, levels.size()), levels[i].sizeBytes / 2, true, c, random, stop);
        if (!p)
            return p.error();
        out.points.push_back(*p);
    }
    const std::uint64_t memoryBytes = std::max(kMinMemoryBuffer, levels.back().sizeBytes * c.memoryMultiple);
    auto memory = measure("memory", memoryBytes, false, c, random, stop);
    if (!memory)
        return memory.error();
    out.points.push_back(*memory);
    return out;
}

nlohmann::json toJson(const MemoryLatency& latency) {
    auto points = nlohmann::json::array();
    for (const auto& p : latency.points)
        points.push_back({ { "name", p.name }, { "buffer_bytes", p.bufferBytes },
            { "ns_per_load", p.nanosecondsPerLoad }, { "uncertainty_ns", p.uncertainty } });
    return { { "cache_geometry", latency.geometry }, { "passes", latency.passes }, { "points", points } };
}

std::string renderLatencyTable(const MemoryLatency& latency) {
    std::string out = fmt::format("load latency by pointer chase (cache geometry {}; median of {} passes, "
                                  "± half their spread)\n\n{:<8} {:>12} {:>12} {:>10}\n",
        latency.geometry, latency.passes, "level", "buffer", "ns/load", "±");
    for (const auto& p : latency.points) {
        const double mib = static_cast<double>(p.bufferBytes) / (1 << 20);
        out += fmt::format("{:<8} {:>12} {:>12.2f} {:>10.2f}\n", p.name,
            mib >= 1 ? fmt::format("{:.0f} MiB", mib) : fmt::format("{} KiB", p.bufferBytes >> 10),
            p.nanosecondsPerLoad, p.uncertainty);
    }
    return out;
}

Expected<LoadLatencies> measureLoadLatencies(const CacheGeometry& geometry, std::stop_token stop) {
    LatencyCalibration calibration;
    calibration.geometry = geometry;
    auto measured = measureMemoryLatency(calibration, stop);
    if (!measured)
        return measured.error();
    LoadLatencies l;
    for (std::size_t i = 0; i + 1 < measured->points.size(); ++i) {
        l.levelNs.push_back(measured->points[i].nanosecondsPerLoad);
        l.levelUncertaintyNs.push_back(measured->points[i].uncertainty);
    }
    l.memoryNs = measured->points.back().nanosecondsPerLoad;
    l.memoryUncertaintyNs = measured->points.back().uncertainty;
    return l;
}

Expected<LoadLatencies> measureAndKeepLoadLatencies(SimulationJob& job, std::stop_token stop) {
    if (!job.config.cache)
        return usageError("the memory-stall prediction needs the cache model (--cache)");
    auto measured = measureLoadLatencies(*job.config.cache, stop);
    if (!measured)
        return measured.error();
    LoadLatencies& l = *measured;
    l.overlappedLookups = job.overlappedLookups;
    auto extra = nlohmann::json::parse(job.extraParametersJson, nullptr, false);
    if (!extra.is_object())
        extra = nlohmann::json::object();
    extra["load_latencies"] = toJson(l);
    job.extraParametersJson = extra.dump();
    return l;
}

} // namespace layoutlab
