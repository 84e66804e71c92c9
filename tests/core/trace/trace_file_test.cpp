// SPDX-License-Identifier: MIT
#include "layoutlab/trace/trace_file.h"
#include "scratch_dir.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <span>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

using namespace layoutlab;

namespace {

class TraceFileTest : public ScratchDirTest {
protected:
    static std::vector<Request> sample() {
        std::vector<Request> out;
        for (std::uint32_t i = 0; i < 5000; ++i) {
            Request r;
            r.timeMs = i * 3 / 2;
            r.keyId = (i * 7919u) % 3001u; // ids jump back and forth
            r.keyBytes = 1 + i % 250;
            r.valueBytes = i % 11 == 0 ? 1000000 + i : i % 300;
            r.ttlSeconds = i % 5 == 0 ? 60 + i : 0;
            r.op = static_cast<Op>(i % kOpCount);
            r.kind = static_cast<ValueKind>(i % 3);
            if (r.op == Op::Element) { // every collection, action and integer class; the TTL field its prior bytes
                r.elementBytes = i * 13 % 70000;
                r.element = ElementOp { static_cast<CollectionKind>(i % 4),
                    static_cast<ElementAction>(i / 4 % kElementActionCount), static_cast<IntegerClass>(i % 7),
                    static_cast<IntegerClass>(i / 7 % 7), static_cast<IntegerClass>(i / 49 % 7) }
                                .packed();
            }
            out.push_back(r);
        }
        return out;
    }
};

std::vector<Request> readAll(TraceReader& reader) {
    std::vector<Request> all;
    std::vector<Request> batch(777);
    while (true) {
        auto n = reader.read(batch);
        EXPECT_TRUE(n) << n.error().describe();
        if (!n || *n == 0)
            break;
        all.insert(all.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*n));
    }
    return all;
}

TEST_F(TraceFileTest, RoundTripsEveryField) {
    const auto requests = sample();
    {
        auto writer = TraceFileWriter::create(path("t.lltrace"));
        ASSERT_TRUE(writer);
        ASSERT_TRUE((*writer)->write(requests));
        ASSERT_TRUE((*writer)->finish());
    }
    auto reader = TraceFileReader::open(path("t.lltrace"));
    ASSERT_TRUE(reader) << reader.error().describe();
    EXPECT_EQ((*reader)->totalRequests(), requests.size());
    EXPECT_EQ((*reader)->keyIdLimit(), 3001u);
    EXPECT_EQ(readAll(**reader), requests);
    EXPECT_EQ(partialFileLeft(), "");
}

// Value kind 3 is a HyperLogLog's change, on a setrange only (request.h kHyperLogLogKind): past the first sixteen
// op bytes too (checked sixteen at a time where the host has SSE2). On any other op it is damage (below).
TEST_F(TraceFileTest, AHyperLogLogsChangesRoundTrip) {
    std::vector<Request> requests;
    for (std::uint32_t i = 0; i < 40; ++i) {
        Request r;
        r.keyId = i % 5;
        r.keyBytes = 8;
        r.op = i % 3 ? Op::SetRange : Op::Set;
        r.kind = i % 3 ? kHyperLogLogKind : ValueKind::String;
        r.valueBytes = i % 3 ? kHyperLogLogCreatedBytes + 3 * i : 10;
        requests.push_back(r);
    }
    {
        auto writer = TraceFileWriter::create(path("h.lltrace"));
        ASSERT_TRUE(writer);
        ASSERT_TRUE((*writer)->write(requests));
        ASSERT_TRUE((*writer)->finish());
    }
    auto reader = TraceFileReader::open(path("h.lltrace"));
    ASSERT_TRUE(reader) << reader.error().describe();
    EXPECT_EQ(readAll(**reader), requests);
}

