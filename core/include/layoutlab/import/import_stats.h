// SPDX-License-Identifier: MIT
#pragma once

// Statistics of a trace as it streams by: operations by type, distinct keys, key and value size
// histograms (power-of-two buckets and jemalloc size-class buckets), the TTL share of writes, and what
// the importer rejected or skipped.

#include "layoutlab/import/importer.h"

#include <nlohmann/json_fwd.hpp>

namespace layoutlab {

struct SizeHistogram {
    struct Bucket {
        std::uint64_t upperBytes = 0; // sizes <= upperBytes (and above the previous bucket)
        std::uint64_t count = 0;
    };
    std::vector<Bucket> powerOfTwo; // upper bounds 0, 1, 2, 4, 8, ...
    std::vector<Bucket> jemallocClasses; // Valkey/Redis bundled jemalloc classes (quantum 8, 4 KiB pages)
    std::uint64_t count = 0;
    std::uint64_t sumBytes = 0;
    std::uint64_t minBytes = 0;
    std::uint64_t maxBytes = 0;

    void add(std::uint64_t bytes, std::uint64_t times = 1);
};

struct TraceStats {
    std::string format;
    std::uint64_t requests = 0;
    std::array<std::uint64_t, kOpCount> requestsByOp {};
    std::uint64_t distinctKeys = 0;
    std::uint64_t writes = 0; // set, add, replace, append, prepend, incr, decr
    std::uint64_t writesWithTtl = 0;
    SizeHistogram keySize; // per distinct key, at its first appearance
    SizeHistogram valueSize; // per write
    RejectReport rejects;
};

// Passes requests through while counting them.
class StatsCollector final : public TraceReader {
public:
    // `importer`: where the format and rejects come from, when `inner` is (or wraps) an importer.
    explicit StatsCollector(TraceReader& inner, const Importer* importer = nullptr);
    Expected<std::size_t> read(std::span<Request> out) override;
    Expected<std::span<const Request>> borrow(std::size_t max) override;
    std::uint64_t totalRequests() const override { return m_inner.totalRequests(); }
    std::uint64_t keyIdLimit() const override { return m_inner.keyIdLimit(); }
    std::string name() const override { return m_inner.name(); }

    // The statistics so far; takes format and rejects from the inner reader when it is an importer.
    TraceStats stats() const;

private:
    void count(std::span<const Request> requests);
    // Counts requests from the first; returns how many it counted. kIdsByFirstAppearance: while key ids
    // arrive in order of first appearance (as every importer gives them), a new key is one whose id is
    // the next new one, and every id below it has been seen: no bitmap is needed. It stops before the
    // first id out of that order.
    template <bool kIdsByFirstAppearance> std::size_t countRequests(std::span<const Request> requests);

    TraceReader& m_inner;
    const Importer* m_importer;
    // Sizes below kExactSizes are counted in these arrays (one increment per request) and folded into
    // the histograms by stats(); larger ones go to the histograms directly.
    static constexpr std::size_t kExactSizes = 4096;
    TraceStats m_stats;
    std::vector<std::uint64_t> m_exactKeySizes = std::vector<std::uint64_t>(kExactSizes);
    std::vector<std::uint64_t> m_exactValueSizes = std::vector<std::uint64_t>(kExactSizes);
    bool m_idsByFirstAppearance = true; // so far: ids 0 to m_nextNewId - 1 have been seen, no others
    std::uint64_t m_nextNewId = 0;
    std::vector<std::uint64_t> m_seenWords; // otherwise, bit i: key id i has been seen
};

nlohmann::json toJson(const TraceStats& stats);
std::string renderStats(const TraceStats& stats);

} // namespace layoutlab
