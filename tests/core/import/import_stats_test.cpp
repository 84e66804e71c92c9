// SPDX-License-Identifier: MIT
// Import statistics counted as requests stream by must equal the statistics counted one request at a
// time from their definitions, whatever the order of key ids (in order of first appearance, as
// importers give them, or not) and however the requests are read.

#include "layoutlab/import/import_stats.h"
#include "layoutlab/sim/simulation.h"
#include "layoutlab/trace/memory_trace.h"
#include "layoutlab/trace/trace_file.h"
#include "scratch_dir.h"

#include <filesystem>
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

void expectSameStats(const TraceStats& got, const TraceStats& want) {
    EXPECT_EQ(got.requests, want.requests);
    EXPECT_EQ(got.requestsByOp, want.requestsByOp);
    EXPECT_EQ(got.distinctKeys, want.distinctKeys);
    EXPECT_EQ(got.writes, want.writes);
    EXPECT_EQ(got.writesWithTtl, want.writesWithTtl);
    expectSameHistogram(got.keySize, want.keySize, "key size");
    expectSameHistogram(got.valueSize, want.valueSize, "value size");
}

// A binary trace in a scratch directory of its own.
class TraceFileStatsTest : public ScratchDirTest {
protected:
    std::string write(const std::vector<Request>& requests) {
        auto writer = TraceFileWriter::create(path("t.lltrace"));
        EXPECT_TRUE(writer);
        EXPECT_TRUE((*writer)->write(requests));
        EXPECT_TRUE((*writer)->finish());
        return path("t.lltrace");
    }
};

class CountingProgress final : public ProgressSink {
public:
    void progress(double fraction, std::uint64_t done) override {
        EXPECT_GE(fraction, last);
        last = fraction;
        lastDone = done;
        ++calls;
    }
    double last = 0;
    std::uint64_t lastDone = 0;
    int calls = 0;
};

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
            expectSameStats(stats.stats(), want);
        }
    }
}

// Counted from a binary trace's columns, the statistics are those of its requests, whatever the blocks'
// column widths: key ids of 1 to 4 bytes, key sizes of 1 or 2, value sizes of 0 to 3 (each block has
// the widths of its largest values), ids in first-appearance order or not.
TEST_F(TraceFileStatsTest, CountsFromColumnsEqualCountsByDefinition) {
    struct Case {
        const char* name;
        std::uint32_t keys;
        bool firstAppearance;
        std::uint32_t idStride; // ids spread this far apart (out of first-appearance order unless 1)
        bool zeroValues; // every value size 0: a column of width 0
    };
    for (const Case& c :
        { Case { "8000 keys in order", 8000, true, 1, false }, Case { "8000 keys out of order", 8000, false, 1, false },
            Case { "200 keys (1-byte ids)", 200, true, 1, false },
            Case { "ids up to 2^25 (4-byte ids)", 8000, false, 4099, false },
            Case { "no value bytes", 3000, true, 1, true } }) {
        SCOPED_TRACE(c.name);
        auto requests = someRequests(30000, c.keys, c.firstAppearance, c.keys + c.idStride);
        for (Request& r : requests) {
            r.keyId *= c.idStride;
            if (c.zeroValues)
                r.valueBytes = 0;
        }
        const TraceStats want = countedOneByOne(requests);
        const std::string path = write(requests);
        for (const bool readAhead : { false, true }) {
            SCOPED_TRACE(readAhead ? "read ahead" : "one thread");
            auto trace = TraceFileReader::open(path);
            ASSERT_TRUE(trace);
            CountingProgress progress;
            auto got = countTraceColumns(**trace, readAhead, &progress);
            ASSERT_TRUE(got) << got.error().describe();
            expectSameStats(*got, want);
            EXPECT_EQ(got->format, "layoutlab");
        }
    }
}

TEST_F(TraceFileStatsTest, CountingFromColumnsReportsProgressAndStopsWhenAsked) {
    // 300 blocks: progress is told every 64.
    const std::string path = write(someRequests(300 * 4096, 100000, true, 3));
    for (const bool readAhead : { false, true }) {
        auto trace = TraceFileReader::open(path);
        ASSERT_TRUE(trace);
        CountingProgress progress;
        ASSERT_TRUE(countTraceColumns(**trace, readAhead, &progress));
        EXPECT_EQ(progress.calls, 4);
        EXPECT_EQ(progress.lastDone, 256u * 4096);
        std::stop_source stop;
        stop.request_stop();
        auto again = TraceFileReader::open(path);
        auto cancelled = countTraceColumns(**again, readAhead, nullptr, stop.get_token());
        ASSERT_FALSE(cancelled);
        EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
    }
}

// A damaged block ends the count with the error a reader of its requests would give.
TEST_F(TraceFileStatsTest, ADamagedBlockEndsTheCountWithItsError) {
    const auto requests = someRequests(20000, 3000, true, 4);
    const std::string path = write(requests);
    {
        // The third block's first op byte (blocks of 4096 requests): op 15 does not exist.
        auto trace = TraceFileReader::open(path);
        std::vector<unsigned char> storage;
        std::uint64_t offset = 32;
        for (int block = 0; block < 2; ++block) {
            auto columns = (*trace)->readColumns(storage);
            ASSERT_TRUE(columns && *columns);
            offset += 32 + storage.size() - 8; // the payload, without the reader's padding
        }
        std::FILE* f = std::fopen(path.c_str(), "r+b");
        std::fseek(f, static_cast<long>(offset + 32), SEEK_SET);
        std::fputc(0x0f, f);
        std::fclose(f);
    }
    for (const bool readAhead : { false, true }) {
        auto trace = TraceFileReader::open(path);
        ASSERT_TRUE(trace);
        auto got = countTraceColumns(**trace, readAhead, nullptr);
        ASSERT_FALSE(got);
        // The block's checksum catches it, at the block's offset, before any of its records is counted.
        EXPECT_NE(got.error().describe().find("damaged block (its checksum"), std::string::npos)
            << got.error().describe();
    }
}
