// SPDX-License-Identifier: MIT
// Importers on bad input: every kind of damage gets a clean error naming the file and line (or byte
// offset) and field under --on-error=fail, is counted by reason under skip, and never crashes or hangs.

#include "layoutlab/import/import_stats.h"
#include "layoutlab/import/importer.h"
#include "scratch_dir.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

using namespace layoutlab;

namespace {

class ImporterTest : public ScratchDirTest {
protected:
    std::string write(const std::string& name, const std::string& content) {
        const auto p = (m_dir / name).string();
        std::ofstream(p, std::ios::binary) << content;
        return p;
    }

    // Reads everything; returns the error, if any, and the requests read.
    static std::pair<std::optional<Error>, std::vector<Request>> drain(TraceReader& reader) {
        std::vector<Request> all, batch(64);
        for (int guard = 0; guard < 100000; ++guard) {
            auto n = reader.read(batch);
            if (!n)
                return { n.error(), all };
            if (*n == 0)
                return { std::nullopt, all };
            all.insert(all.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*n));
        }
        ADD_FAILURE() << "importer did not finish";
        return { std::nullopt, all };
    }
};

TEST_F(ImporterTest, TwitterKeysWithCommasAndMissSizes) {
    const auto path = write("t.csv", "10,a,b,c,5,100,1,set,60\n11,a,b,c,5,0,1,get,0\n12,x,3,7,2,gets,0\n");
    auto importer = openImporter(path, { "twitter", OnError::Fail, 16 });
    ASSERT_TRUE(importer) << importer.error().describe();
    auto [error, requests] = drain(**importer);
    ASSERT_FALSE(error) << error->describe();
    ASSERT_EQ(requests.size(), 3u);
    EXPECT_EQ(requests[0].keyBytes, 5u); // the original key size column, not the anonymised string
    EXPECT_EQ(requests[0].ttlSeconds, 60u);
    EXPECT_EQ(requests[1].keyId, requests[0].keyId); // "a,b,c" is one key
    EXPECT_EQ(requests[1].valueBytes, 100u); // a miss's 0 becomes the last known size
    EXPECT_EQ(requests[1].timeMs, 1000u);
    EXPECT_EQ(requests[2].op, Op::Get);
    EXPECT_NE(requests[2].keyId, requests[0].keyId);
}

TEST_F(ImporterTest, TwitterFieldsSplitAlikeAtEveryLineLength) {
    // Lines from 20 to 70 bytes: the last five fields are found 32 bytes at a time on long lines and
    // byte by byte on short ones; the first comma falls inside or outside that window. Every line
    // sets a key with commas in it and reads it back.
    std::string csv;
    for (int pad = 0; pad <= 40; ++pad) {
        const std::string key = "k," + std::string(static_cast<std::size_t>(pad), 'x') + ",z";
        csv += fmt::format("{},{},{},{},7,set,{}\n", pad, key, pad + 1, 1000 + pad, pad % 3);
        csv += fmt::format("{},{},{},0,7,get,0\n", pad, key, pad + 1);
    }
    auto importer = openImporter(write("t.csv", csv), { "twitter", OnError::Fail, 16 });
    ASSERT_TRUE(importer) << importer.error().describe();
    auto [error, requests] = drain(**importer);
    ASSERT_FALSE(error) << error->describe();
    ASSERT_EQ(requests.size(), 82u);
    for (std::uint32_t pad = 0; pad <= 40; ++pad) {
        const Request& set = requests[2 * pad];
        const Request& get = requests[2 * pad + 1];
        EXPECT_EQ(set.keyId, pad);
        EXPECT_EQ(get.keyId, pad);
        EXPECT_EQ(set.keyBytes, pad + 1);
        EXPECT_EQ(set.valueBytes, 1000 + pad);
        EXPECT_EQ(get.valueBytes, 1000 + pad);
        EXPECT_EQ(set.ttlSeconds, pad % 3);
        EXPECT_EQ(get.op, Op::Get);
    }
    // Six fields on a long line: the first comma must not be taken for one of the last five.
    auto shortOfOne
        = openImporter(write("six.csv", "1,abcdefghijklmnopqr,16,100,7,set\n"), { "twitter", OnError::Fail, 16 });
    ASSERT_TRUE(shortOfOne);
    auto [sixError, none] = drain(**shortOfOne);
    ASSERT_TRUE(sixError);
    EXPECT_NE(sixError->describe().find("expected 7 comma-separated fields"), std::string::npos)
        << sixError->describe();
}

