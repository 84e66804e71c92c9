// SPDX-License-Identifier: MIT
// RDB files read directly (format "rdb"): every string encoding, every opcode and value type of RDB 1-11 and
// 80 parsed to its end, expiries, databases, and damage of every kind reported with its offset. The files
// here are written byte by byte from rdb.c's grammar; the integration test (rdb_snapshot_test) reads what
// real servers save.

#include "layoutlab/import/importer.h"
#include "layoutlab/layout/layout_registry.h"
#include "rdb_writer.h"
#include "seen_key_hashes.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <variant>

using namespace layoutlab;
using namespace layoutlab::test;

namespace {

TEST(RdbCrc64, MatchesRedisCheckValue) {
    // crc64.c's own test: crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca, and the same in pieces.
    const std::string text = "123456789";
    RdbCrc64 whole;
    whole.update(reinterpret_cast<const unsigned char*>(text.data()), text.size());
    EXPECT_EQ(whole.value(), 0xe9c6d914c4b8d9caULL);
    RdbCrc64 pieces;
    pieces.update(reinterpret_cast<const unsigned char*>(text.data()), 2);
    pieces.update(reinterpret_cast<const unsigned char*>(text.data()) + 2, 7);
    EXPECT_EQ(pieces.value(), whole.value());
    // A buffer longer than ISA-L's folding blocks, in uneven pieces, against the bit-by-bit definition.
    std::vector<unsigned char> bytes(100'003);
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<unsigned char>(i * 131 + (i >> 7));
    std::uint64_t expected = 0;
    for (const unsigned char b : bytes) {
        expected ^= b;
        for (int k = 0; k < 8; ++k)
            expected = (expected & 1) ? (expected >> 1) ^ 0x95ac9329ac4bc9b5ULL : expected >> 1;
    }
    RdbCrc64 uneven;
    for (std::size_t at = 0, step = 1; at < bytes.size(); at += step, step = step * 3 % 4099 + 1)
        uneven.update(bytes.data() + at, std::min(step, bytes.size() - at));
    EXPECT_EQ(uneven.value(), expected);
}

TEST(SeenKeyHashes, EachHashIsNewOnceWhetherTheSetWasSizedOrGrew) {
    for (const std::uint64_t hinted : { std::uint64_t { 0 }, std::uint64_t { 50'000 } }) {
        SCOPED_TRACE(hinted);
        SeenKeyHashes seen;
        seen.reserve(hinted);
        for (std::uint64_t i = 0; i < 50'000; ++i) // growing from 1,024 slots when not sized
            ASSERT_TRUE(seen.insert(KeyInterner::finalize(i + 1))); // finalize(0) is 0
        EXPECT_TRUE(seen.insert(0)); // kept as 1: an empty slot is 0
        EXPECT_FALSE(seen.insert(0));
        for (std::uint64_t i = 0; i < 50'000; i += 7)
            EXPECT_FALSE(seen.insert(KeyInterner::finalize(i + 1)));
        EXPECT_EQ(seen.size(), 50'001u);
    }
    for (const std::uint64_t keys : { 3, 1'000'000, 1'000'001, 1'000'002 }) { // the hint is enough
        SeenKeyHashes seen;
        seen.reserve(keys);
        const std::size_t slots = seen.slotCount();
        for (std::uint64_t i = 0; i < keys; ++i)
            seen.insert(KeyInterner::finalize(i + 1));
        EXPECT_EQ(seen.slotCount(), slots) << keys;
    }
}

TEST_F(RdbImporterTest, EveryStringEncodingGivesTheLengthAndKindTheServerHolds) {
    RdbWriter w;
    w.aux("redis-ver", "7.2.6").aux("ctime", "1700000000").u8(254).len(0).u8(251).len(9).len(0);
    w.setString("plain", "hello");
    w.setString("digits", "12345678901"); // text that string2l takes: an integer of 11 digits
    w.setString("zero-led", "0123"); // not canonical: bytes
    w.setString("minus-zero", "-0"); // string2ll refuses "-0"
    w.u8(0).str("i8").intStr(1, -5); // "-5"
    w.u8(0).str("i16").intStr(2, 300); // "300": shared integer range
    w.u8(0).str("i32").intStr(4, 70000); // "70000"
    w.u8(0).str("lzf").lzf(9, 100);
    w.u8(0).str("len14").str(std::string(200, 'v'));
    w.u8(0).str("len32").str(std::string(70000, 'w'));
    w.u8(0).intStr(2, 4242).str("an integer key");
    w.u8(0).lzf(12, 64, 'k').str("an LZF key");
    auto got = import(w.finish());
    ASSERT_FALSE(got.error) << got.error->describe();
    ASSERT_EQ(got.requests.size(), 13u);
    // The file's RESIZEDB first: the tables sized for its 9 keys, none with an expire (rdb.c dbExpand).
    EXPECT_EQ(got.requests.front().op, Op::Resize);
    EXPECT_EQ(got.requests.front().valueBytes, 9u);
    EXPECT_EQ(got.requests.front().ttlSeconds, 0u);
    got.requests.erase(got.requests.begin());
    struct Want {
        std::uint32_t keyBytes, valueBytes;
        ValueKind kind;
    };
    const Want want[] = { { 5, 5, ValueKind::String }, { 6, 11, ValueKind::Integer }, { 8, 4, ValueKind::String },
        { 10, 2, ValueKind::String }, { 2, 2, ValueKind::Integer }, { 3, 3, ValueKind::SmallInteger },
        { 3, 5, ValueKind::Integer }, { 3, 100, ValueKind::String }, { 5, 200, ValueKind::String },
        { 5, 70000, ValueKind::String }, { 4, 14, ValueKind::String }, { 64, 10, ValueKind::String } };
    for (std::size_t i = 0; i < got.requests.size(); ++i) {
        SCOPED_TRACE(i);
        const Request& r = got.requests[i];
        EXPECT_EQ(r.op, Op::Set);
        EXPECT_EQ(r.keyId, i);
        EXPECT_EQ(r.keyBytes, want[i].keyBytes);
        EXPECT_EQ(r.valueBytes, want[i].valueBytes);
        EXPECT_EQ(r.kind, want[i].kind);
        EXPECT_EQ(r.ttlSeconds, 0u);
        EXPECT_EQ(r.timeMs, 0u);
    }
    EXPECT_EQ(got.rejects.total, 0u);
}

TEST_F(RdbImporterTest, ExpiriesKeepATtlAndKeysExpiredWhenSavedAreLeftOut) {
    const std::int64_t savedMs = 1700000000000;
    RdbWriter w;
    w.aux("ctime", "1700000000");
    w.expireMs(savedMs + 60000).setString("later", "v"); // RDB_OPCODE_EXPIRETIME_MS
    w.expireMs(savedMs - 1).setString("gone", "v");
    w.u8(253).le(1700000100, 4).setString("seconds", "v"); // RDB_OPCODE_EXPIRETIME, RDB < 3
    w.u8(248).len(12345).u8(249).u8(7).setString("idle-freq", "v"); // IDLE and FREQ belong to the key
    w.setString("none", "v"); // the expire above was its key's only
    const auto got = import(w.finish());
    ASSERT_FALSE(got.error) << got.error->describe();
    ASSERT_EQ(got.requests.size(), 4u);
    EXPECT_GT(got.requests[0].ttlSeconds, 0u);
    EXPECT_GT(got.requests[1].ttlSeconds, 0u);
    EXPECT_EQ(got.requests[2].ttlSeconds, 0u);
    EXPECT_EQ(got.requests[3].ttlSeconds, 0u);
    EXPECT_EQ(got.rejects.skipped.at("expired when the file was saved"), 1u);
}

TEST_F(RdbImporterTest, TypesNotModelledAreParsedToTheirEndAndCounted) {
    RdbWriter w("VALKEY080");
    w.u8(247).len(0x1234567890ULL << 10).len(2).len(2); // MODULE_AUX: id, when-opcode, when, then its value:
    w.len(1).len(7).len(3).le(0, 4).len(4).le(0, 8).len(5).str("m").len(0); // sint, float, double, string, EOF
    w.u8(245).str("#!lua name=lib\n"); // FUNCTION2
    w.u8(244).len(1).len(2).len(3); // SLOT_INFO
    w.u8(243).str("job").len(1).len(0).len(100); // SLOT_IMPORT
    w.setString("first", "1");
    w.u8(1).str("list").len(2).str("a").intStr(1, 3); // linked list (RDB < 8)
    w.u8(9).str("zipmap").str("zm");
    w.u8(10).str("ziplist").str("zl");
    w.u8(12).str("zset-zl").str("zz");
    w.u8(13).str("hash-zl").str("hz");
    w.u8(14).str("quicklist").len(2).str("n1").lzf(4, 40);
    w.u8(22).str("hash2").len(2).str("f").str("v").le(0, 8).str("g").str("w").le(5, 8);
    // A stream of RDB_TYPE_STREAM_LISTPACKS_3: a node, its IDs and counters, a group with one pending
    // entry and one consumer owning it.
    w.u8(21).str("stream").len(1).str(std::string(16, 'i')).str("lp");
    w.len(1).len(2).len(3).len(4).len(5).len(6).len(7).len(8);
    w.len(1).str("group").len(1).len(2).len(3).len(1).u8(0).le(0, 15).le(0, 8).len(1);
    w.len(1).str("consumer").le(0, 8).le(0, 8).len(1).le(0, 16);
    w.setString("last", "2");
    const auto got = import(w.finish());
    ASSERT_FALSE(got.error) << got.error->describe();
    ASSERT_EQ(got.requests.size(), 2u);
    EXPECT_EQ(got.requests[1].keyBytes, 4u); // "last": found after every other type
    const auto& skipped = got.rejects.notModelled;
    EXPECT_EQ(skipped.at("list (linked list)"), 1u);
    EXPECT_EQ(skipped.at("hash (hashtable, field expiries)"), 1u);
    EXPECT_EQ(skipped.at("list (quicklist of ziplists)"), 1u);
    EXPECT_EQ(skipped.at("hash (zipmap)"), 1u);
    EXPECT_EQ(skipped.at("stream"), 1u);
    std::uint64_t total = 0;
    for (const auto& [reason, count] : skipped)
        total += count;
    EXPECT_EQ(total, 8u);
}

// A name in two databases is two keys, each of another database than 0 placed in its tables before its SET, and
// each database's tables sized by its own RESIZEDB (rdb.c: SELECTDB, then RESIZEDB -> dbExpand of that database).
TEST_F(RdbImporterTest, KeysOfDifferentDatabasesAreDifferentKeys) {
    RdbWriter w("REDIS0009");
    w.u8(251).len(1).len(0).setString("k", "v");
    w.u8(254).len(2).u8(251).len(2).len(1).setString("k", "vv").setString("other", "v");
    const auto got = import(w.finish());
    ASSERT_FALSE(got.error) << got.error->describe();
    const auto& r = got.requests;
    ASSERT_EQ(r.size(), 7u);
    EXPECT_EQ(r[0].op, Op::Resize); // database 0's tables: one key
    EXPECT_EQ(r[0].valueBytes, 1u);
    EXPECT_EQ(r[1].op, Op::Set);
    EXPECT_EQ(r[2].op, Op::Resize); // database 2's k placed there, then its tables sized: two keys, one expire
    EXPECT_EQ(r[2].valueBytes, kKeyDatabase);
    EXPECT_EQ(r[2].ttlSeconds, 2u);
    EXPECT_EQ(r[3].op, Op::Resize);
    EXPECT_EQ(r[3].valueBytes, 2u);
    EXPECT_EQ(r[3].ttlSeconds, 1u);
    EXPECT_EQ(r[3].keyId, r[2].keyId);
    EXPECT_EQ(r[4].op, Op::Set);
    EXPECT_EQ(r[4].keyId, r[2].keyId);
    EXPECT_NE(r[4].keyId, r[1].keyId);
    EXPECT_EQ(r[5].valueBytes, kKeyDatabase); // other, placed in database 2 too
    EXPECT_EQ(r[6].keyId, r[5].keyId);
}

TEST_F(RdbImporterTest, ARESIZEDBBeyondTheFileReservesNothingForIt) {
    // A damaged size hint (2^30 keys in a file of a few bytes) sizes the key table by the file instead:
    // taken as it is, it would ask for 2^31 slots, 32 GiB wherever the key table cannot reserve address
    // space and lives on the heap.
    RdbWriter w;
    w.u8(251).len(std::uint64_t { 1 } << 30).len(5).setString("k", "v").setString("j", "w");
    const auto got = import(w.finish());
    ASSERT_FALSE(got.error) << got.error->describe();
    ASSERT_EQ(got.requests.size(), 3u);
    EXPECT_EQ(got.requests[0].op, Op::Resize); // the tables likewise: for as many keys as the file can hold
    EXPECT_LE(got.requests[0].valueBytes, w.bytes().size() / 3);
    EXPECT_LE(got.requests[0].ttlSeconds, got.requests[0].valueBytes);
}

TEST_F(RdbImporterTest, IsDetectedFromItsSignature) {
    RdbWriter w("REDIS0011");
    auto path = write(w.setString("a", "b").finish());
    EXPECT_EQ(*traceFormat(path, {}), "rdb");
    auto valkey = write(RdbWriter("VALKEY080").finish(), "v.rdb");
    EXPECT_EQ(*traceFormat(valkey, {}), "rdb");
}

TEST_F(RdbImporterTest, EveryCutOfAFileIsAnErrorWithItsOffset) {
    RdbWriter w;
    w.aux("ctime", "1700000000").u8(254).len(0).expireMs(1800000000000).setString("key", "value");
    w.u8(0).str("lzf").lzf(9, 100).u8(18).str("q").len(1).len(2).str(listpack({ "a", 7 }));
    const std::string whole = w.finish();
    ASSERT_FALSE(import(whole).error);
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
        SCOPED_TRACE(cut);
        const auto got = import(whole.substr(0, cut), OnError::Skip, "rdb");
        ASSERT_TRUE(got.error);
        if (cut >= 9) {
            EXPECT_TRUE(got.error->hasOffset);
            EXPECT_NE(got.error->message.find("truncated"), std::string::npos) << got.error->message;
        }
    }
}

TEST_F(RdbImporterTest, AFileOfManyBuffersIsSummedWholeAsideOrNot) {
    // 3,000 values of 1 KiB: three of the parser's 1 MiB buffers, summed on a second thread where reading
    // may take one (ImportOptions::decodeAhead) and here otherwise; a byte changed in the second is found.
    RdbWriter w;
    for (int i = 0; i < 3000; ++i)
        w.setString(fmt::format("key:{}", i), std::string(1024, static_cast<char>('a' + i % 26)));
    std::string file = w.finish();
    for (const bool aside : { true, false }) {
        SCOPED_TRACE(aside);
        ImportOptions options { "rdb", OnError::Fail, 16 };
        options.decodeAhead = aside;
        auto read = [&](const std::string& content) -> std::optional<Error> {
            auto importer = openImporter(write(content), options);
            if (!importer)
                return importer.error();
            std::vector<Request> batch(500);
            for (;;) {
                auto n = (*importer)->read(batch);
                if (!n)
                    return n.error();
                if (*n == 0)
                    return std::nullopt;
            }
        };
        EXPECT_FALSE(read(file));
        std::string changed = file;
        changed[1500000] ^= 1;
        const auto error = read(changed);
        ASSERT_TRUE(error);
        EXPECT_NE(error->message.find("checksum does not match"), std::string::npos) << error->message;
    }
}

TEST_F(RdbImporterTest, ABadChecksumIsAnErrorAndNoChecksumIsAccepted) {
    RdbWriter w;
    std::string file = w.setString("k", "v").finish();
    file[file.size() - 10] = 'x'; // the value's byte: the sum no longer matches
    const auto got = import(file);
    ASSERT_TRUE(got.error);
    EXPECT_NE(got.error->message.find("checksum does not match"), std::string::npos) << got.error->message;
    RdbWriter unsummed;
    const auto none = import(unsummed.setString("k", "v").finish(false));
    EXPECT_FALSE(none.error);
    EXPECT_EQ(none.requests.size(), 1u);
}

TEST_F(RdbImporterTest, FilesItCannotReadSaySoInOneLine) {
    struct Case {
        std::string file;
        std::string says;
    };
    const Case cases[] = {
        { RdbWriter("REDIS0012").finish(), "Redis 7.4" }, { RdbWriter("VALKEY081").finish(), "newer" },
        { RdbWriter("VALKEY011").finish(), "does not go with" },
        { RdbWriter().u8(7).str("k").len(0x1234567890ULL << 10 | 3).finish(), "module type" },
        { RdbWriter().u8(22).str("k").finish(), "newer Redis" },
        { RdbWriter().u8(30).str("k").finish(), "type or opcode 30" },
        { RdbWriter("VALKEY080").u8(30).str("k").finish(), "unknown value type 30" },
        { RdbWriter().u8(246).finish(), "release candidates" },
        { RdbWriter().u8(0).str("k").u8(0xc4).finish(), "unknown string encoding 4" },
        { RdbWriter().u8(0).str("k").u8(0x82).finish(), "unknown length encoding 0x82" },
        { RdbWriter().u8(18).str("q").len(1).len(3).str("x").finish(), "container is 3" },
        { RdbWriter().u8(0).str("k").lzf(0, 0).finish(), "LZF string of 0 bytes" },
        { RdbWriter().u8(16).str("h").lzf(0, 40).finish(), "40 bytes compressed to 0" }, // a listpack's blob
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.says);
        const auto got = import(c.file, OnError::Skip, "rdb");
        ASSERT_TRUE(got.error);
        EXPECT_NE(got.error->describe().find(c.says), std::string::npos) << got.error->describe();
        EXPECT_EQ(got.error->describe().find('\n'), std::string::npos);
    }
    const auto notRdb = import("REDIS0abc plus more bytes", OnError::Fail, "rdb");
    ASSERT_TRUE(notRdb.error);
    EXPECT_NE(notRdb.error->message.find("not an RDB file"), std::string::npos);
}

TEST_F(RdbImporterTest, ADuplicateKeyIsRefusedOrSkippedAsAsked) {
    RdbWriter w;
    const std::string file = w.setString("k", "v").setString("k", "w").setString("j", "v").finish();
    const auto failed = import(file, OnError::Fail);
    ASSERT_TRUE(failed.error);
    EXPECT_NE(failed.error->message.find("appears twice"), std::string::npos);
    const auto skipped = import(file, OnError::Skip);
    ASSERT_FALSE(skipped.error);
    EXPECT_EQ(skipped.requests.size(), 2u);
    EXPECT_EQ(skipped.rejects.byReason.at("duplicate key"), 1u);
}

TEST_F(RdbImporterTest, KeysLoadedFromAFileHaveTheSmallestHeaderWhereALayoutCares) {
    // Valkey 8.0 and the 2025-01-27 tree embed a key with the header it came with: from a file, sdsnewlen's.
    EXPECT_EQ(layoutSpecForLoadedKeys("valkey-8.0:embstr-limit=44,shared-integers=yes"),
        "valkey-8.0:embstr-limit=44,shared-integers=yes,key-header=smallest");
    EXPECT_EQ(layoutSpecForLoadedKeys("valkey-8.0"), "valkey-8.0:key-header=smallest");
    EXPECT_EQ(
        layoutSpecForLoadedKeys("valkey:threshold=64,key-header=as-sent"), "valkey:threshold=64,key-header=smallest");
    EXPECT_EQ(layoutSpecForLoadedKeys("redis-7.0:embstr-limit=44"), "redis-7.0:embstr-limit=44");
    auto parsed = parseLayoutAndAllocator("valkey-8.0:key-header=smallest", "");
    ASSERT_TRUE(parsed) << parsed.error().describe();
    EXPECT_EQ(layoutSpecForLoadedKeys((*parsed).layout->spec()), (*parsed).layout->spec());
}

} // namespace
