// SPDX-License-Identifier: MIT
// The hash model's rules, one by one, from listpack.c, dict.c and t_hash.c (the real servers are checked in
// tests/cli/hash_layout_test.cpp): entry sizes at each encoding's edges, the limits that choose the
// encoding, the table's size and its rehashing half, and the layouts that have no hash model yet.

#include "layoutlab/alloc/allocator_registry.h"
#include "layoutlab/layout/hash_layout.h"
#include "layoutlab/layout/layout_registry.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

std::uint64_t requestedOf(const HashKeyLayout& h, const std::string& what) {
    for (const auto& part : h.parts)
        if (part.what == what)
            return part.requestedBytes * part.count;
    return 0;
}

const AllocatorModel& jemalloc() {
    static const auto allocator = *parseAllocator("jemalloc:quantum=8,page=4096");
    return *allocator;
}

LayoutPtr layout(const std::string& spec) {
    auto parsed = parseLayout(spec);
    EXPECT_TRUE(parsed) << parsed.error().describe();
    return *parsed;
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
    const auto redis = layout("redis-7.0");
    const auto at = [&](std::uint64_t entries, std::uint32_t field, std::uint32_t value) {
        auto h = describeHash(*redis, { 16, entries, field, value, false, false, true }, jemalloc());
        EXPECT_TRUE(h);
        return h->encoding;
    };
    EXPECT_EQ(at(512, 64, 64), "listpack"); // config.c: 512 entries, 64 bytes
    EXPECT_EQ(at(513, 8, 8), "hashtable");
    EXPECT_EQ(at(1, 65, 8), "hashtable");
    EXPECT_EQ(at(1, 8, 65), "hashtable");
    auto custom = describeHash(*redis, { 16, 129, 8, 8, false, false, true }, jemalloc(), { 128, 64 });
    ASSERT_TRUE(custom);
    EXPECT_EQ(custom->encoding, "hashtable");
    EXPECT_NE(custom->why.find("129 fields > hash-max-listpack-entries 128"), std::string::npos) << custom->why;
}

TEST(HashLayout, AListpackIsItsEntriesBetweenHeaderAndEnd) {
    auto h = describeHash(*layout("redis-7.0"), { 16, 3, 8, 20, false, false, true }, jemalloc());
    ASSERT_TRUE(h);
    EXPECT_EQ(requestedOf(*h, "listpack"), 6 + 3 * (10 + 22) + 1u);
    auto ints = describeHash(*layout("redis-7.0"), { 16, 2, 8, 3, true, false, true }, jemalloc());
    ASSERT_TRUE(ints);
    EXPECT_EQ(requestedOf(*ints, "listpack"), 6 + 2 * (10 + 3) + 1u); // 999: a 13-bit integer and its backlen
}

TEST(HashLayout, ATableHasAPowerOfTwoBucketsAndKeepsAnOldHalfWhileRehashing) {
    const auto redis70 = layout("redis-7.0");
    const auto redis72 = layout("redis-7.0:hset-rehash-steps=1");
    // 513 fields in one HSET: sized at once, 1,024 buckets, nothing rehashing.
    auto once = describeHash(*redis70, { 16, 513, 8, 8, false, false, true }, jemalloc());
    ASSERT_TRUE(once);
    EXPECT_EQ(requestedOf(*once, "buckets"), 1024 * 8u);
    EXPECT_EQ(requestedOf(*once, "buckets being rehashed"), 0u);
    EXPECT_EQ(requestedOf(*once, "entries"), 513 * 24u);
    EXPECT_EQ(requestedOf(*once, "fields"), 513 * 10u);
    // 1,100 fields one per HSET: grown at the 1,025th to 2,048; 75 inserts after it move fewer buckets than
    // the old half's ~647 non-empty ones.
    auto grown = describeHash(*redis70, { 16, 1100, 8, 8, false, false, false }, jemalloc());
    ASSERT_TRUE(grown);
    EXPECT_EQ(requestedOf(*grown, "buckets"), 2048 * 8u);
    EXPECT_EQ(requestedOf(*grown, "buckets being rehashed"), 1024 * 8u);
    // 100 long values one per HSET: grown to 128 at the 65th; 35 inserts after it. Redis 7.0 looks each
    // field up before adding it (70 steps, past the old half's ~40 non-empty buckets); 7.2 does not.
    const HashShape longValues { 16, 100, 8, 200, false, false, false };
    EXPECT_EQ(requestedOf(*describeHash(*redis70, longValues, jemalloc()), "buckets being rehashed"), 0u);
    EXPECT_EQ(requestedOf(*describeHash(*redis72, longValues, jemalloc()), "buckets being rehashed"), 64 * 8u);
}

TEST(HashLayout, TheKeysOwnAllocationsAreTheLayouts) {
    auto redis = describeHash(*layout("redis-7.0"), { 16, 1, 8, 8, false, true, true }, jemalloc());
    ASSERT_TRUE(redis);
    EXPECT_EQ(requestedOf(*redis, "keyspace entry"), 24u);
    EXPECT_EQ(requestedOf(*redis, "key"), 18u); // sdsdup: a type-5 header
    EXPECT_EQ(requestedOf(*redis, "expire entry"), 24u);
    auto valkey = describeHash(*layout("valkey-8.0"), { 16, 1, 8, 8, false, false, true }, jemalloc());
    ASSERT_TRUE(valkey);
    EXPECT_EQ(requestedOf(*valkey, "keyspace entry"), 17 + 20u); // the key embedded as a client sent it
    auto loaded
        = describeHash(*layout("valkey-8.0:key-header=smallest"), { 16, 1, 8, 8, false, false, true }, jemalloc());
    EXPECT_EQ(requestedOf(*loaded, "keyspace entry"), 17 + 18u);
}

TEST(HashLayout, LayoutsWithoutAHashModelSaySo) {
    for (const char* spec : { "memcached-1.6" }) {
        auto h = describeHash(*layout(spec), {}, jemalloc());
        ASSERT_FALSE(h) << spec;
        EXPECT_NE(h.error().message.find("no hash model yet"), std::string::npos);
    }
}

} // namespace
