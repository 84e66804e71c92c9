// SPDX-License-Identifier: MIT
// Import statistics counted as requests stream by must equal the statistics counted one request at a
// time from their definitions, whatever the order of key ids (in order of first appearance, as
// importers give them, or not) and however the requests are read.

#include "layoutlab/import/import_stats.h"
#include "layoutlab/trace/memory_trace.h"

#include <gtest/gtest.h>
#include <random>
#include <set>

using namespace layoutlab;

namespace {

bool isWrite(Op op) {
    switch (op) {
    case Op::Set:
    case Op::Add:
    case Op::Replace:
    case Op::Append:
    case Op::Prepend:
    case Op::Incr:
    case Op::Decr:
        return true;
    default:
        return false;
    }
}

// The statistics by their definitions: ops by type, distinct keys with each key's size at its first
// appearance, value sizes of writes, writes with a TTL.
TraceStats countedOneByOne(const std::vector<Request>& requests) {
    TraceStats s;
    std::set<std::uint32_t> seen;
    for (const Request& r : requests) {
        ++s.requests;
        ++s.requestsByOp[static_cast<std::size_t>(r.op)];
        if (seen.insert(r.keyId).second) {
            ++s.distinctKeys;
            s.keySize.add(r.keyBytes);
        }
        if (isWrite(r.op)) {
            ++s.writes;
            s.writesWithTtl += r.ttlSeconds != 0;
            s.valueSize.add(r.valueBytes);
        }
    }
    return s;
}

void expectSameHistogram(const SizeHistogram& got, const SizeHistogram& want, const char* what) {
    EXPECT_EQ(got.count, want.count) << what;
    EXPECT_EQ(got.sumBytes, want.sumBytes) << what;
    EXPECT_EQ(got.minBytes, want.minBytes) << what;
    EXPECT_EQ(got.maxBytes, want.maxBytes) << what;
    ASSERT_EQ(got.powerOfTwo.size(), want.powerOfTwo.size()) << what;
    for (std::size_t i = 0; i < got.powerOfTwo.size(); ++i)
        EXPECT_EQ(got.powerOfTwo[i].count, want.powerOfTwo[i].count) << what << ", power-of-two bucket " << i;
    ASSERT_EQ(got.jemallocClasses.size(), want.jemallocClasses.size()) << what;
    for (std::size_t i = 0; i < got.jemallocClasses.size(); ++i)
        EXPECT_EQ(got.jemallocClasses[i].count, want.jemallocClasses[i].count) << what << ", class " << i;
}

// Requests over `keys` keys: `firstAppearance` gives ids in order of first appearance throughout;
// otherwise they follow that order for a while, then an id jumps ahead of it, and the ids skipped
// turn up later. Sizes include some past the exact counters (4 KiB).
std::vector<Request> someRequests(std::size_t count, std::uint32_t keys, bool firstAppearance, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<std::uint32_t> order(keys);
    for (std::uint32_t i = 0; i < keys; ++i)
        order[i] = i;
    if (!firstAppearance)
        std::swap(order[keys / 3], order[keys / 3 + keys / 4]); // jump ahead, come back later
    std::vector<Request> requests;
    std::uint32_t appeared = 0;
    for (std::size_t i = 0; i < count; ++i) {
        Request r;
        const bool newKey = appeared < keys && (appeared == 0 || random() % 4 == 0);
        const std::uint32_t slot = newKey ? appeared++ : static_cast<std::uint32_t>(random() % appeared);
        r.keyId = order[slot];
        r.keyBytes = 1 + (r.keyId * 7 % 60) + (r.keyId % 97 == 0 ? 5000 : 0);
        r.op = static_cast<Op>(random() % kOpCount);
        r.valueBytes = random() % 10 == 0 ? static_cast<std::uint32_t>(random() % 100000)
                                          : static_cast<std::uint32_t>(random() % 500);
        r.ttlSeconds = random() % 3 == 0 ? static_cast<std::uint32_t>(1 + random() % 1000) : 0;
        requests.push_back(r);
    }
    return requests;
}

} // namespace

TEST(ImportStatsTest, StreamedCountsEqualCountsByDefinition) {
    for (const bool firstAppearance : { true, false }) {
        const auto requests = someRequests(50000, 8000, firstAppearance, firstAppearance ? 1 : 2);
        const TraceStats want = countedOneByOne(requests);
        // Read one at a time, in odd and even chunks, and in chunks larger than the trace: the switch
        // away from first-appearance order falls anywhere in a chunk.
        for (const std::size_t chunk : { 1, 2, 3, 700, 4096, 100000 }) {
            SCOPED_TRACE(testing::Message()
                << (firstAppearance ? "first-appearance ids" : "ids out of order") << ", chunks of " << chunk);
            MemoryTrace trace(requests);
            StatsCollector stats(trace);
            std::vector<Request> buffer(chunk);
            while (true) {
                auto n = stats.read(buffer);
                ASSERT_TRUE(n);
                if (*n == 0)
                    break;
            }
            const TraceStats got = stats.stats();
            EXPECT_EQ(got.requests, want.requests);
            EXPECT_EQ(got.requestsByOp, want.requestsByOp);
            EXPECT_EQ(got.distinctKeys, want.distinctKeys);
            EXPECT_EQ(got.writes, want.writes);
            EXPECT_EQ(got.writesWithTtl, want.writesWithTtl);
            expectSameHistogram(got.keySize, want.keySize, "key size");
            expectSameHistogram(got.valueSize, want.valueSize, "value size");
        }
    }
}