// Blocks are decoded by loops with the common column widths built in, and by a general loop for the
// rest: every combination of key-id, key-size, value-size and time-step widths, with TTLs of every
// width, must come back exactly.
TEST_F(TraceFileTest, EveryCombinationOfColumnWidthsRoundTrips) {
    auto largestOfWidth
        = [](unsigned width) { return width == 0 ? std::uint64_t { 0 } : (std::uint64_t { 1 } << (8 * width)) - 1; };
    for (unsigned keyIdWidth = 1; keyIdWidth <= 4; ++keyIdWidth)
        for (unsigned keySizeWidth = 0; keySizeWidth <= 3; ++keySizeWidth)
            for (unsigned valueSizeWidth = 0; valueSizeWidth <= 4; ++valueSizeWidth)
                for (const unsigned stepWidth : { 0u, 1u, 3u, 6u }) {
                    const unsigned ttlWidth = (keyIdWidth + valueSizeWidth + stepWidth) % 5;
                    SCOPED_TRACE(::testing::Message()
                        << "widths: key id " << keyIdWidth << ", key size " << keySizeWidth << ", value size "
                        << valueSizeWidth << ", ttl " << ttlWidth << ", time step " << stepWidth);
                    std::vector<Request> requests;
                    std::uint64_t time = 0;
                    for (std::uint32_t i = 0; i < 300; ++i) {
                        Request r;
                        // Each column reaches the largest value of its width once, and varies below it.
                        const bool top = i == 150;
                        r.keyId = static_cast<std::uint32_t>(top ? largestOfWidth(keyIdWidth) - 1 : (i * 7919u) % 200u);
                        r.keyBytes = static_cast<std::uint32_t>(
                            top ? largestOfWidth(keySizeWidth) : largestOfWidth(keySizeWidth) & (i * 37u));
                        r.valueBytes = static_cast<std::uint32_t>(
                            top ? largestOfWidth(valueSizeWidth) : largestOfWidth(valueSizeWidth) & (i * 104729u));
                        r.ttlSeconds = i % 3 == 0 ? static_cast<std::uint32_t>(top
                                               ? largestOfWidth(ttlWidth)
                                               : std::max<std::uint64_t>(1, largestOfWidth(ttlWidth) & (i * 613u)))
                                                  : 0;
                        time += top ? largestOfWidth(stepWidth) : largestOfWidth(stepWidth) & (i * 7u);
                        r.timeMs = time;
                        r.op = static_cast<Op>(i % kOpCount);
                        r.kind = static_cast<ValueKind>(i % 3);
                        requests.push_back(r);
                    }
                    const std::string file = path("widths.lltrace");
                    {
                        auto writer = TraceFileWriter::create(file);
                        ASSERT_TRUE(writer);
                        ASSERT_TRUE((*writer)->write(requests));
                        ASSERT_TRUE((*writer)->finish());
                    }
                    auto reader = TraceFileReader::open(file);
                    ASSERT_TRUE(reader) << reader.error().describe();
                    EXPECT_EQ(readAll(**reader), requests);
                }
}

TEST_F(TraceFileTest, AbandonedWriterLeavesNoFile) {
    {
        auto writer = TraceFileWriter::create(path("gone.lltrace"));
        ASSERT_TRUE(writer);
        ASSERT_TRUE((*writer)->write(sample()));
    }
    EXPECT_FALSE(std::filesystem::exists(path("gone.lltrace")));
    EXPECT_EQ(partialFileLeft(), "");
}

// Blocks are encoded on a thread of their own (block_encoder.h), several in flight: many blocks handed over
// in pieces of every size, some crossing blocks, come back in order.
TEST_F(TraceFileTest, ManyBlocksWrittenInPiecesOfEverySizeComeBackInOrder) {
    std::vector<Request> requests;
    for (std::uint32_t round = 0; round < 40; ++round)
        for (Request r : sample()) {
            r.keyId += round * 3001u;
            r.timeMs += round * 7500u;
            requests.push_back(r);
        }
    {
        auto writer = TraceFileWriter::create(path("pieces.lltrace"));
        ASSERT_TRUE(writer);
        std::span<const Request> left(requests);
        for (std::size_t piece = 1; !left.empty(); piece = piece * 7 % 9001) {
            const std::size_t take = std::min(piece, left.size());
            ASSERT_TRUE((*writer)->write(left.first(take)));
            left = left.subspan(take);
        }
        ASSERT_TRUE((*writer)->finish());
    }
    auto reader = TraceFileReader::open(path("pieces.lltrace"));
    ASSERT_TRUE(reader) << reader.error().describe();
    EXPECT_EQ((*reader)->keyIdLimit(), 40u * 3001u);
    EXPECT_EQ(readAll(**reader), requests);
}

// A write the encoding thread fails (a full device) comes back from a later write() or from finish().
TEST_F(TraceFileTest, AWriteFailedOnTheEncodingThreadIsReported) {
    if (!std::filesystem::exists("/dev/full"))
        GTEST_SKIP() << "this system has no /dev/full";
    auto writer = TraceFileWriter::create("/dev/full");
    ASSERT_TRUE(writer) << writer.error().describe();
    Status failed = Ok {};
    for (int i = 0; i < 200 && failed; ++i) // more than a MiB encoded: the thread writes
        failed = (*writer)->write(sample());
    if (failed)
        failed = (*writer)->finish();
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.error().describe().find("No space left"), std::string::npos) << failed.error().describe();
}

