// SPDX-License-Identifier: MIT
#include "layoutlab/collect/memcached_driver.h"

#include "layoutlab/collect/trace_keys.h"

#include <algorithm>
#include <fmt/format.h>

namespace layoutlab {

Expected<std::uint64_t> memcachedStatsNumber(const std::map<std::string, std::string>& stats, const std::string& name) {
    const auto it = stats.find(name);
    if (it == stats.end() || it->second.empty() || it->second.find_first_not_of("0123456789") != std::string::npos)
        return dataError(fmt::format("memcached stats have no number '{}'", name));
    return std::stoull(it->second);
}

std::uint64_t MemcachedSlabs::chunkBytes() const {
    std::uint64_t total = 0;
    for (const auto& [bytes, chunks] : usedChunksByChunkBytes)
        total += bytes * chunks;
    return total;
}

Expected<MemcachedServerInfo> describeMemcached(MemcachedClient& client) {
    auto general = client.stats();
    if (!general)
        return general.error();
    auto settings = client.stats("settings");
    if (!settings)
        return settings.error();
    MemcachedServerInfo out;
    out.version = general->count("version") ? general->at("version") : std::string("?");
    // The slab classes follow -n (chunk_size), -f (growth_factor), -I (item_size_max) and slab_chunk_max
    // (slabs.c slabs_init); pages are 1 MiB unless item_size_max is larger.
    auto minChunk = memcachedStatsNumber(*settings, "chunk_size");
    auto itemMax = memcachedStatsNumber(*settings, "item_size_max");
    auto chunkMax = memcachedStatsNumber(*settings, "slab_chunk_max");
    if (!minChunk || !itemMax || !chunkMax)
        return dataError("memcached's `stats settings` lacks chunk_size, item_size_max or slab_chunk_max "
                         "(memcached 1.6 reports all three)");
    const auto factor = settings->find("growth_factor");
    if (factor == settings->end())
        return dataError("memcached's `stats settings` has no growth_factor");
    const std::uint64_t page = std::max<std::uint64_t>(*itemMax, 1024 * 1024);
    out.allocator = fmt::format("memcached:min={},factor={},page={},chunk-max={},item-max={}", *minChunk,
        factor->second, page, *chunkMax, *itemMax);
    return out;
}

Expected<MemcachedSlabs> readSlabs(MemcachedClient& client) {
    auto general = client.stats(); // curr_items
    if (!general)
        return general.error();
    auto slabs = client.stats("slabs");
    if (!slabs)
        return slabs.error();
    MemcachedSlabs out;
    auto items = memcachedStatsNumber(*general, "curr_items");
    if (!items)
        return items.error();
    out.items = *items;
    for (const auto& [name, value] : *slabs) {
        const auto colon = name.find(':');
        if (colon == std::string::npos || name.substr(colon + 1) != "used_chunks")
            continue;
        const std::string id = name.substr(0, colon);
        auto chunk = memcachedStatsNumber(*slabs, id + ":chunk_size");
        auto used = memcachedStatsNumber(*slabs, name);
        auto pages = memcachedStatsNumber(*slabs, id + ":total_pages");
        if (!chunk || !used || !pages)
            return dataError(fmt::format("memcached `stats slabs` has a damaged class {}", id));
        if (*used > 0)
            out.usedChunksByChunkBytes[*chunk] += *used;
        if (*pages > 0)
            out.pagesByChunkBytes[*chunk] += *pages;
    }
    auto malloced = memcachedStatsNumber(*slabs, "total_malloced");
    if (!malloced)
        return malloced.error();
    out.totalMalloced = *malloced;
    // Items per class (items:<id>:number); a class's chunk size comes from `stats slabs`. Items larger
    // than slab_chunk_max are counted in the class of their header chunk.
    auto itemStats = client.stats("items");
    if (!itemStats)
        return itemStats.error();
    // And the items each class's LRU evicted (items:<id>:evicted).
    for (const auto& [name, value] : *itemStats) {
        const std::string field = name.substr(name.rfind(':') + 1);
        if (name.rfind("items:", 0) != 0 || name.size() < 7 || (field != "number" && field != "evicted"))
            continue;
        const std::string id = name.substr(6, name.rfind(':') - 6);
        auto chunk = memcachedStatsNumber(*slabs, id + ":chunk_size");
        auto count = memcachedStatsNumber(*itemStats, name);
        if (!chunk || !count)
            continue; // a class without slabs (never allocated) or a damaged line
        if (*count > 0)
            (field == "number" ? out.itemsByChunkBytes : out.evictedByChunkBytes)[*chunk] += *count;
    }
    return out;
}

Expected<MemcachedLoadReport> loadTraceMemcached(MemcachedClient& client, TraceReader& trace, Framing framing,
    std::size_t pipeline, std::size_t keepReads, const std::function<void(std::uint64_t)>& progress,
    std::stop_token stop) {
    using Verb = MemcachedCommand::Verb;
    auto translate = [framing](const Request& r, std::string key, std::vector<MemcachedCommand>& commands) -> Status {
        MemcachedCommand c;
        c.key = std::move(key);
        c.exptime = memcachedExptime(r.ttlSeconds);
        auto store = [&](Verb verb, std::uint64_t valueBytes) {
            // The framing decides the bytes stored and whether the flags are set (Dalli's serialized
            // values carry flag 1), as the layout model's framing parameter does.
            const auto framed = frameValue(framing, valueBytes);
            c.verb = verb;
            c.flags = framed.nonZeroFlags ? 1 : 0;
            c.value.assign(framed.storedBytes, 'v');
        };
        switch (r.op) {
        case Op::Set:
            store(Verb::Set, r.valueBytes);
            break;
        case Op::Incr: // incr needs a number already there: the result replaces the value, never creates one
        case Op::Decr:
            store(Verb::Replace, r.valueBytes);
            break;
        case Op::Add:
            store(Verb::Add, r.valueBytes);
            break;
        case Op::Replace:
            store(Verb::Replace, r.valueBytes);
            break;
        case Op::Append:
        case Op::Prepend:
            c.verb = r.op == Op::Append ? Verb::Append : Verb::Prepend;
            c.value.assign(r.valueBytes, 'v');
            break;
        case Op::Delete:
            c.verb = Verb::Delete;
            break;
        case Op::Expire:
        case Op::Persist:
            c.verb = Verb::Touch;
            c.exptime = r.op == Op::Persist ? 0 : memcachedExptime(std::max<std::uint32_t>(r.ttlSeconds, 1));
            break;
        case Op::Get:
        case Op::Other: // reads: loadInBatches keeps them for the run phase
            return Ok {};
        case Op::SetRange: // a Redis command: no memcached import produces it
        case Op::Resize: // a Redis snapshot's tables
            return Ok {};
        case Op::Element:
            return usageError("memcached has no collections: this trace's hashes, sets, sorted sets and "
                              "lists can be driven on Valkey or Redis");
        case Op::Rename:
            return usageError("memcached has no RENAME: this trace's renames can be driven on Valkey or Redis");
        }
        commands.push_back(std::move(c));
        return Ok {};
    };
    return loadInBatches<MemcachedCommand>(trace, pipeline, keepReads, progress, stop, translate,
        [&](const std::vector<MemcachedCommand>& commands) { return client.apply(commands, pipeline); });
}

} // namespace layoutlab
