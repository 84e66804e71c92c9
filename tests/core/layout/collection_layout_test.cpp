// SPDX-License-Identifier: MIT
// The collection models' rules, one by one, from listpack.c, intset.c, quicklist.c, dict.c and t_hash.c,
// t_set.c, t_zset.c and t_list.c (the real servers are checked in tests/cli/collection_layout_test.cpp):
// entry sizes at each encoding's edges, the limits that choose the encoding, the tables' sizes and their
// rehashing halves, skiplist levels, quicklist nodes, and the layouts that have no collection model.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/collection_layout.h"
#include "layoutlab/layout/layout_registry.h"

#include "layout_fixtures.h"
#include <cmath>

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

using test::jemalloc;
using test::layout;

double requestedOf(const CollectionKeyLayout& h, const std::string& what) {
    for (const auto& part : h.parts)
        if (part.what == what)
            return static_cast<double>(part.requestedBytes) * part.count;
    return 0;
}
double countOf(const CollectionKeyLayout& h, const std::string& what) {
    for (const auto& part : h.parts)
        if (part.what == what)
            return part.count;
    return 0;
}

CollectionShape hash(std::uint64_t fields, std::uint32_t fieldBytes, std::uint32_t valueBytes,
    bool integerValues = false, bool ttl = false, bool oneCommand = true) {
    CollectionShape s;
    s.type = CollectionType::Hash;
    s.entries = fields;
    s.elementBytes = fieldBytes;
    s.valueBytes = valueBytes;
    s.integerValues = integerValues;
    s.hasTtl = ttl;
    s.oneCommand = oneCommand;
    return s;
}
CollectionShape of(CollectionType type, std::uint64_t entries, std::uint32_t elementBytes, bool oneCommand = true,
    bool integerElements = false) {
    CollectionShape s;
    s.type = type;
    s.entries = entries;
    s.elementBytes = elementBytes;
    s.integerElements = integerElements;
    s.oneCommand = oneCommand;
    return s;
}

CollectionKeyLayout describe(
    const std::string& spec, const CollectionShape& shape, const CollectionLimits& limits = {}) {
    auto key = describeCollection(*layout(spec), shape, jemalloc(), limits);
    EXPECT_TRUE(key) << key.error().describe();
    return key ? *key : CollectionKeyLayout {};
}

TEST(HashLayout, ListpackEntriesTakeTheirEncodingAndBacklen) {
    // lpEncodeString: 6-bit length under 64, 12-bit under 4,096, else 32-bit; lpEncodeBacklen: 1 byte up to
    // 127, 2 up to 16,382.
    EXPECT_EQ(listpack::stringEntryBytes(0), 2u);
    EXPECT_EQ(listpack::stringEntryBytes(63), 65u);
    EXPECT_EQ(listpack::stringEntryBytes(64), 66u + 1); // a 12-bit length from 64 bytes
    EXPECT_EQ(listpack::stringEntryBytes(125), 127u + 1); // 127 bytes: the most a 1-byte backlen holds
    EXPECT_EQ(listpack::stringEntryBytes(126), 128u + 2);
    EXPECT_EQ(listpack::stringEntryBytes(4095), 4097u + 2);
    EXPECT_EQ(listpack::stringEntryBytes(4096), 4101u + 2);
    // lpEncodeIntegerGetType: 7-bit unsigned, then 13-, 16-, 24-, 32- and 64-bit signed.
    EXPECT_EQ(listpack::integerEntryBytes(0), 2u);
    EXPECT_EQ(listpack::integerEntryBytes(127), 2u);
    EXPECT_EQ(listpack::integerEntryBytes(128), 3u);
    EXPECT_EQ(listpack::integerEntryBytes(-4096), 3u);
    EXPECT_EQ(listpack::integerEntryBytes(4096), 4u);
    EXPECT_EQ(listpack::integerEntryBytes(32768), 5u);
    EXPECT_EQ(listpack::integerEntryBytes(8388608), 6u);
    EXPECT_EQ(listpack::integerEntryBytes(2147483648LL), 10u);
}

