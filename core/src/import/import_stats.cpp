// SPDX-License-Identifier: MIT
#include "layoutlab/import/import_stats.h"

#include "layoutlab/alloc/size_class_table.h"

#include <bit>
#include <cstring>
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
        m_counter.count(out.first(*n));
    return n;
}

Expected<std::span<const Request>> StatsCollector::borrow(std::size_t max) {
    auto requests = m_inner.borrow(max);
    if (requests)
        m_counter.count(*requests);
    return requests;
}

TraceStats StatsCollector::stats() const {
    TraceStats s = m_counter.stats();
    if (m_importer) {
        s.format = m_importer->formatName();
        s.rejects = m_importer->rejects();
    } else {
        s.format = "layoutlab";
    }
    return s;
}

namespace {
// The fields the statistics need, of requests read whole. Requests are counted by op and whether they carry
// a TTL: counter 2 * op + (TTL set).
// `at(i)` finds request i once; the fields are read from what it gives.
struct RequestFields {
    const Request* requests;
    const Request& at(std::size_t i) const { return requests[i]; }
    static std::uint64_t keyId(const Request& r) { return r.keyId; }
    static std::uint64_t keyBytes(const Request& r) { return r.keyBytes; }
    static std::uint64_t valueBytes(const Request& r) { return r.valueBytes; }
    static unsigned counter(const Request& r) {
        return 2 * static_cast<unsigned>(r.op) + static_cast<unsigned>(r.ttlSeconds != 0);
    }
    static constexpr std::size_t kCounters = 2 * kOpCount;
    static constexpr std::size_t opOf(std::size_t counter) { return counter / 2; }
    static constexpr bool hasTtl(std::size_t counter) { return counter % 2; }
};

// The same fields of requests read as columns, each one word masked to its column's width. Widths are
// built in when known at compile time (0: read from the columns), which frees the registers masks and
// strides would take.
template <unsigned KeyIdWidth, unsigned KeySizeWidth, unsigned ValueSizeWidth> struct ColumnFields {
    explicit ColumnFields(const RequestColumns& columns)
        : opBytes(columns.opBytes)
        , keyIds { columns.keyIds.data, KeyIdWidth ? KeyIdWidth : columns.keyIds.width }
        , keySizes { columns.keyBytes.data, KeySizeWidth ? KeySizeWidth : columns.keyBytes.width }
        , valueSizes { columns.valueBytes.data, ValueSizeWidth ? ValueSizeWidth : columns.valueBytes.width }
        , keyIdMask(keyIds.mask())
        , keySizeMask(keySizes.mask())
        , valueSizeMask(valueSizes.mask()) { }
    static std::uint64_t word(const unsigned char* p) {
        std::uint64_t w;
        std::memcpy(&w, p, sizeof w);
        return w;
    }
    std::size_t at(std::size_t i) const { return i; }
    std::uint64_t keyId(std::size_t i) const { return word(keyIds.data + i * keyIds.width) & keyIdMask; }
    std::uint64_t keyBytes(std::size_t i) const { return word(keySizes.data + i * keySizes.width) & keySizeMask; }
    std::uint64_t valueBytes(std::size_t i) const {
        return word(valueSizes.data + i * valueSizes.width) & valueSizeMask;
    }
    // Requests are counted by op byte (RequestColumns), which holds the op and the TTL flag (and the value
    // kind). Checked op bytes have bit 7 clear: 128 counters cover them.
    unsigned counter(std::size_t i) const { return opBytes[i]; }
    static constexpr std::size_t kCounters = 128;
    static constexpr std::size_t opOf(std::size_t opByte) { return opByte & RequestColumns::kOpMask; }
    static constexpr bool hasTtl(std::size_t opByte) { return RequestColumns::hasTtl(static_cast<unsigned>(opByte)); }

    const unsigned char* opBytes;
    FixedWidthColumn keyIds, keySizes, valueSizes;
    std::uint64_t keyIdMask, keySizeMask, valueSizeMask;
};

// Whether each counter's op writes a value.
template <class Fields>
constexpr std::array<std::uint8_t, Fields::kCounters> kCounterWrites = [] {
    std::array<std::uint8_t, Fields::kCounters> writes {};
    for (std::size_t counter = 0; counter < Fields::kCounters; ++counter)
        writes[counter] = Fields::opOf(counter) < static_cast<std::size_t>(kOpCount) && kIsWrite[Fields::opOf(counter)];
    return writes;
}();
} // namespace

