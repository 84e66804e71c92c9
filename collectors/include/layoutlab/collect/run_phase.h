// SPDX-License-Identifier: MIT
#pragma once

// The run phase of `drive`: GETs against the loaded server from C connections, P requests pipelined per
// round trip, bounded by a request count or a time, the keys drawn in the order the trace reads them.
// Throughput, latency percentiles from a log-bucketed histogram, and the client's CPU time, so that a
// saturated client is visible.

#include "layoutlab/collect/trace_keys.h"
#include "layoutlab/expected.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace layoutlab {

// Latencies in nanoseconds, 16 buckets per power of two (at most 6.25% apart), as HdrHistogram does with
// 4 significant bits.
class LatencyHistogram {
public:
    void add(std::uint64_t ns, std::uint64_t count = 1);
    void merge(const LatencyHistogram& other);
    std::uint64_t count() const { return m_count; }
    // The latency at quantile q in [0, 1]: the upper bound of the bucket holding it.
    std::uint64_t quantile(double q) const;

    static std::size_t bucketOf(std::uint64_t ns);
    static std::uint64_t upperBound(std::size_t bucket);

private:
    static constexpr std::size_t kSubBuckets = 16;
    std::array<std::uint64_t, 64 * kSubBuckets> m_buckets {};
    std::uint64_t m_count = 0;
};

// One connection's requests, in two halves so that one thread can keep several connections busy:
// send() writes a batch, receive() reads its replies and returns how many GETs were hits.
class GetConnection {
public:
    virtual ~GetConnection() = default;
    virtual Status send(std::span<const KeyRequest> requests) = 0;
    virtual Expected<std::uint64_t> receive(std::span<const KeyRequest> requests) = 0;
};

struct RunPhaseConfig {
    std::uint32_t connections = 4;
    std::uint32_t pipeline = 16;
    std::uint64_t maxRequests = 100000; // 0: bounded by time only
    double maxSeconds = 0; // 0: bounded by requests only
    double setFraction = 0; // this share of the requests are SETs of the key's size instead of GETs
};

struct RunPhaseResult {
    std::uint64_t requests = 0;
    std::uint64_t sets = 0; // of the requests
    std::uint64_t hits = 0; // of the GETs
    double seconds = 0;
    double requestsPerSecond = 0;
    std::uint64_t p50Ns = 0, p99Ns = 0, p999Ns = 0;
    double clientCpuSeconds = 0; // user + system time of the process during the run
    std::uint32_t connections = 0;
    std::uint32_t pipeline = 0;
};

// Runs GETs of `keys` (the trace's reads, in order, cycled), and SETs in `setFraction` of the places, through
// `connect()`ed connections. A worker thread drives several connections, as an event loop would: it sends a batch on
// each, then reads each one's replies. One worker per core, at most one per connection (half the cores measured a third
// slower with the server on the same 2-core machine).
Expected<RunPhaseResult> runGets(const std::vector<RunKey>& keys, const RunPhaseConfig& config,
    const std::function<Expected<std::unique_ptr<GetConnection>>()>& connect, std::stop_token stop = {});

} // namespace layoutlab
