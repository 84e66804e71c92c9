// SPDX-License-Identifier: MIT
#include "layoutlab/collect/run_phase.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <mutex>
#include <optional>
#include <sys/resource.h>
#include <thread>

namespace layoutlab {

std::size_t LatencyHistogram::bucketOf(std::uint64_t ns) {
    if (ns < kSubBuckets)
        return static_cast<std::size_t>(ns); // exact below 16 ns
    const unsigned top = 63 - static_cast<unsigned>(std::countl_zero(ns)); // >= 4
    const auto sub = static_cast<std::size_t>((ns >> (top - 4)) & (kSubBuckets - 1));
    return (top - 3) * kSubBuckets + sub;
}

std::uint64_t LatencyHistogram::upperBound(std::size_t bucket) {
    if (bucket < kSubBuckets)
        return bucket;
    const std::size_t top = bucket / kSubBuckets + 3;
    const std::uint64_t sub = bucket % kSubBuckets;
    const std::uint64_t low = (std::uint64_t { 1 } << top) + (sub << (top - 4));
    return low + (std::uint64_t { 1 } << (top - 4)) - 1;
}

void LatencyHistogram::add(std::uint64_t ns, std::uint64_t count) {
    m_buckets[std::min(bucketOf(ns), m_buckets.size() - 1)] += count;
    m_count += count;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    for (std::size_t i = 0; i < m_buckets.size(); ++i)
        m_buckets[i] += other.m_buckets[i];
    m_count += other.m_count;
}

std::uint64_t LatencyHistogram::quantile(double q) const {
    if (m_count == 0)
        return 0;
    const auto rank = static_cast<std::uint64_t>(std::max(1.0, std::ceil(q * static_cast<double>(m_count))));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < m_buckets.size(); ++i) {
        seen += m_buckets[i];
        if (seen >= rank)
            return upperBound(i);
    }
    return upperBound(m_buckets.size() - 1);
}

namespace {
double processCpuSeconds() {
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds
        = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}
} // namespace

Expected<RunPhaseResult> runGets(const std::vector<RunKey>& keys, const RunPhaseConfig& config,
    const std::function<Expected<std::unique_ptr<GetConnection>>()>& connect, std::stop_token stop) {
    if (keys.empty())
        return dataError("the trace has no reads to replay in the run phase");
    if (config.connections == 0 || config.pipeline == 0)
        return usageError("the run phase needs at least one connection and a pipeline of at least 1");
    if (config.maxRequests == 0 && config.maxSeconds <= 0)
        return usageError("bound the run phase by requests or by seconds");
    if (config.setFraction < 0 || config.setFraction > 1)
        return usageError("the run phase's SET share must be between 0 and 1");
    // Which places are SETs: a fixed hash of the place, so every run of the same trace mixes alike.
    const auto setThreshold = static_cast<std::uint64_t>(config.setFraction * 9007199254740992.0); // 2^53
    auto isSet = [setThreshold](std::uint64_t place) { return ((place * 0x9e3779b97f4a7c15ULL) >> 11) < setThreshold; };
    std::vector<std::unique_ptr<GetConnection>> connections;
    for (std::uint32_t i = 0; i < config.connections; ++i) {
        auto c = connect();
        if (!c)
            return c.error();
        connections.push_back(std::move(*c));
    }
    // Workers claim batches of `pipeline` positions in the key sequence, so together they read the keys
    // in the trace's order, whatever the number of connections.
    std::atomic<std::uint64_t> next { 0 };
    std::atomic<bool> failed { false };
    std::mutex merge;
    LatencyHistogram all;
    std::uint64_t hits = 0, sets = 0;
    std::optional<Error> error;
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = config.maxSeconds > 0 ? started
            + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(config.maxSeconds))
                                                : std::chrono::steady_clock::time_point::max();
    const double cpuBefore = processCpuSeconds();
    auto worker = [&](std::span<const std::unique_ptr<GetConnection>> mine) {
        LatencyHistogram latencies;
        std::uint64_t myHits = 0;
        std::uint64_t mySets = 0;
        struct InFlight {
            std::vector<KeyRequest> keys; // views of `keys`: no copy per request
            std::chrono::steady_clock::time_point sent;
        };
        std::vector<InFlight> flights(mine.size());
        auto fail = [&](const Error& e) {
            std::lock_guard lock(merge);
            if (!error)
                error = e;
            failed = true;
        };
        bool more = true;
        while (more && !failed && !stop.stop_requested()) {
            for (std::size_t c = 0; c < mine.size(); ++c) {
                auto& flight = flights[c];
                flight.keys.clear();
                const std::uint64_t first = more ? next.fetch_add(config.pipeline) : 0;
                const auto now = std::chrono::steady_clock::now();
                if (!more || (config.maxRequests && first >= config.maxRequests) || now >= deadline) {
                    more = false;
                    continue;
                }
                const std::uint64_t count = config.maxRequests
                    ? std::min<std::uint64_t>(config.pipeline, config.maxRequests - first)
                    : config.pipeline;
                for (std::uint64_t i = 0; i < count; ++i) {
                    const RunKey& k = keys[(first + i) % keys.size()];
                    const bool set = isSet(first + i);
                    flight.keys.push_back({ k.key, k.valueBytes, set });
                    mySets += set ? 1 : 0;
                }
                flight.sent = now;
                if (auto ok = mine[c]->send(flight.keys); !ok) {
                    fail(ok.error());
                    return;
                }
            }
            for (std::size_t c = 0; c < mine.size(); ++c) {
                auto& flight = flights[c];
                if (flight.keys.empty())
                    continue;
                auto got = mine[c]->receive(flight.keys);
                if (!got) {
                    fail(got.error());
                    return;
                }
                const auto ns = static_cast<std::uint64_t>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - flight.sent)
                        .count());
                myHits += *got;
                latencies.add(ns, flight.keys.size()); // every request of a round trip waited for all of it
            }
        }
        std::lock_guard lock(merge);
        all.merge(latencies);
        hits += myHits;
        sets += mySets;
    };
    {
        const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
        const std::size_t workers = std::clamp<std::size_t>(cores, 1, connections.size());
        std::vector<std::jthread> threads;
        const std::span<const std::unique_ptr<GetConnection>> connectionSpan(connections);
        for (std::size_t w = 0; w < workers; ++w) {
            const std::size_t begin = connections.size() * w / workers;
            const std::size_t end = connections.size() * (w + 1) / workers;
            threads.emplace_back([&worker, share = connectionSpan.subspan(begin, end - begin)] { worker(share); });
        }
    }
    if (error)
        return *error;
    if (stop.stop_requested())
        return cancelledError();
    RunPhaseResult r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    r.clientCpuSeconds = processCpuSeconds() - cpuBefore;
    r.requests = all.count();
    r.hits = hits;
    r.sets = sets;
    r.requestsPerSecond = r.seconds > 0 ? static_cast<double>(r.requests) / r.seconds : 0;
    r.p50Ns = all.quantile(0.5);
    r.p99Ns = all.quantile(0.99);
    r.p999Ns = all.quantile(0.999);
    r.connections = config.connections;
    r.pipeline = config.pipeline;
    return r;
}

} // namespace layoutlab
