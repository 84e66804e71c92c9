// SPDX-License-Identifier: MIT
#include "layoutlab/trace/trace_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

class TraceFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path()
            / ("layoutlab-trace-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }
    std::string path(const std::string& name) const { return (m_dir / name).string(); }

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
            out.push_back(r);
        }
        return out;
    }

    std::filesystem::path m_dir;
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
    EXPECT_FALSE(std::filesystem::exists(path("t.lltrace.partial")));
}

TEST_F(TraceFileTest, AbandonedWriterLeavesNoFile) {
    {
        auto writer = TraceFileWriter::create(path("gone.lltrace"));
        ASSERT_TRUE(writer);
        ASSERT_TRUE((*writer)->write(sample()));
    }
    EXPECT_FALSE(std::filesystem::exists(path("gone.lltrace")));
    EXPECT_FALSE(std::filesystem::exists(path("gone.lltrace.partial")));
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

TEST_F(TraceFileTest, DamagedRecordNamesItsOffset) {
    {
        auto writer = TraceFileWriter::create(path("t.lltrace"));
        ASSERT_TRUE((*writer)->write(sample()));
        ASSERT_TRUE((*writer)->finish());
    }
    {
        std::fstream f(path("t.lltrace"), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(32); // the first record's tag
        const char bad = 0x0f; // op 15 does not exist
        f.write(&bad, 1);
    }
    auto reader = TraceFileReader::open(path("t.lltrace"));
    ASSERT_TRUE(reader);
    std::vector<Request> batch(16);
    auto n = (*reader)->read(batch);
    ASSERT_FALSE(n);
    EXPECT_NE(n.error().describe().find("offset 32"), std::string::npos) << n.error().describe();
}

} // namespace
