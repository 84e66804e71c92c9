// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/sim/index_table_model.h"

#include <gtest/gtest.h>

using namespace layoutlab;

namespace {

IndexFootprint afterInserts(IndexKind kind, std::uint64_t n, std::uint64_t extraLookups = 0, bool settle = false) {
    IndexTableModel table(kind);
    for (std::uint64_t i = 0; i < n; ++i)
        table.insert();
    for (std::uint64_t i = 0; i < extraLookups; ++i)
        table.lookup();
    if (settle)
        table.settle();
    return table.footprint(JemallocModel(SizeClassParams { 3, 12 }));
}

TEST(IndexTableModel, ValkeyAt200000KeysMatchesTheReference) {
    // LAYOUTS-valkey-redis.md §3: 32768 buckets (2 MiB), fill 87.2%, E[child buckets] about 8998.
    const auto f = afterInserts(IndexKind::ValkeyHashtable, 200000);
    EXPECT_FALSE(f.rehashing);
    EXPECT_EQ(f.buckets, 32768u);
    EXPECT_NEAR(static_cast<double>(f.childBuckets), 8998, 5);
    EXPECT_NEAR(static_cast<double>(f.usableBytes) / 200000.0, 13.37, 0.01);
}

TEST(IndexTableModel, ValkeyGrowsAt114689Keys) {
    // §9: Valkey grows from 16384 to 32768 buckets at 114689 keys, then rehashes one bucket per access.
    auto before = afterInserts(IndexKind::ValkeyHashtable, 114688);
    EXPECT_EQ(before.buckets, 16384u);
    auto at = afterInserts(IndexKind::ValkeyHashtable, 114689);
    EXPECT_TRUE(at.rehashing);
    EXPECT_EQ(at.buckets, 16384u + 32768u);
    auto done = afterInserts(IndexKind::ValkeyHashtable, 114689, 16384);
    EXPECT_FALSE(done.rehashing);
    EXPECT_EQ(done.buckets, 32768u);
}

TEST(IndexTableModel, RedisDictAt200000Keys) {
    // §5: 262144 slots of 8 bytes: 10.49 B/key at n = 200000; growth at 131073.
    // Loading 200000 keys leaves the dict rehashing from 131072 to 262144; cron finishes it when idle.
    EXPECT_TRUE(afterInserts(IndexKind::RedisDict, 200000).rehashing);
    const auto f = afterInserts(IndexKind::RedisDict, 200000, 0, true);
    EXPECT_FALSE(f.rehashing);
    EXPECT_EQ(f.buckets, 262144u);
    EXPECT_NEAR(static_cast<double>(f.usableBytes) / 200000.0, 10.49, 0.01);
    EXPECT_EQ(afterInserts(IndexKind::RedisDict, 131072).buckets, 131072u);
}

TEST(IndexTableModel, MemcachedAssocStartsAt2To16AndDoubles) {
    // assoc.c: hashpower 16 (512 KiB), expand when items > 1.5 x buckets; LAYOUTS-memcached §4.
    EXPECT_EQ(afterInserts(IndexKind::MemcachedAssoc, 20000).usableBytes, 524288u);
    EXPECT_EQ(afterInserts(IndexKind::MemcachedAssoc, 98304).buckets, 65536u);
    EXPECT_EQ(afterInserts(IndexKind::MemcachedAssoc, 98305).buckets, 131072u);
}

TEST(IndexTableModel, TablesShrinkAfterDeletes) {
    IndexTableModel valkey(IndexKind::ValkeyHashtable);
    IndexTableModel redis(IndexKind::RedisDict);
    for (int i = 0; i < 100000; ++i) {
        valkey.insert();
        redis.insert();
    }
    for (int i = 0; i < 99000; ++i) {
        valkey.erase();
        redis.erase();
    }
    valkey.settle();
    redis.settle();
    const JemallocModel alloc(SizeClassParams { 3, 12 });
    EXPECT_EQ(valkey.footprint(alloc).buckets, 256u); // nextBucketExp(1000): ceil(1000 * 5 / 32) -> 256
    EXPECT_EQ(redis.footprint(alloc).buckets, 1024u); // dictResize(1000) -> 1024
    EXPECT_EQ(valkey.entries(), 1000u);
}

TEST(IndexTableModel, ChildBucketEstimate) {
    EXPECT_DOUBLE_EQ(IndexTableModel::expectedChildBuckets(0, 10), 0.0);
    EXPECT_LT(IndexTableModel::expectedChildBuckets(1000, 1000), 1.0); // lambda 1: P(m > 7) ~ 1e-5
    EXPECT_NEAR(IndexTableModel::expectedChildBuckets(200000, 32768), 8998, 5);
}

} // namespace