TEST_F(TraceFileTest, TruncatedFileIsRefusedAtOpen) {
    {
        auto writer = TraceFileWriter::create(path("t.lltrace"));
        ASSERT_TRUE((*writer)->write(sample()));
        ASSERT_TRUE((*writer)->finish());
    }
    const auto size = std::filesystem::file_size(path("t.lltrace"));
    std::filesystem::resize_file(path("t.lltrace"), size - 7);
    auto reader = TraceFileReader::open(path("t.lltrace"));
    ASSERT_FALSE(reader);
    EXPECT_EQ(reader.error().code, ErrorCode::Data);
    EXPECT_NE(reader.error().describe().find("truncated"), std::string::npos) << reader.error().describe();
    EXPECT_NE(reader.error().describe().find("t.lltrace"), std::string::npos);
}

TEST_F(TraceFileTest, OtherFilesAreRefusedWithTheReason) {
    std::ofstream(path("text.csv")) << "1,key,16,96\n";
    auto reader = TraceFileReader::open(path("text.csv"));
    ASSERT_FALSE(reader);
    EXPECT_NE(reader.error().describe().find("header"), std::string::npos) << reader.error().describe();
    std::ofstream(path("long.csv")) << std::string(100, 'x');
    reader = TraceFileReader::open(path("long.csv"));
    ASSERT_FALSE(reader);
    EXPECT_NE(reader.error().describe().find("not a layoutlab trace"), std::string::npos);
    reader = TraceFileReader::open(path("missing.lltrace"));
    ASSERT_FALSE(reader);
    EXPECT_EQ(reader.error().code, ErrorCode::Io);
}

TEST_F(TraceFileTest, LargeReadsDecodeBlocksInPlaceWithTheSameResult) {
    const auto requests = sample();
    {
        auto writer = TraceFileWriter::create(path("t.lltrace"));
        ASSERT_TRUE((*writer)->write(requests));
        ASSERT_TRUE((*writer)->finish());
    }
    // 10000 > one 4096-request block: blocks go straight into the caller's span, the tail through staging.
    auto reader = TraceFileReader::open(path("t.lltrace"));
    ASSERT_TRUE(reader);
    std::vector<Request> all(10000);
    auto n = (*reader)->read(all);
    ASSERT_TRUE(n) << n.error().describe();
    all.resize(*n);
    EXPECT_EQ(all, requests);
}

