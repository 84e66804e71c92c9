// SPDX-License-Identifier: MIT
#pragma once

// Driving a Valkey or Redis server with a trace: what the server is (version, allocator and the size
// classes of its jemalloc build), its memory before and after, and the load phase, which applies the
// trace's writes pipelined.

#include "layoutlab/alloc/jemalloc_arena_model.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/collect/trace_keys.h"
#include "layoutlab/collect/trace_loader.h"
#include "layoutlab/import/captured_commands.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/trace/trace_reader.h"

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace layoutlab {

struct RespServerInfo {
    std::string engine; // "valkey" or "redis"
    std::string version; // valkey_version, else redis_version
    std::string memAllocator; // INFO memory mem_allocator, e.g. "jemalloc-5.3.0", "libc"
    std::vector<std::uint64_t> binSizes; // MEMORY MALLOC-STATS bins (jemalloc builds)
    std::optional<unsigned> jemallocQuantum; // from the bins: 8 when there is a 24-byte bin, else 16
    std::string layout; // the layout preset for this engine and version, e.g. "redis-7.0", "valkey-8.1"; empty
                        // when the version cannot decide it
    std::string allocator; // the allocator model matching the build, e.g. "jemalloc:quantum=16,page=4096"
};

// The bin sizes of the first `bins:` table of jemalloc's malloc_stats_print output.
std::vector<std::uint64_t> parseJemallocBins(const std::string& mallocStats);
// The bins of that table as a server holds them: each bin's region size, curregs and curslabs (bins
// without slabs left out).
std::vector<JemallocArenaModel::StartBin> parseJemallocStartBins(const std::string& mallocStats);

// The layout preset for an engine and version ("redis", "7.0.15" -> "redis-7.0"); empty when the
// version cannot decide it (a development build, an unknown release).
std::string layoutForEngine(const std::string& engine, const std::string& version);

Expected<RespServerInfo> describeRespServer(RespClient& client);

// Empties a jemalloc server's thread cache before it is measured, so that its bins say what it holds
// (MEMORY MALLOC-STATS curregs counts cached regions as held): 600 SETs and DELs of a 64 KiB value on a
// scratch key, each allocation and free past jemalloc's opt_tcache_gc_incr_bytes (64 KiB), so that the
// thread cache's GC (tcache.c tcache_event) visits every bin many times, each visit giving back 3/4 of
// what the bin has not used since the last.
Status drainThreadCache(RespClient& client);
// The server's bins now (MEMORY MALLOC-STATS), for the slab model to start from.
Expected<std::vector<JemallocArenaModel::StartBin>> readStartBins(RespClient& client);

// Runs once each command the load phase may send (SET with its options, APPEND, EXPIRE, PERSIST, DEL) on
// a scratch key that is gone afterwards: a server allocates some things the first time a command runs
// (its latency histogram when latency-tracking is on, some 20 KB each), and they belong in "before".
Status warmUpCommands(RespClient& client);

// Waits until the server is settled, the state in which its memory is measured: no table rehashing
// (MEMORY STATS db.dict.rehashing.count where the server has it, else the "rehashing target" of DEBUG
// HTSTATS) and used_memory, allocator_allocated and allocator_active unchanged over `stablePolls` polls
// `pollInterval` apart. Gives up after
// `limit` and says so in the report rather than failing: the caller still measures.
// INFO memory's figures: used_memory, and what jemalloc holds (allocator_allocated and allocator_active,
// jemalloc's stats.allocated and stats.active; absent on a libc build).
struct MemoryFigures {
    std::uint64_t usedMemory = 0;
    std::optional<std::uint64_t> allocatorAllocated;
    std::optional<std::uint64_t> allocatorActive;
    // mem_clients_normal: the clients' query and reply buffers, which grow and shrink with the commands a
    // connection sends (networking.c, clientsCron's resizes), part of used_memory but no key's.
    std::optional<std::uint64_t> clientsNormal;
    bool operator==(const MemoryFigures&) const = default;
};
Expected<MemoryFigures> memoryFigures(RespClient& client);

struct SettleReport {
    bool settled = false;
    bool rehashKnown = false; // the server told whether it rehashes (else only memory was watched)
    bool stillRehashing = false; // at give-up
    double seconds = 0;
    std::uint64_t usedMemory = 0; // the last used_memory read
    MemoryFigures memory; // the last figures read (used_memory and the allocator's), all steady when settled
    std::string describe() const;
};
struct SettleOptions {
    std::chrono::milliseconds pollInterval { 100 };
    std::uint32_t stablePolls = 3;
    std::chrono::milliseconds limit { 30000 };
    std::stop_token stop; // a stop request ends the wait with ErrorCode::Cancelled
};
Expected<SettleReport> waitUntilSettled(RespClient& client, const SettleOptions& options = {});
Expected<std::uint64_t> usedMemory(RespClient& client);
// One figure of MEMORY STATS (clients.normal, overhead.hashtable.main, ...); nothing when the server has none.
Expected<std::optional<std::uint64_t>> memoryStatsField(RespClient& client, std::string_view name);
Expected<std::uint64_t> keyCount(RespClient& client);
// Sets each of `limits` that differs from config.c's default with CONFIG SET (a limit the server does not have
// fails with its reply), then reads every limit back with CONFIG GET: what the server holds, config.c's default
// for a limit it does not have (Redis 7.0's set-max-listpack-*).
Expected<CollectionLimits> applyCollectionLimits(RespClient& client, const CollectionLimits& limits);

// The keys of every database the server holds (INFO keyspace): a snapshot may fill more than db 0.
Expected<std::uint64_t> keyCountAllDatabases(RespClient& client);

// Loads an RDB file into a server layoutlab started, as the server loads its own snapshot: the file is
// copied (decompressed, when zstd) into the server's directory `serverDir` as its dbfilename (dump.rdb, the
// default engineArgv keeps), then DEBUG RELOAD NOSAVE empties the server and runs rdbLoad on it (debug.c).
// The copy is read in bounded pieces, its disk space checked as it grows; a file the server cannot load
// (a newer RDB version, a module type) fails with the server's reply.
Expected<LoadReport> loadSnapshotFile(
    RespClient& client, const std::string& rdbPath, const std::string& serverDir, std::stop_token stop = {});

// Sends a MONITOR capture's commands as they were captured (forEachCapturedCommand), each in its database (a
// SELECT where it changes), `pipeline` per round trip; the server's error replies are counted (LoadReport::
// refusedReplies: a capture holds the commands the server refused too), the commands left out counted in
// `skips`.
Expected<LoadReport> loadCapturedCommands(RespClient& client, const std::string& capturePath, std::size_t pipeline,
    CapturedCommandSkips& skips, std::stop_token stop = {});

// Applies the trace's writes in order: SET (NX for add, XX for replace, EX for a TTL, KEEPTTL where the
// trace keeps it), APPEND, integers for INCR/DECR, DEL, EXPIRE, PERSIST, and the collection commands of its
// element requests (ElementCommandWriter: HSET, SADD, ZADD, LPUSH... with texts of the trace's lengths); GETs
// are left for the run phase. Batches of `pipeline` commands; an error reply (OOM, a wrong type) stops the load with
// what the server said and how far it got. The first `keepReads` GETs' key names are kept for the run phase. `progress`
// gets the requests read so far; `limits` are the server's (a SINTERSTORE's result is sent by them).
Expected<LoadReport> loadTrace(RespClient& client, TraceReader& trace, std::size_t pipeline, std::size_t keepReads,
    const CollectionLimits& limits = {}, const std::function<void(std::uint64_t)>& progress = {},
    std::stop_token stop = {});

} // namespace layoutlab