void StatsCounter::count(std::span<const Request> requests) {
    countAll(RequestFields { requests.data() }, requests.size());
}

void StatsCounter::count(const RequestColumns& columns) {
    // Loops with the widths built in for the usual blocks (as the block decoder has): key ids of 1 to 4
    // bytes, key sizes of 1 byte, value sizes of 1 to 4 bytes. Any other block takes the general loop.
    const unsigned idWidth = columns.keyIds.width, valueWidth = columns.valueBytes.width;
    if (columns.keyBytes.width != 1 || idWidth < 1 || idWidth > 4 || valueWidth < 1 || valueWidth > 4)
        return countColumnsWith<0, 0, 0>(columns);
    using Loop = void (StatsCounter::*)(const RequestColumns&);
    static constexpr std::array<std::array<Loop, 4>, 4> kLoops = [] {
        auto row = []<unsigned IdWidth>() {
            return std::array<Loop, 4> { &StatsCounter::countColumnsWith<IdWidth, 1, 1>,
                &StatsCounter::countColumnsWith<IdWidth, 1, 2>, &StatsCounter::countColumnsWith<IdWidth, 1, 3>,
                &StatsCounter::countColumnsWith<IdWidth, 1, 4> };
        };
        return std::array<std::array<Loop, 4>, 4> { row.template operator()<1>(), row.template operator()<2>(),
            row.template operator()<3>(), row.template operator()<4>() };
    }();
    (this->*kLoops[idWidth - 1][valueWidth - 1])(columns);
}

template <unsigned KeyIdWidth, unsigned KeySizeWidth, unsigned ValueSizeWidth>
void StatsCounter::countColumnsWith(const RequestColumns& columns) {
    countAll(ColumnFields<KeyIdWidth, KeySizeWidth, ValueSizeWidth>(columns), columns.count);
}

template <class Fields> void StatsCounter::countAll(const Fields fields, std::size_t n) {
    m_stats.requests += n;
    std::size_t counted = 0;
    if (m_idsByFirstAppearance) {
        counted = countFrom<true>(fields, 0, n);
        if (counted == n)
            return;
        useSeenBitmap(); // an id out of first-appearance order
    }
    countFrom<false>(fields, counted, n);
}

void StatsCounter::useSeenBitmap() {
    m_idsByFirstAppearance = false;
    m_seenWords.assign(m_nextNewId / 64 + 1, 0);
    std::fill(
        m_seenWords.begin(), m_seenWords.begin() + static_cast<std::ptrdiff_t>(m_nextNewId / 64), ~std::uint64_t { 0 });
    m_seenWords[m_nextNewId / 64] = (std::uint64_t { 1 } << (m_nextNewId % 64)) - 1;
}

