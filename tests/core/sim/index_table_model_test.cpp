// SPDX-License-Identifier: MIT
#include "layoutlab/alloc/jemalloc_model.h"
#include "layoutlab/sim/index_table_model.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

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

// The cron grows a Valkey table its inserts left at exactly its limit, which no insert would grow (Valkey 9.1.0:
// DEBUG HTSTATS 0 gave 7,168 slots after 7,168 SETs, 14,336 a cron tick later; 7,167 keys stay in 7,168 slots).
TEST(IndexTableModel, ValkeysCronGrowsATableLeftAtItsLimit) {
    EXPECT_EQ(afterInserts(IndexKind::ValkeyHashtable, 7168).buckets, 1024u);
    EXPECT_EQ(afterInserts(IndexKind::ValkeyHashtable, 7168, 0, true).buckets, 2048u);
    EXPECT_EQ(afterInserts(IndexKind::ValkeyHashtable, 7167, 0, true).buckets, 1024u);
    // Valkey 8.0's dicts when exactly full (dictExpandIfNeeded: used >= size); Redis's cron only shrinks.
    EXPECT_EQ(afterInserts(IndexKind::ValkeyDict, 8192, 0, true).buckets, 16384u);
    EXPECT_EQ(afterInserts(IndexKind::RedisDict, 8192, 0, true).buckets, 8192u);
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

namespace {
// Valkey's hashtable.c shrink, entry by entry: `entries` placed at random in `buckets` buckets, then `ops`
// ('D' a delete of a random entry, 'L' a lookup), each a find first (rehashStepOnReadIfNeeded ->
// rehashStepShrink: up to 10 empty buckets skipped, then one non-empty bucket moved; rehashStepFinalize ends
// the rehash once the old table holds nothing). True when the old table is still held after them.
bool engineStillRehashing(std::uint64_t buckets, std::uint64_t entries, std::string_view ops, std::mt19937_64& random) {
    std::vector<std::uint32_t> inBucket(buckets, 0);
    std::vector<std::uint64_t> oldEntries; // the bucket of each entry still in the old table
    for (std::uint64_t e = 0; e < entries; ++e) {
        oldEntries.push_back(random() % buckets);
        ++inBucket[oldEntries.back()];
    }
    std::uint64_t moved = 0, index = 0;
    bool rehashing = true;
    auto finalize = [&] { // rehashStepFinalize
        ++index;
        if (oldEntries.empty())
            rehashing = false;
    };
    auto step = [&] {
        for (int emptyVisits = 10; rehashing && inBucket[index] == 0;) {
            finalize();
            if (--emptyVisits == 0)
                return;
        }
        if (!rehashing)
            return;
        moved += inBucket[index];
        std::erase(oldEntries, index);
        inBucket[index] = 0;
        finalize();
    };
    for (const char op : ops) {
        step();
        if (op == 'D') { // hashtablePop: the entry leaves whichever table holds it; nothing more
            const std::uint64_t pick = random() % (oldEntries.size() + moved);
            if (pick < oldEntries.size()) {
                --inBucket[oldEntries[pick]];
                oldEntries.erase(oldEntries.begin() + static_cast<std::ptrdiff_t>(pick));
            } else {
                --moved;
            }
        }
    }
    return rehashing;
}

// Valkey 9.1's hash-field table of 2,000 fields in 512 buckets, deleted to 465 (13% of its slots): it starts
// shrinking to 128, following the spread of its rehash as a collection's table does.
IndexTableModel tableShrinkingAt465() {
    IndexParams params = engineIndexParams(IndexKind::ValkeyHashtable);
    params.shrinkStepSkipsEmpty = true;
    IndexTableModel table(IndexKind::ValkeyHashtable, params);
    table.setFollowsRehashSpread(true);
    table.expand(2000);
    for (int i = 0; i < 2000; ++i)
        table.insert();
    while (table.targetBuckets() == 0)
        table.erase();
    return table;
}
} // namespace

TEST(IndexTableModel, AShrinksOldArrayIsHeldAsOftenAsTheEnginesRandomStepsLeaveIt) {
    // Valkey 9.1's hash-field tables: 2,000 fields in 512 buckets, deleted to 465 (13% of the slots) and the
    // table shrinks to 128; then two deletes for each lookup. Where the engine's rehash stands after a
    // number of them depends on how its steps met runs of empty buckets (the hash seed's doing): the
    // model's chance that the old array is still held follows the engine's over many seeds, before and
    // after its own mean rehash ends.
    const JemallocModel allocator(SizeClassParams { 3, 12 });
    std::mt19937_64 random(7);
    for (const std::size_t count : { 200u, 250u, 262u, 268u, 274u, 285u, 320u }) {
        std::string ops;
        for (std::size_t i = 0; i < count; ++i)
            ops += i % 3 == 2 ? 'L' : 'D';
        IndexTableModel table = tableShrinkingAt465();
        ASSERT_EQ(table.entries(), 465u);
        ASSERT_EQ(table.buckets(), 512u);
        for (const char op : ops)
            op == 'D' ? table.erase() : table.lookup();
        const IndexFootprint f = table.footprint(allocator);
        const double modelled = f.rehashing ? f.oldArrayHeld : f.residualArrayHeld;
        constexpr int kRuns = 2000;
        int held = 0;
        for (int run = 0; run < kRuns; ++run)
            held += engineStillRehashing(512, 465, ops, random) ? 1 : 0;
        const double engine = static_cast<double>(held) / kRuns;
        EXPECT_NEAR(modelled, engine, 0.04) << count << " operations after the shrink";
        // docs/validation.md quotes these.
        std::printf("%zu operations after the shrink: old array held with chance %.3f (engine's steps) %.3f (model)\n",
            count, engine, modelled);
    }
}

TEST(IndexTableModel, TheCronEndsWhatARehashLeftInDoubt) {
    IndexTableModel table = tableShrinkingAt465();
    while (table.targetBuckets() != 0)
        table.lookup();
    const JemallocModel allocator(SizeClassParams { 3, 12 });
    EXPECT_GT(table.footprint(allocator).residualArrayHeld, 0.2); // just ended in the mean: a fair chance
    for (int i = 0; i < 40; ++i)
        table.lookup();
    EXPECT_EQ(table.footprint(allocator).residualArrayHeld, 0); // forty steps later, none
    table.erase();
    table.settle();
    EXPECT_EQ(table.footprint(allocator).residualArrayHeld, 0);
}

// Valkey 8.0's cron doubles a table that is exactly full (kvstoreTryResizeDicts -> dictExpandIfNeeded), but
// under a budget the server refuses the array (dictTypeResizeAllowed): the cron then does nothing, and the
// settle that follows it ends with the table as it was.
TEST(IndexTableModel, AFullTableTheBudgetWillNotGrowSettlesAsItIs) {
    struct Refusing : IndexGrowthGate {
        bool allowsAllocation(std::uint64_t) override { return false; }
    } refusing;
    IndexTableModel table(IndexKind::ValkeyDict);
    for (int i = 0; i < 16; ++i)
        table.insert();
    while (table.targetBuckets() != 0)
        table.lookup();
    ASSERT_EQ(table.heldBuckets(), 16u) << "16 keys in 16 buckets: exactly full";
    table.setGrowthGate(&refusing);
    table.settle();
    EXPECT_EQ(table.heldBuckets(), 16u);
    table.setGrowthGate(nullptr);
    table.settle();
    EXPECT_EQ(table.heldBuckets(), 32u) << "without a budget, the cron doubles it";
}

// An insert that finds its key there already: on the dict lines it grows a full table first (dict.c dictAddRaw,
// dictFindPositionForInsert: _dictExpandIfNeeded before the search), as the insert of a new key would have; on
// hashtable.c's the find returns before any growth (hashtableFindPositionForInsert), a read step and no more.
TEST(IndexTableModel, AnInsertThatFindsItsKeyGrowsAFullDictOnly) {
    for (const IndexKind kind : { IndexKind::RedisDict, IndexKind::ValkeyDict, IndexKind::ValkeyHashtable }) {
        IndexTableModel table(kind);
        const std::uint64_t full = kind == IndexKind::ValkeyHashtable ? 28 : 8; // 4 buckets of 7; 8 buckets
        for (std::uint64_t i = 0; i < full; ++i)
            table.insert();
        for (int step = 0; step < 64 && table.targetBuckets() != 0; ++step)
            table.lookup(); // the last growth's rehash finished
        const std::uint64_t before = table.buckets();
        ASSERT_EQ(before, kind == IndexKind::ValkeyHashtable ? 4u : 8u);
        table.lookup();
        EXPECT_EQ(table.buckets(), before);
        EXPECT_EQ(table.targetBuckets(), 0u); // a lookup never grows it
        table.findForInsert();
        EXPECT_EQ(table.entries(), full);
        if (kind == IndexKind::ValkeyHashtable) {
            EXPECT_EQ(table.targetBuckets(), 0u);
        } else {
            EXPECT_EQ(table.targetBuckets(), 2 * before); // grown to the next power of two over used + 1
            table.findForInsert(); // a step of the rehash under way, and no second growth
            EXPECT_LE(table.targetBuckets(), 2 * before);
        }
    }
}