TEST(HashLayout, TheLimitsChooseTheEncodingAsHashTypeTryConversionDoes) {
    const auto at = [&](std::uint64_t entries, std::uint32_t field, std::uint32_t value) {
        return describe("redis-7.0", hash(entries, field, value)).encoding;
    };
    EXPECT_EQ(at(512, 64, 64), "listpack"); // config.c: 512 entries, 64 bytes
    EXPECT_EQ(at(513, 8, 8), "hashtable");
    EXPECT_EQ(at(1, 65, 8), "hashtable");
    EXPECT_EQ(at(1, 8, 65), "hashtable");
    CollectionLimits limits;
    limits.hashMaxListpackEntries = 128;
    const auto custom = describe("redis-7.0", hash(129, 8, 8), limits);
    EXPECT_EQ(custom.encoding, "hashtable");
    EXPECT_NE(custom.why.find("129 fields > hash-max-listpack-entries 128"), std::string::npos) << custom.why;
}

TEST(HashLayout, AListpackIsItsEntriesBetweenHeaderAndEnd) {
    EXPECT_EQ(requestedOf(describe("redis-7.0", hash(3, 8, 20)), "listpack"), 6 + 3 * (10 + 22) + 1);
    // 999: a 13-bit integer and its backlen
    EXPECT_EQ(requestedOf(describe("redis-7.0", hash(2, 8, 3, true)), "listpack"), 6 + 2 * (10 + 3) + 1);
}

TEST(HashLayout, ATableHasAPowerOfTwoBucketsAndKeepsAnOldHalfWhileRehashing) {
    // 513 fields in one HSET: sized at once, 1,024 buckets, nothing rehashing.
    const auto once = describe("redis-7.0", hash(513, 8, 8));
    EXPECT_EQ(requestedOf(once, "buckets"), 1024 * 8);
    EXPECT_EQ(requestedOf(once, "buckets being rehashed"), 0);
    EXPECT_EQ(requestedOf(once, "entries"), 513 * 24);
    EXPECT_EQ(requestedOf(once, "fields"), 513 * 10);
    // 1,100 fields one per HSET: grown at the 1,025th to 2,048; 75 inserts after it move fewer buckets than
    // the old half's ~647 non-empty ones.
    const auto grown = describe("redis-7.0", hash(1100, 8, 8, false, false, false));
    EXPECT_EQ(requestedOf(grown, "buckets"), 2048 * 8);
    EXPECT_EQ(requestedOf(grown, "buckets being rehashed"), 1024 * 8);
    // 100 long values one per HSET: grown to 128 at the 65th; 35 inserts after it. Redis 7.0 looks each
    // field up before adding it (70 steps, past the old half's ~40 non-empty buckets); 7.2 does not: its old
    // half is still there unless its 35 steps met long runs of empty buckets (a chance of a few in a hundred).
    const auto longValues = hash(100, 8, 200, false, false, false);
    EXPECT_EQ(requestedOf(describe("redis-7.0", longValues), "buckets being rehashed"), 0);
    EXPECT_GT(requestedOf(describe("redis-7.2", longValues), "buckets being rehashed"), 0.9 * 64 * 8);
    EXPECT_LT(requestedOf(describe("redis-7.2", longValues), "buckets being rehashed"), 64 * 8);
}

TEST(HashLayout, TheKeysOwnAllocationsAreTheLayouts) {
    const auto redis = describe("redis-7.0", hash(1, 8, 8, false, true));
    EXPECT_EQ(requestedOf(redis, "keyspace entry"), 24);
    EXPECT_EQ(requestedOf(redis, "key"), 18); // sdsdup: a type-5 header
    EXPECT_EQ(requestedOf(redis, "expire entry"), 24);
    // The key embedded as a client sent it (type 8), or as a file's loader makes it (the smallest).
    EXPECT_EQ(requestedOf(describe("valkey-8.0", hash(1, 8, 8)), "keyspace entry"), 17 + 20);
    EXPECT_EQ(requestedOf(describe("valkey-8.0:key-header=smallest", hash(1, 8, 8)), "keyspace entry"), 17 + 18);
}

