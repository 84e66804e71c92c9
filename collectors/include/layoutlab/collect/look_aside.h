// SPDX-License-Identifier: MIT
#pragma once

// A trace sent to a Valkey, Redis or memcached server as a look-aside cache's client sends it: GETs, and for each GET
// that misses a SET of the key; the trace's own SETs and DELs as they are. Batches of `batch` requests are
// pipelined, then the batch's misses are filled, pipelined too: the order the simulator's look-aside
// filling replays (SimulationConfig::fillOnMiss = batch). The wall clock the server read is recorded,
// for the prediction, which replays the trace on it (trace/restamped_trace.h): TTLs, LRU and LFU clocks.

#include "layoutlab/collect/memcached_client.h"
#include "layoutlab/collect/resp_client.h"
#include "layoutlab/trace/restamped_trace.h"
#include "layoutlab/trace/trace_reader.h"

#include <chrono>
#include <functional>
#include <stop_token>
#include <vector>

namespace layoutlab {

struct LookAsideReport {
    std::uint64_t requests = 0; // the trace's
    std::uint64_t gets = 0;
    std::uint64_t hits = 0; // GETs answered with a value (as the client saw them)
    std::uint64_t sets = 0; // the trace's own SETs
    std::uint64_t deletes = 0;
    std::uint64_t fills = 0; // SETs after misses
    std::uint64_t unfillableMisses = 0; // misses of keys the trace never gave a size
    std::uint64_t refusedWrites = 0; // SETs answered OOM
    double seconds = 0;
    // The server's clock: each batch sent at its point's millisecond of it (Unix time, each second begun at
    // driveLookAside's `secondPhase`).
    std::vector<ClockPoint> clock;
    // The server's second the first request was sent in.
    std::uint64_t clockStartSecond() const { return clock.empty() ? 0 : clock.front().timeMs / 1000; }
};

// The connection a look-aside drive sends on: a batch of requests pipelined, then what each one got.
class LookAsideConnection {
public:
    virtual ~LookAsideConnection() = default;
    virtual Status send(std::span<const KeyRequest> requests) = 0;
    virtual Expected<std::vector<RequestOutcome>> receive(std::span<const KeyRequest> requests) = 0;
};

// A Valkey or Redis connection.
class RespConnection final : public LookAsideConnection {
public:
    explicit RespConnection(RespClient& client)
        : m_client(client) { }
    Status send(std::span<const KeyRequest> requests) override { return m_client.sendRequests(requests); }
    Expected<std::vector<RequestOutcome>> receive(std::span<const KeyRequest> requests) override {
        return m_client.receiveOutcomes(requests);
    }

private:
    RespClient& m_client;
};

// A memcached connection, every value framed as `framing` frames it.
class MemcachedConnection final : public LookAsideConnection {
public:
    MemcachedConnection(MemcachedClient& client, Framing framing)
        : m_client(client)
        , m_framing(framing) { }
    Status send(std::span<const KeyRequest> requests) override { return m_client.sendRequests(requests, m_framing); }
    Expected<std::vector<RequestOutcome>> receive(std::span<const KeyRequest> requests) override {
        return m_client.receiveOutcomes(requests);
    }

private:
    MemcachedClient& m_client;
    Framing m_framing;
};

// Sends the trace (GET, string SETs with or without a TTL, DELETE only: anything else is refused with the
// request's number). A TTL runs on the server's clock, which the drive passes faster than the trace's.
// `progress` gets the requests sent so far. `secondPhase`: where in each wall-clock second the server's own
// second begins (LookAsideReport's seconds are the server's): zero for Valkey and Redis, which read the
// wall clock; memcached's, from memcachedSecondPhase.
Expected<LookAsideReport> driveLookAside(LookAsideConnection& connection, TraceReader& trace, std::size_t batch,
    const std::function<void(std::uint64_t)>& progress = {}, std::stop_token stop = {},
    std::chrono::nanoseconds secondPhase = std::chrono::nanoseconds::zero());

// memcached counts its seconds (current_time) on a timer of its own: memcached.c clock_handler runs once a
// second from the server's start and sets current_time then, so its seconds begin part-way through the wall
// clock's. TTLs expire (exptime <= current_time) and the LRU ages run on those seconds. Found by reading
// `stats` uptime until it changes (within a few milliseconds); fails when it does not within 2.5 seconds.
struct MemcachedClock {
    std::chrono::nanoseconds phase { 0 };
    // The server's uptime (current_time less ITEM_UPDATE_INTERVAL: 2 when it starts) from the second
    // `second` on (Unix time, each second begun at `phase`).
    std::uint64_t uptime = 0;
    std::uint64_t second = 0;
    // Whole seconds the server had run before its second `unixSecond`: its page mover ran once in each
    // (items.c lru_maintainer_thread, from the thread's start at current_time 62, uptime 2).
    std::uint64_t secondsRunBefore(std::uint64_t unixSecond) const {
        const std::uint64_t up = uptime + (unixSecond > second ? unixSecond - second : 0);
        return up > 2 ? up - 2 : 0;
    }
};
Expected<MemcachedClock> memcachedSecondPhase(MemcachedClient& client);

} // namespace layoutlab
