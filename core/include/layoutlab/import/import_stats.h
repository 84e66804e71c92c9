// SPDX-License-Identifier: MIT
#pragma once

// Statistics of a trace as it streams by: operations by type, distinct keys, key and value size
// histograms (power-of-two buckets and jemalloc size-class buckets), the TTL share of writes, and what
// the importer rejected or skipped.

#include "layoutlab/import/importer.h"
#include "layoutlab/progress.h"
#include "layoutlab/trace/request_columns.h"

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

// Counts the statistics of requests handed to it, read whole or as a binary trace's columns.
class StatsCounter {
public:
    void count(std::span<const Request> requests);
    // A block of requests read as columns (TraceFileReader::readColumns): the same counts as its requests'.
    void count(const RequestColumns& columns);
    // The statistics so far, without a format or rejects (the reader's to tell).
    TraceStats stats() const;

private:
    // Counts requests whose fields `fields` reads (requests read whole, or columns of given widths). Taken by
    // value: a reference's pointers would be loaded again after every counter's store, which may alias.
    template <class Fields> void countAll(const Fields fields, std::size_t n);
    template <unsigned KeyIdWidth, unsigned KeySizeWidth, unsigned ValueSizeWidth>
    void countColumnsWith(const RequestColumns& columns);
    // Counts requests from `from`; returns where it stopped. kIdsByFirstAppearance: while key ids arrive in
    // order of first appearance (as every importer gives them), a new key is one whose id is the next new
    // one, and every id below it has been seen: no bitmap is needed. It stops before the first id out of
    // that order.
    template <bool kIdsByFirstAppearance, class Fields>
    std::size_t countFrom(const Fields fields, std::size_t from, std::size_t n);
    // From here on, seen key ids are told by the bitmap, which starts with every id below m_nextNewId.
    void useSeenBitmap();

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
    TraceReader& m_inner;
    const Importer* m_importer;
    StatsCounter m_counter;
};

// The statistics of a layoutlab trace of format version 2, counted from its columns without decoding its
// requests: the same as a StatsCollector over its requests, in a fraction of the time. With `readAhead`,
// blocks are read and checked on a second thread while this one counts the blocks before. Tells
// `progress` (when given) how far it is; a stop request ends it with ErrorCode::Cancelled.
class TraceFileReader;
Expected<TraceStats> countTraceColumns(
    TraceFileReader& trace, bool readAhead, ProgressSink* progress, std::stop_token stop = {});

nlohmann::json toJson(const TraceStats& stats);
std::string renderStats(const TraceStats& stats);
// What a capture holds that the simulator leaves out or assumes: commands not modelled, commands the
// server refused, commands on keys the capture never showed written. Empty when there is none.
std::string renderCaptureNotes(const RejectReport& rejects);

} // namespace layoutlab
