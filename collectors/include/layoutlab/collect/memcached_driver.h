// SPDX-License-Identifier: MIT
#pragma once

// Driving memcached with a trace: its settings (the slab classes they give), the load phase through a
// value framing (Dalli/Rails), and the slab statistics after it.

#include "layoutlab/collect/memcached_client.h"
#include "layoutlab/collect/trace_keys.h"
#include "layoutlab/collect/trace_loader.h"
#include "layoutlab/layout/value_framing.h"
#include "layoutlab/trace/trace_reader.h"

#include <functional>
#include <map>
#include <stop_token>

namespace layoutlab {

// A `stats` field as a number; an error naming it when it is missing or not a number.
Expected<std::uint64_t> memcachedStatsNumber(const std::map<std::string, std::string>& stats, const std::string& name);

struct MemcachedServerInfo {
    std::string version;
    std::string allocator; // the slab model for its settings, e.g. "memcached:min=48,factor=1.25,..."
};
Expected<MemcachedServerInfo> describeMemcached(MemcachedClient& client);

struct MemcachedSlabs {
    std::uint64_t items = 0; // curr_items
    std::map<std::uint64_t, std::uint64_t> usedChunksByChunkBytes; // classes in use only
    std::map<std::uint64_t, std::uint64_t> itemsByChunkBytes; // `stats items` number, per class in use
    std::map<std::uint64_t, std::uint64_t> pagesByChunkBytes; // `stats slabs` total_pages, classes with pages
    std::map<std::uint64_t, std::uint64_t> evictedByChunkBytes; // `stats items` evicted, classes that evicted
    std::uint64_t totalMalloced = 0; // `stats slabs` total_malloced: the pages malloc'ed, in bytes
    std::uint64_t chunkBytes() const; // sum of used chunks times their size
};
Expected<MemcachedSlabs> readSlabs(MemcachedClient& client);

// What loading a trace into memcached did (batches: round trips of `pipeline` commands).
using MemcachedLoadReport = LoadReport;

// Applies the trace's writes in order: set/add/replace with the framed value and the framing's flags,
// append/prepend, integers for incr/decr (as a set), delete, and touch for expire and persist. TTLs above
// memcached's 30-day relative limit are sent as absolute times. `pipeline` commands per round trip. The
// first `keepReads` GETs' key names are kept for the run phase.
Expected<MemcachedLoadReport> loadTraceMemcached(MemcachedClient& client, TraceReader& trace, Framing framing,
    std::size_t pipeline, std::size_t keepReads, const std::function<void(std::uint64_t)>& progress = {},
    std::stop_token stop = {});

} // namespace layoutlab
