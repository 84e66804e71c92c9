// SPDX-License-Identifier: MIT
// The keys as the servers' eviction samples them (sim/sampled_key_table.h): dict.c's chains (newest at the
// head, a chain read whole with reservoir sampling past the count) and hashtable.c's buckets (first free
// position, child buckets, holes filled from the chain's last bucket), in the order each returns them.
#include "layoutlab/sim/sampled_key_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <vector>

using namespace layoutlab;

namespace {

std::vector<std::uint32_t> sampled(SampledKeyTable& table, std::size_t count, std::uint64_t seed = 1) {
    Random random(seed);
    std::vector<std::uint32_t> out(count);
    out.resize(table.sample(random, out));
    return out;
}

TEST(SampledKeyTable, ADictChainStartsWithItsNewestKey) {
    // One bucket: every walk reads the one chain, newest first (dict.c dictAddRaw inserts at the head).
    SampledKeyTable table(IndexKind::RedisDict, 7);
    table.resize(1);
    for (std::uint32_t k : { 10u, 11u, 12u })
        table.insert(k);
    EXPECT_EQ(sampled(table, 5), (std::vector<std::uint32_t> { 12, 11, 10 }));
    table.erase(11);
    EXPECT_EQ(sampled(table, 5), (std::vector<std::uint32_t> { 12, 10 }));
    table.erase(99); // not there: nothing changes
    EXPECT_EQ(table.size(), 2u);
}

TEST(SampledKeyTable, ADictChainLongerThanTheCountIsSampledEvenly) {
    // Past `count`, each later entry replaces a random one (reservoir sampling): over many walks every key
    // of a chain of 8 comes back in a sample of 2 about a quarter of the time, the oldest included.
    SampledKeyTable table(IndexKind::RedisDict, 7);
    table.resize(1);
    for (std::uint32_t k = 0; k < 8; ++k)
        table.insert(k);
    std::array<int, 8> seen {};
    Random random(3);
    constexpr int kWalks = 40000;
    for (int w = 0; w < kWalks; ++w) {
        std::array<std::uint32_t, 2> out {};
        ASSERT_EQ(table.sample(random, out), 2u);
        ASSERT_NE(out[0], out[1]);
        ++seen[out[0]];
        ++seen[out[1]];
    }
    for (int count : seen)
        EXPECT_NEAR(count / double(kWalks), 0.25, 0.02);
}

TEST(SampledKeyTable, AHashtableFillsPositionsThenChainsAChild) {
    // hashtable.c: seven positions; the eighth key makes the bucket chained, its last entry moving into
    // the child, the new key after it. The scan returns positions in order along the chain.
    SampledKeyTable table(IndexKind::ValkeyHashtable, 7);
    table.resize(1);
    for (std::uint32_t k = 0; k < 8; ++k)
        table.insert(k);
    EXPECT_EQ(sampled(table, 8), (std::vector<std::uint32_t> { 0, 1, 2, 3, 4, 5, 6, 7 }));
    // A hole in a chained bucket is filled from the chain's last bucket; the child, left with one entry,
    // is freed and its entry takes the position the child's pointer had.
    table.erase(2);
    EXPECT_EQ(sampled(table, 7), (std::vector<std::uint32_t> { 0, 1, 6, 3, 4, 5, 7 }));
    // A new key takes the first free position: none in a full unchained bucket, so a child again.
    table.insert(20);
    EXPECT_EQ(sampled(table, 8), (std::vector<std::uint32_t> { 0, 1, 6, 3, 4, 5, 7, 20 }));
}

TEST(SampledKeyTable, AResizeKeepsEveryKeyAndSamplesAreDistinctLiveKeys) {
    for (IndexKind kind : { IndexKind::RedisDict, IndexKind::ValkeyHashtable }) {
        SampledKeyTable table(kind, 11);
        table.resize(4);
        std::set<std::uint32_t> live;
        for (std::uint32_t k = 0; k < 300; ++k) {
            table.insert(k);
            live.insert(k);
            if (k % 3 == 0) {
                table.erase(k / 2);
                live.erase(k / 2);
            }
            if (k == 40 || k == 200)
                table.resize(kind == IndexKind::RedisDict ? 256 : 64);
        }
        table.resize(kind == IndexKind::RedisDict ? 128 : 32);
        ASSERT_EQ(table.size(), live.size());
        for (std::uint64_t seed = 1; seed <= 200; ++seed) {
            const auto out = sampled(table, 5, seed);
            ASSERT_EQ(out.size(), 5u);
            std::set<std::uint32_t> distinct(out.begin(), out.end());
            EXPECT_EQ(distinct.size(), out.size());
            for (std::uint32_t k : out)
                EXPECT_TRUE(live.count(k)) << k;
        }
    }
}

TEST(SampledKeyTable, ASampleNeverAsksForMoreKeysThanTheTableHolds) {
    SampledKeyTable table(IndexKind::ValkeyHashtable, 1);
    EXPECT_TRUE(sampled(table, 5).empty());
    table.resize(8);
    table.insert(3);
    table.insert(4);
    const auto out = sampled(table, 5);
    EXPECT_EQ(std::set<std::uint32_t>(out.begin(), out.end()), (std::set<std::uint32_t> { 3, 4 }));
}

} // namespace