TEST_F(ImporterTest, ErrorsNameFileLineAndField) {
    struct Case {
        const char* format;
        std::string content;
        const char* mentions;
    };
    const std::vector<Case> cases {
        { "twitter", "0,k,16,1,1,set,0\n0,k,16,1,1,set\n", "line 2" },
        { "twitter", "0,k,16,-1,1,set,0\n", "value_size" },
        { "twitter", "0,k,16,5000000000,1,set,0\n", "too large" },
        { "twitter", "0,k,16,1,1,flip,0\n", "unknown operation 'flip'" },
        { "cachelib", "key,op,size\nk,GET,abc\n", "field size" },
        { "cachelib", "foo,bar\nk,GET,1\n", "header" },
        { "monitor", "1700000000.000001 [0 1.2.3.4:5] \"SET\" \"k\n", "quoted" },
        { "monitor", "1700000000.000001 [0 1.2.3.4:5] \"SET\" \"k\" \"v\" \"\\q\"\n", "quoted" },
        { "mc-metadump", "key=a exp=-1 la=1 cas=1 fetch=no cls=1 size=10 flags=0\n", "smaller than the item" },
        { "mc-watch", "ts=1.1 gid=x type=item_get key=a status=found size=1\n", "gid" },
        { "rdb-csv", "database,type,key\n", "header" },
    };
    for (const auto& c : cases) {
        const auto path = write(std::string("bad.") + c.format, c.content);
        auto importer = openImporter(path, { c.format, OnError::Fail, 16 });
        ASSERT_TRUE(importer) << c.format;
        auto [error, requests] = drain(**importer);
        ASSERT_TRUE(error) << c.format << ": " << c.content;
        EXPECT_EQ(error->code, ErrorCode::Data);
        const auto text = error->describe();
        EXPECT_NE(text.find(path), std::string::npos) << text;
        EXPECT_NE(text.find(c.mentions), std::string::npos) << c.format << ": " << text;
    }
}

TEST_F(ImporterTest, SkipCountsByReasonAndKeepsTheFirstTen) {
    std::string content;
    for (int i = 0; i < 30; ++i)
        content += i % 2 ? "0,k,16,1,1,set,0\n" : "0,k,16,x,1,set,0\n";
    const auto path = write("skip.csv", content);
    auto importer = openImporter(path, { "twitter", OnError::Skip, 16 });
    ASSERT_TRUE(importer);
    auto [error, requests] = drain(**importer);
    ASSERT_FALSE(error);
    EXPECT_EQ(requests.size(), 15u);
    EXPECT_EQ((*importer)->rejects().total, 15u);
    EXPECT_EQ((*importer)->rejects().byReason.at("not a number"), 15u);
    EXPECT_EQ((*importer)->rejects().examples.size(), 10u);
    EXPECT_NE((*importer)->rejects().examples[0].find("line 1"), std::string::npos);
}

TEST_F(ImporterTest, LinesLongerThanOneMiBAreRejectedNotBuffered) {
    std::string content = "0,k,16,1,1,set,0\n0," + std::string(3 << 20, 'x') + ",16,1,1,set,0\n1,k,16,2,1,set,0\n";
    const auto path = write("long.csv", content);
    auto importer = openImporter(path, { "twitter", OnError::Skip, 16 });
    ASSERT_TRUE(importer);
    auto [error, requests] = drain(**importer);
    ASSERT_FALSE(error);
    EXPECT_EQ(requests.size(), 2u);
    EXPECT_EQ((*importer)->rejects().byReason.at("line longer than 1 MiB"), 1u);
}

TEST_F(ImporterTest, OracleRecordsSplitTheSizeAndFillOnFirstAccess) {
    std::string bytes;
    auto record = [&bytes](std::uint32_t t, std::uint64_t id, std::uint32_t size) {
        for (int i = 0; i < 4; ++i)
            bytes.push_back(static_cast<char>(t >> (8 * i)));
        for (int i = 0; i < 8; ++i)
            bytes.push_back(static_cast<char>(id >> (8 * i)));
        for (int i = 0; i < 4; ++i)
            bytes.push_back(static_cast<char>(size >> (8 * i)));
        bytes.append(8, '\xff');
    };
    record(100, 42, 116);
    record(101, 42, 116);
    record(102, 7, 0); // size 0: skipped
    record(103, 42, 216); // size changed: a new fill
    const auto path = write("o.bin", bytes + "\x01\x02\x03"); // and a truncated tail
    auto importer = openImporter(path, { "oracle", OnError::Skip, 16 });
    ASSERT_TRUE(importer);
    auto [error, requests] = drain(**importer);
    ASSERT_FALSE(error);
    ASSERT_EQ(requests.size(), 5u); // set+get, get, set+get
    EXPECT_EQ(requests[0].op, Op::Set);
    EXPECT_EQ(requests[0].keyBytes, 16u);
    EXPECT_EQ(requests[0].valueBytes, 100u);
    EXPECT_EQ(requests[2].op, Op::Get);
    EXPECT_EQ(requests[3].op, Op::Set);
    EXPECT_EQ(requests[3].valueBytes, 200u);
    EXPECT_EQ(requests[4].timeMs, 3000u);
    EXPECT_EQ((*importer)->rejects().skipped.at("zero-size record"), 1u);
    EXPECT_EQ((*importer)->rejects().byReason.at("truncated record"), 1u);
    // Without the importer's fills (a replay that fills its own misses): the reads alone, each with its size.
    ImportOptions readsOnly { "oracle", OnError::Skip, 16 };
    readsOnly.oracleFills = false;
    auto gets = openImporter(path, readsOnly);
    ASSERT_TRUE(gets);
    auto [getsError, getRequests] = drain(**gets);
    ASSERT_FALSE(getsError);
    ASSERT_EQ(getRequests.size(), 3u);
    for (const auto& r : getRequests)
        EXPECT_EQ(r.op, Op::Get);
    EXPECT_EQ(getRequests[2].valueBytes, 200u);
    auto strict = openImporter(path, { "oracle", OnError::Fail, 16 });
    auto [strictError, strictRequests] = drain(**strict);
    ASSERT_TRUE(strictError);
    EXPECT_NE(strictError->describe().find("offset 96"), std::string::npos) << strictError->describe();
}