TEST(HashLayout, ValkeyTablesCarryTheHashTypesMetadata) {
    // hashtable.c struct hashtable (72 bytes; 80 in 9.1) and server.c hashHashtableTypeMetadataSize (8, 9.0 on).
    EXPECT_EQ(requestedOf(describe("valkey-8.1", hash(600, 8, 8)), "hashtable"), 72);
    EXPECT_EQ(requestedOf(describe("valkey-9.0", hash(600, 8, 8)), "hashtable"), 80);
    EXPECT_EQ(requestedOf(describe("valkey-9.1", hash(600, 8, 8)), "hashtable"), 88);
}

TEST(SetLayout, IntegerMembersAreAnIntsetOfTheLargestsWidth) {
    // intset.c: an 8-byte header and 2, 4 or 8 bytes per member, by the largest (_intsetValueEncoding).
    for (const char* spec : { "redis-7.0", "redis-7.2", "valkey-8.0", "valkey-9.1" }) {
        const auto small = describe(spec, of(CollectionType::Set, 100, 3, true, true));
        EXPECT_EQ(small.encoding, "intset") << spec;
        EXPECT_EQ(requestedOf(small, "intset"), 8 + 100 * 2) << spec;
    }
    EXPECT_EQ(requestedOf(describe("redis-7.2", of(CollectionType::Set, 10, 5, true, true)), "intset"), 8 + 10 * 4);
    EXPECT_EQ(requestedOf(describe("redis-7.2", of(CollectionType::Set, 10, 10, true, true)), "intset"), 8 + 10 * 8);
    // Past set-max-intset-entries (512): a table sized when the 513th converted it (maybeConvertIntset), on
    // every engine when added one by one; Redis 7.2 sizes one SADD's at once (setTypeCreate's hint).
    const auto converted = describe("redis-7.2", of(CollectionType::Set, 600, 4, false, true));
    EXPECT_EQ(converted.encoding, "hashtable");
    EXPECT_EQ(requestedOf(converted, "buckets"), 1024 * 8);
    EXPECT_EQ(requestedOf(describe("redis-7.2", of(CollectionType::Set, 1100, 4, true, true)), "buckets"), 2048 * 8);
}

TEST(SetLayout, StringMembersAreAListpackOnRedis72AndValkeyAndATableOnRedis70) {
    const auto small = describe("redis-7.2", of(CollectionType::Set, 100, 10));
    EXPECT_EQ(small.encoding, "listpack");
    EXPECT_EQ(requestedOf(small, "listpack"), 7 + 100 * 12);
    // Redis 7.0: a dict grown from 4 buckets, a 24-byte entry and a member sds each.
    const auto redis70 = describe("redis-7.0", of(CollectionType::Set, 100, 10));
    EXPECT_EQ(redis70.encoding, "hashtable");
    EXPECT_EQ(requestedOf(redis70, "entries"), 100 * 24);
    EXPECT_EQ(requestedOf(redis70, "members"), 100 * 12);
    // One past set-max-listpack-entries (128) one by one: expanded for 129 (256 buckets).
    EXPECT_EQ(requestedOf(describe("valkey-8.0", of(CollectionType::Set, 129, 10, false)), "buckets"), 256 * 8);
    // A member past set-max-listpack-value (64): a table from the first.
    EXPECT_EQ(describe("redis-7.2", of(CollectionType::Set, 3, 65)).encoding, "hashtable");
}

