// SPDX-License-Identifier: MIT
// The memcached drive: load a trace through a value framing and put memcached's slab classes beside the
// prediction: chunks per class, and slab-chunk bytes per item.

#include "drive_steps.h"

#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace layoutlab::drive {

namespace {

class MemcachedGets final : public GetConnection {
public:
    MemcachedGets(MemcachedClient client, Framing framing)
        : m_client(std::move(client))
        , m_framing(framing) { }
    Status send(std::span<const KeyRequest> requests) override { return m_client.sendRequests(requests, m_framing); }
    Expected<std::uint64_t> receive(std::span<const KeyRequest> requests) override {
        return m_client.receiveRequests(requests);
    }

private:
    MemcachedClient m_client;
    Framing m_framing;
};

} // namespace

std::vector<DriveSlabClass> measuredSlabClasses(const MemcachedSlabs& slabs) {
    // Every class with chunks in use or pages held (a class whose items were all deleted keeps its pages).
    std::map<std::uint64_t, DriveSlabClass> classes;
    for (const auto& [chunk, used] : slabs.usedChunksByChunkBytes)
        classes[chunk].measuredChunks = used;
    for (const auto& [chunk, pages] : slabs.pagesByChunkBytes)
        classes[chunk].measuredPages = pages;
    for (const auto& [chunk, evicted] : slabs.evictedByChunkBytes)
        classes[chunk].measuredEvictions = evicted;
    std::vector<DriveSlabClass> out;
    for (auto& [chunk, c] : classes) {
        c.chunkBytes = chunk;
        c.measuredItems = slabs.itemsByChunkBytes.count(chunk) ? slabs.itemsByChunkBytes.at(chunk) : 0;
        out.push_back(c);
    }
    return out;
}

Status driveMemcached(const DriveRequest& r, DriveTarget& target, DriveReport& report, MeasuredRuns& runs,
    TraceReader& trace, ProgressSink* progress, std::stop_token stop) {
    auto framing = parseFraming(r.framing);
    if (!framing) {
        Error e = framing.error();
        e.field = field::kFraming;
        return e;
    }
    report.engine = "memcached";
    report.framing = r.framing;
    auto client = MemcachedClient::connect(target.endpoint.host, target.endpoint.port);
    if (!client)
        return client.error();
    auto info = describeMemcached(*client);
    if (!info)
        return info.error();
    report.version = info->version;
    auto models = parseLayoutAndAllocator("memcached-1.6:framing=" + r.framing, info->allocator);
    if (!models)
        return models.error();
    auto empty = readSlabs(*client);
    if (!empty)
        return empty.error();
    if (empty->items != 0)
        return dataError(fmt::format("{} holds {} items: layoutlab measures what a trace adds to an empty server "
                                     "(flush_all is not enough: memcached keeps its slab pages; restart it, or let "
                                     "layoutlab start one)",
            report.endpoint, empty->items));
    if (r.budget)
        return driveMemcachedBudget(r, *client, *framing, *models, driveParameters(r, *models, report, target), report,
            runs, trace, progress, stop);
    if (auto ok = runs.begin(
            r.tracePath, r.importOptions, "sim", "drive", driveParameters(r, *models, report, target), r.toolVersion);
        !ok)
        return ok;
    if (progress)
        progress->phase("load");
    auto load = loadTraceMemcached(
        *client, trace, *framing, r.pipeline, kMaxRunKeys, loadProgress(progress, trace.totalRequests()), stop);
    if (!load)
        return load.error();
    report.load = std::move(*load);
    if (auto ok = waitForExpiry(r, progress, stop); !ok)
        return ok;
    auto slabs = readSlabs(*client);
    if (!slabs)
        return slabs.error();
    report.serverKeys = slabs->items;
    report.measuredBytesPerKey
        = slabs->items ? static_cast<double>(slabs->chunkBytes()) / static_cast<double>(slabs->items) : 0;
    report.classes = measuredSlabClasses(*slabs);
    report.allocator.measured = true;
    report.allocator.allocatedBefore = empty->chunkBytes();
    report.allocator.allocatedAfter = slabs->chunkBytes();
    report.allocator.activeBefore = empty->totalMalloced;
    report.allocator.activeAfter = slabs->totalMalloced;
    if (progress)
        progress->phase("run");
    auto run = runPhase(
        r, report.load.readKeys,
        [&]() -> Expected<std::unique_ptr<GetConnection>> {
            auto c = MemcachedClient::connect(target.endpoint.host, target.endpoint.port);
            if (!c)
                return c.error();
            return std::unique_ptr<GetConnection>(new MemcachedGets(std::move(*c), *framing));
        },
        stop);
    if (!run)
        return run.error();
    report.run = *run;
    return finish(r, *models, report, runs, progress, stop);
}

} // namespace layoutlab::drive