template <bool kIdsByFirstAppearance, class Fields>
std::size_t StatsCounter::countFrom(const Fields fields, std::size_t from, std::size_t n) {
    // Each request adds one to the counter of its op and whether it carries a TTL, which gives both the
    // ops by type and the writes with a TTL. Counters are locals, in two interleaved sets: incrementing
    // one memory counter per request chains each increment to the previous one's store when the same op
    // repeats.
    using Counters = std::array<std::uint64_t, Fields::kCounters>;
    std::array<Counters, 2> byOpAndTtl {};
    const auto& counterWrites = kCounterWrites<Fields>;
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
    auto countOne = [&](std::size_t i, Counters & counters) __attribute__((always_inline)) {
        const auto& request = fields.at(i);
        const std::uint64_t id = fields.keyId(request);
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
            const std::uint64_t keyBytes = fields.keyBytes(request);
            if (keyBytes < kExactSizes)
                ++exactKeySizes[keyBytes];
            else
                m_stats.keySize.add(keyBytes);
        }
        const unsigned counter = fields.counter(request);
        ++counters[counter];
        // Reads and writes interleave unpredictably: a write's value size is counted without a branch on
        // the op (a read adds 0).
        const std::uint64_t isWrite = counterWrites[counter];
        const std::uint64_t valueBytes = fields.valueBytes(request);
        if (valueBytes < kExactSizes) [[likely]]
            exactValueSizes[valueBytes] += isWrite;
        else if (isWrite)
            m_stats.valueSize.add(valueBytes);
        return true;
    };
    // Two requests a turn, one to each set of counters.
    std::size_t i = from;
    bool stopped = false;
    for (; i + 2 <= n; i += 2) {
        if (!countOne(i, byOpAndTtl[0])) {
            stopped = true;
            break;
        }
        if (!countOne(i + 1, byOpAndTtl[1])) {
            ++i;
            stopped = true;
            break;
        }
    }
    if (!stopped && i < n && countOne(i, byOpAndTtl[0]))
        ++i;
    for (std::size_t counter = 0; counter < Fields::kCounters; ++counter) {
        const std::uint64_t times = byOpAndTtl[0][counter] + byOpAndTtl[1][counter];
        if (times == 0)
            continue;
        m_stats.requestsByOp[Fields::opOf(counter)] += times;
        if (counterWrites[counter]) {
            m_stats.writes += times;
            m_stats.writesWithTtl += Fields::hasTtl(counter) ? times : 0;
        }
    }
    m_stats.distinctKeys += distinctKeys;
    m_nextNewId = nextNewId;
    return i;
}

TraceStats StatsCounter::stats() const {
    TraceStats s = m_stats;
    for (std::size_t bytes = 0; bytes < kExactSizes; ++bytes) {
        if (m_exactKeySizes[bytes])
            s.keySize.add(bytes, m_exactKeySizes[bytes]);
        if (m_exactValueSizes[bytes])
            s.valueSize.add(bytes, m_exactValueSizes[bytes]);
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
    j["refused"] = s.rejects.refusedTotal;
    j["refused_by_reason"] = s.rejects.refused;
    j["refused_examples"] = s.rejects.refusedExamples;
    j["truncated_records"] = s.rejects.truncatedRecords;
    j["not_modelled"] = s.rejects.notModelled;
    j["drawn_by_importer"] = s.rejects.drawnByImporter;
    j["unseen_keys"] = s.rejects.unseenKeys;
    j["key_size"] = histogram(s.keySize);
    j["value_size"] = histogram(s.valueSize);
    return j;
}

std::string renderCaptureNotes(const RejectReport& r) {
    std::string out;
    if (r.truncatedRecords)
        out += fmt::format("the last line is cut short (no line break, and it does not parse: a capture stopped "
                           "mid-write), left out:\n  {}\n",
            r.truncatedExample);
    if (!r.notModelled.empty()) {
        out += "not modelled (their effect on memory is missing from every figure):\n";
        for (const auto& [name, n] : r.notModelled)
            out += fmt::format("  {:<28} {}\n", name, n);
    }
    if (!r.drawnByImporter.empty()) {
        out += "drawn by the importer (the server's draw is not in the capture: figures right in distribution, "
               "exactly where a set's members are alike):\n";
        for (const auto& [name, n] : r.drawnByImporter)
            out += fmt::format("  {:<28} {}\n", name, n);
    }
    if (r.refusedTotal) {
        out += fmt::format("refused by the server ({} commands: left out, as they changed nothing):\n", r.refusedTotal);
        for (const auto& [reason, n] : r.refused)
            out += fmt::format("  {:<28} {}\n", reason, n);
        out += "first ones:\n";
        for (const auto& e : r.refusedExamples)
            out += "  " + e + "\n";
    }
    if (!r.unseenKeys.empty()) {
        out += "on keys the capture never showed written (taken as absent: wrong if the server held them "
               "before the capture began):\n";
        for (const auto& [name, n] : r.unseenKeys)
            out += fmt::format("  {:<28} {}\n", name, n);
    }
    return out;
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
        out += "skipped (they change no key's memory):\n";
        for (const auto& [reason, n] : s.rejects.skipped)
            out += fmt::format("  {:<28} {}\n", reason, n);
    }
    out += renderCaptureNotes(s.rejects);
    return out;
}

} // namespace layoutlab