// Recomputes every block's checksum and the trailer's, as a writer would have (format version 3).
void resealChecksums(const std::string& file) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto u32 = [&bytes](std::size_t at) {
        std::uint32_t v = 0;
        std::memcpy(&v, bytes.data() + at, 4);
        return v;
    };
    const std::size_t trailerAt = bytes.size() - 40;
    for (std::size_t at = 32; at + 32 <= trailerAt;) {
        const std::uint32_t payload = u32(at + 4);
        if (at + 32 + payload > trailerAt)
            break;
        XXH3_state_t state;
        XXH3_64bits_reset(&state);
        XXH3_64bits_update(&state, bytes.data() + at, 28);
        XXH3_64bits_update(&state, bytes.data() + at + 32, payload);
        const auto sum = static_cast<std::uint32_t>(XXH3_64bits_digest(&state));
        std::memcpy(bytes.data() + at + 28, &sum, 4);
        at += 32 + payload;
    }
    const auto sum = static_cast<std::uint32_t>(XXH3_64bits(bytes.data() + trailerAt, 32));
    std::memcpy(bytes.data() + trailerAt + 32, &sum, 4);
    f.seekp(0);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class DamagedTraceTest : public TraceFileTest {
protected:
    // Writes the sample, overwrites bytes at `offset`, and returns the error of reading it whole. With
    // `reseal`, the checksums are then made to match again: the damage is what a faulty writer would
    // have checksummed, and the decoder's own checks must find it.
    std::string damage(std::uint64_t offset, const std::string& bytes, bool reseal = true) {
        {
            auto writer = TraceFileWriter::create(path("t.lltrace"));
            EXPECT_TRUE((*writer)->write(sample()));
            EXPECT_TRUE((*writer)->finish());
        }
        {
            std::fstream f(path("t.lltrace"), std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(static_cast<std::streamoff>(offset));
            f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        }
        if (reseal)
            resealChecksums(path("t.lltrace"));
        const std::string byRequests = readError(false);
        EXPECT_EQ(readError(true), byRequests) << "read by columns, the damage must be reported alike";
        return byRequests;
    }
    // The error of reading the trace whole, by requests or by columns ("" for none).
    std::string readError(bool byColumns) {
        auto reader = TraceFileReader::open(path("t.lltrace"));
        if (!reader)
            return reader.error().describe();
        std::vector<Request> batch(16);
        std::vector<unsigned char> storage;
        while (true) {
            if (byColumns) {
                auto columns = (*reader)->readColumns(storage);
                if (!columns)
                    return columns.error().describe();
                if (!*columns)
                    return "";
                continue;
            }
            auto n = (*reader)->read(batch);
            if (!n)
                return n.error().describe();
            if (*n == 0)
                return "";
        }
    }
};

// The first block starts at 32 with a 32-byte header; its op column starts at 64.
// Every byte of a trace is covered: the header's reserved bytes must be zero, each block and the trailer
// carry a checksum. A flipped byte anywhere is an error naming an offset, never a different trace.
TEST_F(DamagedTraceTest, EveryFlippedByteIsAnErrorNamingItsOffset) {
    const auto size = [this] {
        auto writer = TraceFileWriter::create(path("t.lltrace"));
        EXPECT_TRUE((*writer)->write(sample()));
        EXPECT_TRUE((*writer)->finish());
        return std::filesystem::file_size(path("t.lltrace"));
    }();
    std::string original(size, '\0');
    {
        std::ifstream in(path("t.lltrace"), std::ios::binary);
        in.read(original.data(), static_cast<std::streamsize>(size));
    }
    for (std::uint64_t at = 0; at < size; at += 7) {
        for (const unsigned char flip : { 0x01, 0x80 }) {
            const char damaged = static_cast<char>(original[at] ^ flip);
            const auto e = damage(at, std::string(1, damaged), false);
            ASSERT_FALSE(e.empty()) << "a flip at byte " << at << " was read without error";
            EXPECT_NE(e.find("offset"), std::string::npos) << e;
        }
    }
    // A block's checksum names the block's offset.
    const auto e = damage(64 + 100, "\x07", false);
    EXPECT_NE(e.find("offset 32: damaged block (its checksum"), std::string::npos) << e;
}

TEST_F(DamagedTraceTest, ABadOpByteNamesItsRecordAndOffset) {
    // Every operation code 0-15 is one (15: rename), so a bad op byte is a kind or a bit that does not exist.
    const auto e = damage(64 + 3, std::string(1, '\x31')); // value kind 3
    EXPECT_NE(e.find("offset 67"), std::string::npos) << e;
    EXPECT_NE(e.find("record 4"), std::string::npos) << e;
}

// The op bytes are checked sixteen at a time where the host has SSE2: every bad pattern must be found
// past the first sixteen too, at the right record.
TEST_F(DamagedTraceTest, EveryBadOpByteIsFoundWhereverItIs) {
    for (const std::size_t record : { 3u, 16u, 37u }) {
        for (const char tag : { '\x3f', '\x31', '\x80' }) { // kind 3 (with op 15, and op 1), the reserved bit
            const auto e = damage(64 + record, std::string(1, tag));
            EXPECT_NE(e.find("record " + std::to_string(record + 1)), std::string::npos)
                << "tag " << int(tag) << " at " << record << ": " << e;
        }
        // A TTL flag the header does not count.
        EXPECT_NE(
            damage(64 + record, std::string(1, '\x41')).find("flag a different number of TTLs"), std::string::npos);
        // An element request the element columns do not hold.
        EXPECT_NE(damage(64 + record, std::string(1, '\x0d')).find("element requests do not match"), std::string::npos);
    }
}

TEST_F(DamagedTraceTest, AnUnknownElementOperationNamesItsRecord) {
    Request r;
    r.op = Op::Element;
    r.elementBytes = 5;
    {
        auto writer = TraceFileWriter::create(path("t.lltrace"));
        ASSERT_TRUE((*writer)->write(std::vector<Request>(3, r)));
        ASSERT_TRUE((*writer)->finish());
    }
    const auto size = std::filesystem::file_size(path("t.lltrace"));
    {
        std::fstream f(path("t.lltrace"), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(size - 40 - 2)); // the last element operation, before the trailer
        f.write("\xff\xff", 2);
    }
    resealChecksums(path("t.lltrace"));
    const std::string e = readError(false);
    EXPECT_NE(e.find("unknown element operation"), std::string::npos) << e;
    EXPECT_NE(e.find("record 3"), std::string::npos) << e;
}

TEST_F(DamagedTraceTest, DamagedBlockHeadersAreRefused) {
    EXPECT_NE(damage(32, std::string("\0\0\0\0", 4)).find("record count"), std::string::npos); // no records
    EXPECT_NE(damage(36, "\x01").find("payload size"), std::string::npos);
    EXPECT_NE(damage(40, "\x01").find("time does not continue"), std::string::npos);
    EXPECT_NE(damage(52, "\x09").find("wider than its field"), std::string::npos); // key-id column 9 bytes
    const auto otherWidth = damage(57, "\x04"); // element columns of another width
    EXPECT_NE(otherWidth.find("element requests do not match"), std::string::npos) << otherWidth;
    EXPECT_NE(damage(57, "\x05").find("wider than its field"), std::string::npos);
    EXPECT_NE(damage(59, "\x01").find("reserved"), std::string::npos);
}

TEST_F(DamagedTraceTest, KeyIdsBeyondTheTrailersLimitAreRefused) {
    // The sample's ids are below 3001: a key-id limit of 5 in the trailer makes the first block's ids
    // out of range, where a replay would index past its key arrays.
    std::string limit(8, '\0');
    limit[0] = 5;
    const auto size = [this] {
        auto writer = TraceFileWriter::create(path("t.lltrace"));
        EXPECT_TRUE((*writer)->write(sample()));
        EXPECT_TRUE((*writer)->finish());
        return std::filesystem::file_size(path("t.lltrace"));
    }();
    const auto e = damage(size - 40 + 16, limit);
    EXPECT_NE(e.find("key id beyond"), std::string::npos) << e;
    // A limit of 0 leaves no id in range.
    const auto zero = damage(size - 40 + 16, std::string(8, '\0'));
    EXPECT_NE(zero.find("key id beyond"), std::string::npos) << zero;
    EXPECT_NE(zero.find("record 1"), std::string::npos) << zero;
}

// A request flagged with a TTL must carry one: 0 means none and is never written.
TEST_F(DamagedTraceTest, AFlaggedTtlOfZeroIsRefused) {
    EXPECT_EQ(damage(0, "L"), ""); // the sample is sound
    // The first block's TTL column follows its op, key-id, key-size and value-size columns; its first
    // TTL is request 1's (the sample's every fifth request has one).
    unsigned char header[32];
    std::ifstream(path("t.lltrace"), std::ios::binary).seekg(32).read(reinterpret_cast<char*>(header), 32);
    const std::uint32_t records = header[0] | header[1] << 8 | header[2] << 16 | header[3] << 24;
    const std::uint64_t ttlColumn = 64 + std::uint64_t { records } * (1 + header[20] + header[21] + header[22]);
    const auto e = damage(ttlColumn, std::string(header[23], '\0'));
    EXPECT_NE(e.find("(a TTL of 0 seconds is flagged): record 1"), std::string::npos) << e;
}

TEST_F(TraceFileTest, Version1TracesAreStillRead) {
    // Three version-1 records (tag, zigzag key-id delta, key bytes, value bytes, [TTL], [time delta]).
    const unsigned char records[] = {
        0x01, 0x0a, 16, 0x80, 0x01, // set key 5, 16-byte key, 128-byte value
        0xc1, 0x05, 20, 7, 60, 3, // set key 2 (delta -3), TTL 60 s, 3 ms later
        0x10, 0x06, 16, 0, // get key 5, integer kind
    };
    std::string file("LLTRACE\0", 8);
    file += std::string("\x01\0\0\0", 4) + std::string(20, '\0');
    file.append(reinterpret_cast<const char*>(records), sizeof records);
    file += std::string("LLTREND\0", 8);
    for (const std::uint64_t v : { std::uint64_t { 3 }, std::uint64_t { 6 }, std::uint64_t { sizeof records } })
        for (int i = 0; i < 8; ++i)
            file.push_back(static_cast<char>(v >> (8 * i)));
    std::ofstream(path("v1.lltrace"), std::ios::binary) << file;
    auto reader = TraceFileReader::open(path("v1.lltrace"));
    ASSERT_TRUE(reader) << reader.error().describe();
    const auto all = readAll(**reader);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].op, Op::Set);
    EXPECT_EQ(all[0].keyId, 5u);
    EXPECT_EQ(all[0].valueBytes, 128u);
    EXPECT_EQ(all[1].keyId, 2u);
    EXPECT_EQ(all[1].ttlSeconds, 60u);
    EXPECT_EQ(all[1].timeMs, 3u);
    EXPECT_EQ(all[2].op, Op::Get);
    EXPECT_EQ(all[2].kind, ValueKind::Integer);
    EXPECT_EQ(all[2].keyId, 5u);
}

} // namespace
