// SPDX-License-Identifier: MIT
#include "layoutlab/import/import_stats.h"

#include "layoutlab/alloc/size_class_table.h"

#include <bit>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace layoutlab {

namespace {
// The buckets of the jemalloc-class histogram: Valkey's and Redis's bundled jemalloc
// (deps/Makefile --with-lg-quantum=3, 4 KiB pages), up to 2 MiB, then one open bucket.
const SizeClassTable& histogramClasses() {
    static const SizeClassTable table = [] {
        SizeClassParams params;
        params.lgQuantum = 3;
        return SizeClassTable::fromParams(params, 21);
    }();
    return table;
}

// The ops that write a value: set, add, replace, append, prepend, incr, decr.
constexpr std::array<bool, kOpCount> kIsWrite = [] {
    std::array<bool, kOpCount> w {};
    for (Op op : { Op::Set, Op::Add, Op::Replace, Op::Append, Op::Prepend, Op::Incr, Op::Decr })
        w[static_cast<std::size_t>(op)] = true;
    return w;
}();

constexpr std::size_t kPowerOfTwoBuckets = 66; // 0, then (2^(i-2), 2^(i-1)] up to 2^64
} // namespace

void SizeHistogram::add(std::uint64_t bytes, std::uint64_t times) {
    minBytes = count == 0 ? bytes : std::min(minBytes, bytes);
    maxBytes = std::max(maxBytes, bytes);
    count += times;
    sumBytes += bytes * times;
    const auto& table = histogramClasses();
    if (powerOfTwo.empty()) {
        powerOfTwo.resize(kPowerOfTwoBuckets);
        for (std::size_t i = 1; i < kPowerOfTwoBuckets; ++i)
            powerOfTwo[i].upperBytes = i - 1 < 64 ? std::uint64_t { 1 } << (i - 1) : UINT64_MAX;
        jemallocClasses.resize(table.classes().size() + 1);
        for (std::size_t i = 0; i < table.classes().size(); ++i)
            jemallocClasses[i].upperBytes = table.classes()[i].size;
        jemallocClasses.back().upperBytes = UINT64_MAX;
    }
    // Power of two: bucket 0 holds 0, bucket i holds (2^(i-2), 2^(i-1)].
    const std::size_t p2 = bytes == 0 ? 0 : static_cast<std::size_t>(std::bit_width(bytes - 1)) + 1;
    powerOfTwo[p2].count += times;
    jemallocClasses[std::min(table.classIndex(bytes), table.classes().size())].count += times;
}

StatsCollector::StatsCollector(TraceReader& inner, const Importer* importer)
    : m_inner(inner)
    , m_importer(importer ? importer : dynamic_cast<const Importer*>(&inner)) { }

Expected<std::size_t> StatsCollector::read(std::span<Request> out) {
    auto n = m_inner.read(out);
    if (n)
        count(out.first(*n));
    return n;
}

Expected<std::span<const Request>> StatsCollector::borrow(std::size_t max) {
    auto requests = m_inner.borrow(max);
    if (requests)
        count(*requests);
    return requests;
}

void StatsCollector::count(std::span<const Request> requests) {
    m_stats.requests += requests.size();
    std::size_t counted = 0;
    if (m_idsByFirstAppearance) {
        counted = countRequests<true>(requests);
        if (counted == requests.size())
            return;
        // An id out of first-appearance order: from here on, seen ids are told by a bitmap, which starts
        // with every id below the next new one.
        m_idsByFirstAppearance = false;
        m_seenWords.assign(m_nextNewId / 64 + 1, 0);
        std::fill(m_seenWords.begin(), m_seenWords.begin() + static_cast<std::ptrdiff_t>(m_nextNewId / 64),
            ~std::uint64_t { 0 });
        m_seenWords[m_nextNewId / 64] = (std::uint64_t { 1 } << (m_nextNewId % 64)) - 1;
    }
    countRequests<false>(requests.subspan(counted));
}