TEST(SetLayout, NoValueDictsGiveEntriesOnlyToMembersSharingABucket) {
    // 1,000 members in 1,024 buckets at random: ~636 buckets occupied, one member each held by its bucket.
    const auto set = describe("redis-7.2", of(CollectionType::Set, 1000, 10));
    const double occupied = 1024 * (1 - std::pow(1 - 1.0 / 1024, 1000));
    EXPECT_NEAR(countOf(set, "entries (members sharing a bucket)"), 1000 - occupied, 1e-6);
    EXPECT_EQ(requestedOf(set, "entries"), 0);
    // Rehashing (1,100 one by one: grown to 2,048 at the 1,025th): a moved bucket's members share its two
    // new buckets, so more of them need entries than at random; more still on Valkey 8.0, whose adds each
    // rehash their own bucket first and join its members. Measured: Redis 7.2.6 ~364, Valkey 8.0.1 ~388.
    const double redis72 = countOf(
        describe("redis-7.2", of(CollectionType::Set, 1100, 10, false)), "entries (members sharing a bucket)");
    const double valkey80 = countOf(
        describe("valkey-8.0", of(CollectionType::Set, 1100, 10, false)), "entries (members sharing a bucket)");
    EXPECT_NEAR(redis72, 364, 6);
    EXPECT_NEAR(valkey80, 388, 6);
    // Valkey 8.1 and later: the members' sds in the buckets, no entries.
    const auto valkey = describe("valkey-9.1", of(CollectionType::Set, 1000, 10));
    EXPECT_EQ(requestedOf(valkey, "hashtable"), 80);
    EXPECT_EQ(countOf(valkey, "members"), 1000);
    EXPECT_EQ(countOf(valkey, "entries (members sharing a bucket)"), 0);
}

TEST(SortedSetLayout, AListpackHoldsEachMemberThenItsScore) {
    CollectionShape shape = of(CollectionType::SortedSet, 10, 8);
    shape.valueBytes = 3; // "1.5"
    EXPECT_EQ(requestedOf(describe("redis-7.2", shape), "listpack"), 7 + 10 * (10 + 5));
    shape.integerValues = true; // 999: stored as an integer
    EXPECT_EQ(requestedOf(describe("redis-7.2", shape), "listpack"), 7 + 10 * (10 + 3));
}

TEST(SortedSetLayout, ASkiplistHasANodePerMemberAtRandomLevels) {
    CollectionShape shape = of(CollectionType::SortedSet, 1000, 10);
    shape.valueBytes = 10;
    shape.integerValues = true;
    for (const char* spec : { "redis-7.0", "valkey-8.0", "valkey-9.0", "valkey-9.1" }) {
        const auto zset = describe(spec, shape);
        EXPECT_EQ(zset.encoding, "skiplist") << spec;
        double nodes = 0;
        for (const auto& part : zset.parts)
            if (part.what.starts_with("skiplist nodes"))
                nodes += part.count;
        EXPECT_NEAR(nodes, 1000, 1e-6) << spec;
        EXPECT_NEAR(countOf(zset, "skiplist nodes (level 1)"), 750, 1e-9) << spec;
        EXPECT_NEAR(countOf(zset, "skiplist nodes (level 2)"), 187.5, 1e-9) << spec;
        // One ZADD: expanded for 1,000 (dict: 1,024 buckets of 8 bytes; hashtable.c: 256 of 64, 7 slots each).
        EXPECT_EQ(requestedOf(zset, "buckets"), std::string(spec).starts_with("valkey-9") ? 256 * 64 : 1024 * 8)
            << spec;
    }
    // Before 9.1 a node is {ele, score, backward} and its levels; 9.1 embeds the member after them.
    EXPECT_EQ(requestedOf(describe("valkey-9.0", shape), "skiplist nodes (level 1)") / 750, 24 + 16);
    EXPECT_EQ(requestedOf(describe("valkey-9.1", shape), "skiplist nodes (level 1)") / 750, 32 + 1 + 12);
    EXPECT_EQ(requestedOf(describe("valkey-9.1", shape), "members"), 0);
    EXPECT_EQ(requestedOf(describe("redis-7.0", shape), "entries"), 1000 * 24);
}