// allkeys-random draws as dict.c dictGetRandomKey does: a random non-empty bucket, then a random key of its
// chain, so a key's share is 1 / (non-empty buckets x its chain's length), not 1 / keys. The buckets are the
// table's own placement (a key id's splitmix64 with the seed, sampled_key_table.h), worked out here again.
TEST(SampledKeyTable, ARandomKeyIsDrawnAsTheTablesBucketsLieNotUniformly) {
    constexpr std::uint64_t kSeed = 7;
    constexpr std::uint64_t kBuckets = 8;
    SampledKeyTable table(IndexKind::RedisDict, kSeed);
    table.resize(kBuckets);
    std::map<std::uint64_t, std::vector<std::uint32_t>> chains;
    for (std::uint32_t k = 0; k < 20; ++k) {
        table.insert(k);
        std::uint64_t state = kSeed ^ (std::uint64_t { k } * 0x9E3779B97F4A7C15ull);
        chains[Random::splitmix64(state) & (kBuckets - 1)].push_back(k);
    }
    std::map<std::uint32_t, int> drawn;
    Random random(5);
    constexpr int kDraws = 200000;
    for (int d = 0; d < kDraws; ++d)
        ++drawn[table.randomKey(random)];
    double farthestFromUniform = 0;
    for (const auto& [bucket, keys] : chains) {
        farthestFromUniform
            = std::max(farthestFromUniform, std::abs(1.0 / double(chains.size() * keys.size()) - 1.0 / 20));
        for (const std::uint32_t k : keys)
            EXPECT_NEAR(drawn[k] / double(kDraws), 1.0 / double(chains.size() * keys.size()), 0.006)
                << "key " << k << " in a chain of " << keys.size();
    }
    ASSERT_GT(farthestFromUniform, 0.03) << "the test wants chains whose keys a uniform draw would not match";
    EXPECT_EQ(drawn.count(SampledKeyTable::kNone), 0u);
    SampledKeyTable empty(IndexKind::RedisDict, kSeed);
    EXPECT_EQ(empty.randomKey(random), SampledKeyTable::kNone);

    // hashtable.c hashtableRandomEntry: one of a sample of seven from a random cursor, always a live key.
    SampledKeyTable buckets(IndexKind::ValkeyHashtable, kSeed);
    buckets.resize(4);
    for (std::uint32_t k = 0; k < 30; ++k)
        buckets.insert(k);
    buckets.erase(3);
    std::set<std::uint32_t> seen;
    for (int d = 0; d < 5000; ++d)
        seen.insert(buckets.randomKey(random));
    EXPECT_EQ(seen.size(), 29u);
    EXPECT_EQ(seen.count(3), 0u);
}