template <bool kIdsByFirstAppearance> std::size_t StatsCollector::countRequests(std::span<const Request> out) {
    const std::size_t n = out.size();
    // Each request adds one to the counter of its op and whether it carries a TTL, which gives both the
    // ops by type and the writes with a TTL. Counters are locals, in two interleaved sets: incrementing
    // one memory counter per request chains each increment to the previous one's store when the same op
    // repeats.
    std::array<std::array<std::uint64_t, 2 * kOpCount>, 2> byOpAndTtl {};
    std::uint64_t distinctKeys = 0;
    std::uint64_t nextNewId = m_nextNewId;
    // The arrays' data in locals: the counters' stores could alias the vectors' own pointers, which would
    // then be loaded again for every request.
    std::uint64_t* const exactKeySizes = m_exactKeySizes.data();
    std::uint64_t* const exactValueSizes = m_exactValueSizes.data();
    std::uint64_t* seen = m_seenWords.data();
    std::uint64_t seenLimit = m_seenWords.size() * 64;
    // Counts one request, or returns false (counting nothing) for an id out of first-appearance order.
    // Inlined by force: GCC otherwise calls it, at twice the instructions per request.
    auto countOne
        = [&](const Request& r, std::array<std::uint64_t, 2 * kOpCount>& counters) __attribute__((always_inline)) {
        const std::uint32_t id = r.keyId;
        bool isNew;
        if constexpr (kIdsByFirstAppearance) {
            isNew = id >= nextNewId;
            if (isNew) [[unlikely]] {
                if (id != nextNewId)
                    return false;
                ++nextNewId;
            }
        } else {
            if (id >= seenLimit) [[unlikely]] {
                m_seenWords.resize(std::max<std::size_t>(id / 64 + 1, m_seenWords.size() * 2));
                seen = m_seenWords.data();
                seenLimit = m_seenWords.size() * 64;
            }
            const std::uint64_t bit = std::uint64_t { 1 } << (id % 64);
            isNew = !(seen[id / 64] & bit);
            seen[id / 64] |= bit;
        }
        if (isNew) {
            ++distinctKeys;
            if (r.keyBytes < kExactSizes)
                ++exactKeySizes[r.keyBytes];
            else
                m_stats.keySize.add(r.keyBytes);
        }
        const auto op = static_cast<std::size_t>(r.op);
        ++counters[2 * op + static_cast<std::size_t>(r.ttlSeconds != 0)];
        // Reads and writes interleave unpredictably: a write's value size is counted without a branch on
        // the op (a read adds 0).
        const std::uint64_t isWrite = kIsWrite[op];
        if (r.valueBytes < kExactSizes) [[likely]]
            exactValueSizes[r.valueBytes] += isWrite;
        else if (isWrite)
            m_stats.valueSize.add(r.valueBytes);
        return true;
    };
    // Two requests a turn, one to each set of counters.
    std::size_t i = 0;
    bool stopped = false;
    for (; i + 2 <= n; i += 2) {
        if (!countOne(out[i], byOpAndTtl[0])) {
            stopped = true;
            break;
        }
        if (!countOne(out[i + 1], byOpAndTtl[1])) {
            ++i;
            stopped = true;
            break;
        }
    }
    if (!stopped && i < n && countOne(out[i], byOpAndTtl[0]))
        ++i;
    for (std::size_t op = 0; op < static_cast<std::size_t>(kOpCount); ++op) {
        const std::uint64_t withoutTtl = byOpAndTtl[0][2 * op] + byOpAndTtl[1][2 * op];
        const std::uint64_t withTtl = byOpAndTtl[0][2 * op + 1] + byOpAndTtl[1][2 * op + 1];
        m_stats.requestsByOp[op] += withoutTtl + withTtl;
        if (kIsWrite[op]) {
            m_stats.writes += withoutTtl + withTtl;
            m_stats.writesWithTtl += withTtl;
        }
    }
    m_stats.distinctKeys += distinctKeys;
    m_nextNewId = nextNewId;
    return i;
}

TraceStats StatsCollector::stats() const {
    TraceStats s = m_stats;
    for (std::size_t bytes = 0; bytes < kExactSizes; ++bytes) {
        if (m_exactKeySizes[bytes])
            s.keySize.add(bytes, m_exactKeySizes[bytes]);
        if (m_exactValueSizes[bytes])
            s.valueSize.add(bytes, m_exactValueSizes[bytes]);
    }
    if (m_importer) {
        s.format = m_importer->formatName();
        s.rejects = m_importer->rejects();
    } else {
        s.format = "layoutlab";
    }
    return s;
}