TEST(ListLayout, ASmallListIsAListpackOnRedis72AndAQuicklistOnRedis70) {
    const auto small = describe("redis-7.2", of(CollectionType::List, 100, 10));
    EXPECT_EQ(small.encoding, "listpack");
    EXPECT_EQ(requestedOf(small, "listpack"), 7 + 100 * 12);
    const auto redis70 = describe("redis-7.0", of(CollectionType::List, 100, 10));
    EXPECT_EQ(redis70.encoding, "quicklist");
    EXPECT_EQ(requestedOf(redis70, "quicklist"), 40);
    EXPECT_EQ(countOf(redis70, "quicklist nodes"), 1);
}

TEST(ListLayout, QuicklistNodesFillTo8KiBLessTheEstimatesOverhead) {
    // 10-byte elements (12-byte entries): a node takes a push while 7 + 12c + 10 + 8 <= 8192, so 681 of them;
    // the listpack a list pushed one by one becomes its first node at 7 + 12k + 10 <= 8192: 682.
    const auto onePush = describe("valkey-9.1", of(CollectionType::List, 2000, 10));
    EXPECT_EQ(onePush.encoding, "quicklist");
    EXPECT_EQ(countOf(onePush, "quicklist nodes"), 3);
    EXPECT_EQ(countOf(onePush, "listpacks (681 elements)"), 2);
    EXPECT_EQ(requestedOf(onePush, "listpack (last node, 638 elements)"), 7 + 638 * 12);
    const auto oneByOne = describe("valkey-9.1", of(CollectionType::List, 2000, 10, false));
    EXPECT_EQ(requestedOf(oneByOne, "listpack (first node, the list's listpack)"), 7 + 682 * 12);
    EXPECT_EQ(countOf(oneByOne, "listpacks (681 elements)"), 1);
    // One RPUSH converts on its elements' lengths, not their entries: 800 of 10 bytes stay one listpack of
    // 9,607 bytes, past the limit.
    EXPECT_EQ(describe("redis-7.2", of(CollectionType::List, 800, 10)).encoding, "listpack");
    // An element past the limit is a node of its own.
    EXPECT_EQ(countOf(describe("redis-7.2", of(CollectionType::List, 3, 9000)), "quicklist nodes"), 3);
}

TEST(CollectionModel, EveryLimitIsSetAndReadByItsEngineName) {
    for (const auto type :
        { CollectionType::Hash, CollectionType::Set, CollectionType::SortedSet, CollectionType::List })
        for (std::string_view name : collectionLimitNames(type)) {
            CollectionLimits limits;
            ASSERT_TRUE(setCollectionLimit(limits, name, 7)) << name;
            EXPECT_EQ(collectionLimit(limits, name), 7) << name;
        }
    CollectionLimits limits;
    EXPECT_TRUE(setCollectionLimit(limits, "list-max-listpack-size", -3));
    EXPECT_EQ(limits.listMaxListpackSize, -3);
    EXPECT_EQ(entriesLimitName(CollectionType::Set, true), "set-max-intset-entries");
    EXPECT_EQ(entriesLimitName(CollectionType::Set), "set-max-listpack-entries");
    EXPECT_FALSE(setCollectionLimit(limits, "set-max-listpack-size", 1));
}

TEST(CollectionModel, LayoutsWithoutACollectionModelSayWhichHave) {
    for (const auto type :
        { CollectionType::Hash, CollectionType::Set, CollectionType::SortedSet, CollectionType::List }) {
        auto key = describeCollection(*layout("memcached-1.6"), of(type, 1, 8), jemalloc());
        ASSERT_FALSE(key);
        EXPECT_NE(
            key.error().message.find("no " + std::string(collectionTypeName(type)) + " model"), std::string::npos);
        EXPECT_NE(key.error().message.find("redis-7.2"), std::string::npos);
    }
    auto empty = describeCollection(*layout("redis-7.0"), of(CollectionType::Set, 0, 8), jemalloc());
    ASSERT_FALSE(empty);
    EXPECT_NE(empty.error().message.find("at least one entry"), std::string::npos);
}

} // namespace
