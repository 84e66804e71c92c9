// SPDX-License-Identifier: MIT
// RDB files' hashes, sets, sorted sets and lists read element by element (format "rdb"): each encoding Redis
// 7.0 to Valkey 9 write (tables, listpacks, intsets, quicklist nodes packed and plain), LZF-compressed
// blobs, a collection's TTL, empty collections, and damaged blobs reported with their offset. The
// integration test (collection_trace_test) holds loaded collections to real servers' memory.

#include "rdb_writer.h"

using namespace layoutlab;
using namespace layoutlab::test;

namespace {

// What an element request says, for comparing: its action, its element's and value's lengths and classes.
struct ElementSeen {
    ElementAction action;
    CollectionKind collection;
    std::uint32_t elementBytes;
    IntegerClass element;
    std::uint32_t valueBytes;
    IntegerClass value;
    bool compact;
    std::uint32_t priorBytes;
    bool operator==(const ElementSeen&) const = default;
};
std::ostream& operator<<(std::ostream& os, const ElementSeen& e) {
    return os << elementActionName(e.action) << " " << collectionKindName(e.collection) << " " << e.elementBytes << "/"
              << static_cast<int>(e.element) << " " << e.valueBytes << "/" << static_cast<int>(e.value)
              << (e.compact ? " compact" : "") << " prior " << e.priorBytes;
}
ElementSeen seen(const Request& r) {
    const ElementOp op = r.elementOp();
    return { op.action, op.collection, r.elementBytes, op.element, r.valueBytes, op.value, op.atHead, r.priorBytes() };
}
constexpr auto kAdd = ElementAction::Add;
constexpr auto kLoad = ElementAction::Load;
constexpr auto kNone = IntegerClass::None;

TEST_F(RdbImporterTest, CollectionsComeAsALoadAndTheirElementsAsTheServerHoldsThem) {
    RdbWriter w("VALKEY080");
    w.u8(16).str("hash-lp").str(listpack({ "f", "value", "n", 12 })); // RDB_TYPE_HASH_LISTPACK
    w.u8(4).str("hash").len(2).str("field").intStr(2, -300).str(std::string(30, 'v')).lzf(5, 40);
    w.u8(11).str("intset").str(intset(4, { 1, 70000 })); // RDB_TYPE_SET_INTSET of 4-byte members
    w.u8(20).str("set-lp").str(listpack({ "m", -5000 }));
    w.u8(2).str("set").len(2).str("12").str("x");
    w.u8(17).str("zset-lp").str(listpack({ "a", 3, "b", "1.5" }));
    w.u8(5).str("zset").len(2).str("m").le(0x3ff8000000000000ULL, 8).str("n").le(0x4000000000000000ULL, 8); // 1.5, 2
    w.u8(18).str("list").len(3).len(2).str(listpack({ "x", 100000 })).len(2).str(listpack({})).len(1).str("plain!");
    w.setString("string", "v");
    const auto got = import(w.finish());
    ASSERT_FALSE(got.error) << got.error->describe();
    std::vector<ElementSeen> elements;
    for (const Request& r : got.requests)
        if (r.op == Op::Element)
            elements.push_back(seen(r));
    using C = CollectionKind;
    using I = IntegerClass;
    const std::vector<ElementSeen> expected {
        { kLoad, C::Hash, 0, kNone, 2, kNone, true, 0 },
        { kAdd, C::Hash, 1, kNone, 5, kNone, false, 0 },
        { kAdd, C::Hash, 1, kNone, 2, I::Uint7, false, 0 },
        { kLoad, C::Hash, 0, kNone, 2, kNone, false, 0 },
        { kAdd, C::Hash, 5, kNone, 4, I::Int13, false, 0 },
        { kAdd, C::Hash, 30, kNone, 40, kNone, false, 0 },
        { kLoad, C::Set, 0, I::Int32, 2, kNone, true, 0 },
        { kAdd, C::Set, 1, I::Uint7, 0, kNone, false, 0 },
        { kAdd, C::Set, 5, I::Int24, 0, kNone, false, 0 },
        { kLoad, C::Set, 0, kNone, 2, kNone, true, 0 },
        { kAdd, C::Set, 1, kNone, 0, kNone, false, 0 },
        { kAdd, C::Set, 5, I::Int16, 0, kNone, false, 0 },
        { kLoad, C::Set, 0, kNone, 2, kNone, false, 0 },
        { kAdd, C::Set, 2, I::Uint7, 0, kNone, false, 0 },
        { kAdd, C::Set, 1, kNone, 0, kNone, false, 0 },
        { kLoad, C::SortedSet, 0, kNone, 2, kNone, true, 0 },
        { kAdd, C::SortedSet, 1, kNone, 1, I::Uint7, false, 0 },
        { kAdd, C::SortedSet, 1, kNone, 3, kNone, false, 0 },
        { kLoad, C::SortedSet, 0, kNone, 2, kNone, false, 0 },
        { kAdd, C::SortedSet, 1, kNone, 3, kNone, false, 0 }, // d2string: "1.5"
        { kAdd, C::SortedSet, 1, kNone, 1, I::Uint7, false, 0 }, // "2"
        { kLoad, C::List, 0, kNone, 2, kNone, false, 2 }, // a node, two after it (one empty, passed over)
        { kAdd, C::List, 1, kNone, 0, kNone, false, 0 },
        { kAdd, C::List, 6, I::Int24, 0, kNone, false, 0 },
        { kLoad, C::List, 0, kNone, 1, kNone, false, 0 }, // the plain node: its one element
        { kAdd, C::List, 6, kNone, 0, kNone, false, 0 },
    };
    EXPECT_EQ(elements, expected);
    EXPECT_EQ(got.requests.back().op, Op::Set);
    EXPECT_EQ(got.rejects.total, 0u);
    EXPECT_TRUE(got.rejects.notModelled.empty());
}

TEST_F(RdbImporterTest, ACompressedListpackIsDecompressedAndACollectionsTtlFollowsItsElements) {
    RdbWriter w;
    w.aux("ctime", "1700000000");
    const std::string lp = listpack({ std::string(40, 'f'), std::string(70, 'v'), "g", 5 });
    w.expireMs(1800000000000).u8(16).str("h").u8(0xc3).len(lzfLiterals(lp).size()).len(lp.size()).raw(lzfLiterals(lp));
    w.expireMs(1600000000000).u8(4).str("gone").len(1).str("f").str("v"); // expired when saved: left out
    w.u8(4).str("empty").len(0); // the server skips an empty collection (emptykey)
    w.setString("after", "1");
    const auto got = import(w.finish());
    ASSERT_FALSE(got.error) << got.error->describe();
    ASSERT_EQ(got.requests.size(), 5u);
    EXPECT_EQ(seen(got.requests[1]), (ElementSeen { kAdd, CollectionKind::Hash, 40, kNone, 70, kNone, false, 0 }));
    EXPECT_EQ(got.requests[3].op, Op::Expire);
    EXPECT_EQ(got.requests[3].keyId, got.requests[0].keyId);
    EXPECT_EQ(got.requests[3].ttlSeconds, 10u * 365 * 86400); // import_formats.h kSnapshotTtlSeconds
    EXPECT_EQ(got.requests[4].op, Op::Set);
    EXPECT_EQ(got.rejects.skipped.at("expired when the file was saved"), 1u);
    EXPECT_EQ(got.rejects.skipped.at("empty collection"), 1u);
}

TEST_F(RdbImporterTest, ADamagedListpackOrIntsetIsAnErrorWithItsOffset) {
    const std::string good = listpack({ "a", 1 });
    std::string badTotal = good;
    badTotal[0] = static_cast<char>(good.size() + 1);
    std::string badEncoding = good;
    badEncoding[6] = static_cast<char>(0xF6);
    std::string noEnd = good;
    noEnd.back() = 'x';
    for (const auto& [blob, says] : std::vector<std::pair<std::string, std::string>> { { badTotal, "header says" },
             { badEncoding, "unknown encoding" }, { noEnd, "runs past" }, { listpack({ "odd" }), "not in pairs" } }) {
        SCOPED_TRACE(says);
        RdbWriter w;
        w.setString("first", "1").u8(16).str("h").str(blob);
        const auto got = import(w.finish());
        ASSERT_TRUE(got.error);
        EXPECT_TRUE(got.error->hasOffset);
        EXPECT_NE(got.error->message.find(says), std::string::npos) << got.error->message;
        EXPECT_NE(got.error->message.find("hash (listpack)"), std::string::npos) << got.error->message;
    }
    RdbWriter w;
    w.u8(11).str("s").str(intset(3, { 1 }));
    const auto got = import(w.finish());
    ASSERT_TRUE(got.error);
    EXPECT_NE(got.error->message.find("3-byte members"), std::string::npos) << got.error->message;
    RdbWriter lzf;
    lzf.u8(16)
        .str("h")
        .u8(0xc3)
        .len(3)
        .len(good.size())
        .raw("\x01"
             "ab"); // decompresses to 2 bytes, not 13
    const auto short_ = import(lzf.finish());
    ASSERT_TRUE(short_.error);
    EXPECT_NE(short_.error->message.find("does not decompress"), std::string::npos) << short_.error->message;
}

// Where a second thread may take part (ImportOptions::decodeAhead: the checksum summed aside, the trace
// written aside), a file of collections of thousands of elements, keys expired when saved and a duplicate key
// (whose elements are passed over), and cuts of it anywhere, give what one thread gives: the same requests,
// rejects and errors.
TEST_F(RdbImporterTest, ReadAheadOnASecondThreadGivesWhatOneThreadGives) {
    RdbWriter w;
    w.aux("ctime", "1700000000").u8(254).len(0);
    for (int k = 0; k < 1000; ++k) {
        const std::string key = "k" + std::to_string(k);
        if (k % 50 == 7)
            w.expireMs(1600000000000);
        if (k % 3 == 0) { // a hash table of 1 to 20 fields
            const int fields = 1 + k % 20;
            w.u8(4).str(key).len(static_cast<std::uint64_t>(fields));
            for (int f = 0; f < fields; ++f)
                w.str("f" + std::to_string(f)).str(std::string(static_cast<std::size_t>(1 + (k + f) % 70), 'v'));
        } else if (k % 3 == 1) { // a listpack set of 1 to 40 members, words and integers
            std::vector<std::variant<std::string, std::int64_t>> members;
            for (int m = 0; m <= k % 40; ++m)
                members.push_back(m % 2 ? std::variant<std::string, std::int64_t>(std::string(1 + m % 9, 'm'))
                                        : std::variant<std::string, std::int64_t>(std::int64_t { k * 100 + m }));
            w.u8(20).str(key).str(listpack(members));
        } else {
            w.setString(key, std::string(static_cast<std::size_t>(k % 90), 's'));
        }
    }
    w.u8(4).str("k0").len(2).str("a").str("b").str("c").str("d"); // a duplicate: refused, its elements passed over
    w.setString("last", "1");
    const std::string whole = w.finish();
    const auto one = import(whole, OnError::Skip, "", false);
    const auto two = import(whole, OnError::Skip, "", true);
    ASSERT_FALSE(one.error) << one.error->describe();
    ASSERT_FALSE(two.error) << two.error->describe();
    EXPECT_GT(one.requests.size(), 8000u);
    EXPECT_EQ(one.requests, two.requests);
    EXPECT_EQ(one.rejects.total, 1u);
    EXPECT_EQ(two.rejects.total, one.rejects.total);
    EXPECT_EQ(two.rejects.skipped, one.rejects.skipped);
    for (std::size_t cut = 9; cut < whole.size(); cut += 997) {
        SCOPED_TRACE(cut);
        const auto cutOne = import(whole.substr(0, cut), OnError::Skip, "rdb", false);
        const auto cutTwo = import(whole.substr(0, cut), OnError::Skip, "rdb", true);
        ASSERT_TRUE(cutOne.error);
        ASSERT_TRUE(cutTwo.error);
        EXPECT_EQ(cutTwo.error->describe(), cutOne.error->describe());
        EXPECT_EQ(cutTwo.requests, cutOne.requests);
    }
}

} // namespace