nlohmann::json toJson(const TraceStats& s) {
    auto histogram = [](const SizeHistogram& h) {
        nlohmann::json j;
        j["count"] = h.count;
        j["min_bytes"] = h.minBytes;
        j["max_bytes"] = h.maxBytes;
        j["mean_bytes"]
            = h.count ? std::round(static_cast<double>(h.sumBytes) / static_cast<double>(h.count) * 100) / 100 : 0.0;
        auto buckets = [](const std::vector<SizeHistogram::Bucket>& bs) {
            auto a = nlohmann::json::array();
            for (const auto& b : bs)
                if (b.count)
                    a.push_back(
                        { { "upper_bytes",
                              b.upperBytes == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(b.upperBytes) },
                            { "count", b.count } });
            return a;
        };
        j["power_of_two"] = buckets(h.powerOfTwo);
        j["jemalloc_classes"] = buckets(h.jemallocClasses);
        return j;
    };
    nlohmann::json j;
    j["format"] = s.format;
    j["ops"] = s.requests;
    auto& byType = j["ops_by_type"] = nlohmann::json::object();
    for (int op = 0; op < kOpCount; ++op)
        if (s.requestsByOp[static_cast<std::size_t>(op)])
            byType[std::string(opName(static_cast<Op>(op)))] = s.requestsByOp[static_cast<std::size_t>(op)];
    j["distinct_keys"] = s.distinctKeys;
    j["writes"] = s.writes;
    j["ttl_share"]
        = s.writes ? std::round(static_cast<double>(s.writesWithTtl) / static_cast<double>(s.writes) * 1e4) / 1e4 : 0.0;
    j["rejected"] = s.rejects.total;
    j["rejected_by_reason"] = s.rejects.byReason;
    j["rejected_examples"] = s.rejects.examples;
    j["skipped"] = s.rejects.skipped;
    j["key_size"] = histogram(s.keySize);
    j["value_size"] = histogram(s.valueSize);
    return j;
}

std::string renderStats(const TraceStats& s) {
    std::string out = fmt::format("format          {}\nrequests        {}\n", s.format, s.requests);
    for (int op = 0; op < kOpCount; ++op)
        if (const auto n = s.requestsByOp[static_cast<std::size_t>(op)])
            out += fmt::format("  {:<13} {:>12}  {:5.1f}%\n", opName(static_cast<Op>(op)), n,
                100.0 * static_cast<double>(n) / static_cast<double>(s.requests));
    out += fmt::format("distinct keys   {}\nwrites with TTL {:.1f}%\n", s.distinctKeys,
        s.writes ? 100.0 * static_cast<double>(s.writesWithTtl) / static_cast<double>(s.writes) : 0.0);
    auto hist = [&out](const char* title, const SizeHistogram& h) {
        out += fmt::format("\n{}: {} values, min {}, mean {:.1f}, max {} bytes\n", title, h.count, h.minBytes,
            h.count ? static_cast<double>(h.sumBytes) / static_cast<double>(h.count) : 0.0, h.maxBytes);
        for (const auto& b : h.powerOfTwo)
            if (b.count)
                out += fmt::format("  <= {:>10} B {:>12}  {:5.1f}%\n", b.upperBytes, b.count,
                    100.0 * static_cast<double>(b.count) / static_cast<double>(h.count));
    };
    hist("key size (distinct keys)", s.keySize);
    hist("value size (writes)", s.valueSize);
    if (s.rejects.total) {
        out += fmt::format("\nrejected {} lines:\n", s.rejects.total);
        for (const auto& [reason, n] : s.rejects.byReason)
            out += fmt::format("  {:<28} {}\n", reason, n);
        out += "first ones:\n";
        for (const auto& e : s.rejects.examples)
            out += "  " + e + "\n";
    }
    if (!s.rejects.skipped.empty()) {
        out += "skipped (not string-key requests):\n";
        for (const auto& [reason, n] : s.rejects.skipped)
            out += fmt::format("  {:<28} {}\n", reason, n);
    }
    return out;
}

} // namespace layoutlab