TEST_F(ImporterTest, BinaryGarbageAndBadUtf8NeverCrash) {
    std::string garbage;
    for (int i = 0; i < 5000; ++i)
        garbage.push_back(static_cast<char>((i * 7919) & 0xff));
    const auto path = write("garbage.bin", garbage);
    auto detected = openImporter(path, {});
    if (detected) {
        auto [error, requests] = drain(**detected);
        (void)error;
    }
    for (const char* format : { "twitter", "cachelib", "oracle", "monitor", "mc-watch", "mc-metadump", "rdb-csv" }) {
        auto importer = openImporter(path, { format, OnError::Skip, 16 });
        ASSERT_TRUE(importer) << format;
        auto [error, requests] = drain(**importer);
        (void)requests;
        if (error)
            EXPECT_EQ(error->code, ErrorCode::Data) << format;
    }
    const auto utf8 = write("utf8.txt", "1700000000.000001 [0 x] \"SET\" \"\xff\xfe\xc3\x28\" \"v\"\n");
    auto monitor = openImporter(utf8, { "monitor", OnError::Fail, 16 });
    auto [error, requests] = drain(**monitor);
    ASSERT_FALSE(error);
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].keyBytes, 4u); // keys are bytes: invalid UTF-8 is just bytes
}

TEST_F(ImporterTest, TruncatedZstdIsAnErrorNamingTheOffset) {
    std::ifstream in(LAYOUTLAB_DATASETS_DIR "/samples/mixed.twitter.csv.zst", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 3000u);
    const auto path = write("cut.csv.zst", bytes.substr(0, 3000));
    auto importer = openImporter(path, { "twitter", OnError::Skip, 16 });
    ASSERT_TRUE(importer);
    auto [error, requests] = drain(**importer);
    ASSERT_TRUE(error); // even under skip: a damaged stream is not a bad line
    EXPECT_NE(error->describe().find("zstd stream ends in the middle of a frame"), std::string::npos)
        << error->describe();
    auto whole = openImporter(write("whole.csv.zst", bytes), { "twitter", OnError::Fail, 16 });
    auto [noError, all] = drain(**whole);
    ASSERT_FALSE(noError);
    EXPECT_EQ(all.size(), 2000u);
}

TEST_F(ImporterTest, DetectionAndUnknownFormats) {
    EXPECT_FALSE(openImporter(write("empty", ""), {}));
    auto unknown = openImporter(write("x.csv", "a,b\n"), { "protobuf", OnError::Fail, 16 });
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code, ErrorCode::Usage);
    auto missing = openImporter((m_dir / "nope").string(), {});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::Io);
}

TEST_F(ImporterTest, KeyInternerGivesDenseIdsByFirstAppearance) {
    KeyInterner keys;
    EXPECT_EQ(keys.idFor("a"), 0u);
    EXPECT_EQ(keys.idFor("b"), 1u);
    EXPECT_EQ(keys.idFor("a"), 0u);
    for (int i = 0; i < 100000; ++i)
        keys.idFor("key:" + std::to_string(i));
    EXPECT_EQ(keys.size(), 100002u);
    EXPECT_EQ(keys.idFor("key:99999"), 100001u);
}

} // namespace

namespace {

TEST_F(ImporterTest, WatchLinesComeOutInGidOrderWithTheirOwnSizes) {
    // The log's lines arrive out of gid order; each request keeps its own key, size and op.
    std::string log;
    const int lines = 5000; // more than the reordering window
    for (int i = 0; i < lines; ++i) {
        const int gid = (i % 2 == 0) ? i + 1 : i - 1; // pairs swapped
        log += "ts=1." + std::to_string(gid) + " gid=" + std::to_string(gid) + " type=item_store key=k"
            + std::to_string(gid) + " status=stored size=" + std::to_string(10 + gid) + " ttl=0\n";
    }
    const auto path = write("watch.log", log);
    auto importer = openImporter(path, { "mc-watch", OnError::Fail, 16 });
    ASSERT_TRUE(importer) << importer.error().describe();
    auto [error, requests] = drain(**importer);
    ASSERT_FALSE(error) << error->describe();
    ASSERT_EQ(requests.size(), static_cast<std::size_t>(lines));
    for (int gid = 0; gid < lines; ++gid) {
        ASSERT_EQ(requests[gid].valueBytes, static_cast<std::uint32_t>(10 + gid)) << gid;
        ASSERT_EQ(requests[gid].keyBytes, std::to_string(gid).size() + 1) << gid;
        ASSERT_EQ(requests[gid].keyId, static_cast<std::uint32_t>(gid)) << gid; // ids by first appearance
    }
}

} // namespace
